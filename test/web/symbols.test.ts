import t from 'tap';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

/** The middle of the first occurrence of `word` in line `line` of the file view, in page coordinates. */
async function wordAt(page: Page, line: number, word: string): Promise<{ x: number; y: number }> {
  const point = await page.evaluate(
    ({ line, word }) => {
      const code = document.querySelector(`#L${line} .code`)!;
      const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(word);
        if (at === -1) continue;
        const range = document.createRange();
        range.setStart(node, at + 2);
        range.setEnd(node, at + 3);
        const box = range.getBoundingClientRect();
        return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      }
      return null;
    },
    { line, word },
  );
  return point!;
}

t.test('definitions and references fit the screen, list a line once, and a hover shows the definitions', async (t) => {
  const root = path.join(tempDir(t, 'trawl-symbols-'), 'symbols');
  const wide = `/* ${'a long comment that makes the line wide '.repeat(8)} */\n`;
  makeRepository(root, {
    'a.c': `int target_fn(void) { return 1; }\n${wide}`,
    'b.c': `${wide}int use(void) { return target_fn() + target_fn(); }\n`,
  });
  const daemon = await startDaemon(t, { repos: [{ name: 'example.com/symbols', path: root, public: true }], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${daemon.url}/browse/example.com/symbols@HEAD/-/blob/b.c`);
  await page.waitForSelector('#L2 .code');

  const word = await wordAt(page, 2, 'target_fn');
  await page.mouse.move(word.x, word.y);
  await page.waitForSelector('#hover-card');
  t.match(await page.textContent('#hover-card'), /target_fn — 1 definition/, 'resting on a name shows its definition');
  t.same(await page.$$eval('#hover-card a', (links) => links.map((link) => link.textContent)), ['a.c:1']);
  const card = (await page.locator('#hover-card').boundingBox())!;
  t.ok(card.x >= 0 && card.x + card.width <= 1280 && card.y + card.height <= 800, 'the card is within the window');

  await page.mouse.click(word.x, word.y);
  await page.waitForSelector('#symbols:not([hidden]) h3');
  t.match(await page.textContent('#symbols'), /References \(3\)/, 'three references');
  t.same(
    await page.$$eval('#symbols section:nth-of-type(2) a', (links) => links.map((link) => link.textContent)),
    ['a.c:1', 'b.c:2'],
    'each line once, though b.c:2 holds two',
  );
  const panel = (await page.locator('#symbols').boundingBox())!;
  t.ok(panel.x + panel.width <= 1280, `the panel fits a 1280 px window beside wide code (its right edge at ${Math.round(panel.x + panel.width)})`);
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 1280), 'the page is no wider than the window');
  t.same(errors, [], 'no script error');
});
