import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import path from 'node:path';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

t.test('a file with many matches shows its best chunks, the rest on request; a file collapses', async (t) => {
  const root = path.join(tempDir(t, 'trawl-previews-'), 'previews');
  // Seven chunks in one file, each far from the next, holding 1, 2, 1, 2, 1, 3 and 2 matches; one match in another file.
  const counts = [1, 2, 1, 2, 1, 3, 2];
  const spread = counts.map((count, i) => `${'preview_marker '.repeat(count)}${i}\n${'filler line\n'.repeat(10)}`).join('');
  makeRepository(root, { 'many.txt': spread, 'one.txt': 'preview_marker alone\n' });
  const daemon = await startDaemon(t, {
    repos: [{ name: 'example.com/previews', path: root, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${daemon.url}/search?q=preview_marker`);
  await page.waitForSelector('#results .file');
  // Files arrive as the stream runs: the page is read once it has ended.
  await page.waitForFunction(() => document.querySelector('#stop') === null);
  const many = '#results .file:has(.file-name:text-is("many.txt"))';
  t.same(
    await page.$$eval(`${many} table.chunk tr:has(mark) td.num`, (cells) => cells.map((cell) => Number(cell.textContent))),
    [12, 34, 56],
    'three chunks are shown: the one with most matches, then the first two of the next most, in file order',
  );
  t.equal(await page.textContent(`${many} .show-more`), 'Show 5 more matches in this file');
  t.equal(await page.locator('#results .file:has(.file-name:text-is("one.txt")) .show-more').count(), 0, 'a file with one chunk has no show more');

  await page.click(`${many} .show-more`);
  t.equal(await page.locator(`${many} table.chunk`).count(), 7, 'show more adds the other four');
  t.same(
    await page.$$eval(`${many} table.chunk tr:has(mark) td.num`, (cells) => cells.map((cell) => Number(cell.textContent))),
    [1, 12, 23, 34, 45, 56, 67],
    'every match in file order',
  );

  await page.click(`${many} .collapse`);
  t.equal(await page.getAttribute(`${many} .collapse`, 'aria-expanded'), 'false', 'collapsed');
  t.notOk(await page.isVisible(`${many} table.chunk >> nth=0`), 'its chunks are hidden');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const focused = await page.evaluate(() => (document.activeElement as HTMLAnchorElement).href);
  t.match(focused, /one\.txt/, "the arrows skip a collapsed file's lines");
  await page.click(`${many} .collapse`);
  t.ok(await page.isVisible(`${many} table.chunk >> nth=6`), 'expanded again, all seven are back');
  t.same(errors, [], 'no script error');
});
