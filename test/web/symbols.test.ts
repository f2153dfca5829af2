import t from 'tap';
import path from 'node:path';
import { launchBrowser, watchedPage, wordPoint } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

t.test('definitions and references fit the screen, list a line once, and a hover shows the definitions', async (t) => {
  const root = path.join(tempDir(t, 'trawl-symbols-'), 'symbols');
  const wide = `/* ${'a long comment that makes the line wide '.repeat(8)} */\n`;
  makeRepository(root, {
    'a.c': `int target_fn(void) { return 1; }\n${wide}`,
    'b.c': `${wide}int use(void) { return target_fn() + target_fn(); }\n`,
  });
  const daemon = await startDaemon(t, { repos: [{ name: 'example.com/symbols', path: root, public: true }], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 800 } });
  await page.goto(`${daemon.url}/browse/example.com/symbols@HEAD/-/blob/b.c`);
  await page.waitForSelector('#L2 .code');

  const word = (await wordPoint(page, 2, 'target_fn'))!;
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
  t.match(page.url(), /\?sym=target_fn$/, 'the name is in the URL');
  await page.reload();
  await page.waitForSelector('#symbols:not([hidden]) h3');
  t.match(await page.textContent('#symbols h2'), 'target_fn', 'a reload opens the same panel');
  t.same(errors, [], 'no script error');
});
