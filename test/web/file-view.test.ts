import t from 'tap';
import path from 'node:path';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

const LINES = 100_000;

t.test('a file of 100,000 lines renders the lines on screen, opens at its anchor, and marks its match there', async (t) => {
  const root = path.join(tempDir(t, 'trawl-file-view-'), 'long');
  const big = Array.from({ length: LINES }, (_, i) => `line ${i + 1} of the long file${i + 1 === 99_000 ? ' needle_99000' : ''}\n`).join('');
  const short = Array.from({ length: 40 }, (_, i) => `int value_${i} = ${i};\n`).join('');
  makeRepository(root, { 'long.txt': big, 'short.c': short });
  const daemon = await startDaemon(t, {
    repos: [{ name: 'example.com/long', path: root, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 800 } });

  // The match's byte range, as a search result's link gives it.
  const start = Buffer.byteLength(big.slice(0, big.indexOf('needle_99000')));
  await page.goto(`${daemon.url}/browse/example.com/long@HEAD/-/blob/long.txt?hl=${start}-${start + 'needle_99000'.length}#L99000`);
  await page.waitForSelector('#L99000.selected');
  const box = (await page.locator('#L99000').boundingBox())!;
  t.ok(box.y >= 0 && box.y + box.height <= 800, `line 99,000 is on screen (y ${Math.round(box.y)})`);
  const rendered = await page.locator('#code .line').count();
  t.ok(rendered > 40 && rendered < 400, `only the lines about the screen are in the page (${rendered} of ${LINES})`);
  t.equal(
    await page.evaluate(() => {
      const ranges = [...(CSS.highlights.get('search-match') ?? [])] as Range[];
      return ranges.map((range) => range.toString()).join();
    }),
    'needle_99000',
    'the match is marked',
  );
  const height = await page.evaluate(() => document.getElementById('code')!.getBoundingClientRect().height);
  t.ok(height >= LINES * 20, 'the view is as tall as every line');

  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForSelector('#L1');
  t.equal(await page.textContent('#L1 .code'), 'line 1 of the long file', 'scrolled to the top, the first lines are rendered');
  t.equal(await page.locator('#L99000').count(), 0, 'and the far ones are gone');

  // A link to another line of the same file: selected and scrolled to without a reload.
  await page.evaluate(() => {
    location.hash = '#L50000-L50002';
  });
  await page.waitForSelector('#L50001.selected');
  t.same(await page.$$eval('.line.selected', (lines) => lines.map((line) => line.id)), ['L50000', 'L50001', 'L50002'], 'a range far away is selected');
  t.match(await page.textContent('.note'), /without syntax highlighting/, 'a file this long is shown as plain text, and says so');

  // A short file renders whole, as before: the browser's find sees every line.
  await page.goto(`${daemon.url}/browse/example.com/long@HEAD/-/blob/short.c#L5`);
  await page.waitForSelector('#L5.selected');
  t.equal(await page.locator('#code .line').count(), 40, 'every line of a short file');
  t.ok(await page.$('#code .hljs-type, #code .hljs-keyword'), 'highlighted');
  t.equal(await page.locator('.note').count(), 0);
  t.same(errors, [], 'no script error');
});
