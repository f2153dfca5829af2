import t from 'tap';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from '../server/fixture.js';

t.test('the main flows by keyboard alone, at 375, 1280 and 1920 px', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  for (const width of [375, 1280, 1920]) {
    const { page, errors } = await watchedPage(browser, { viewport: { width, height: 800 } });
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
    await page.goto(daemon.url);
    await page.waitForSelector('#repos-table tr');

    await page.keyboard.press('/');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'query', `${width}: / focuses the query`);
    await page.keyboard.type('parse_expression');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#results .file');
    t.ok(await fits(), `${width}: the results fit the window`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const chosen = await page.evaluate(() => (document.activeElement as HTMLAnchorElement).href);
    await page.keyboard.press('Enter');
    await page.waitForURL(chosen);
    await page.waitForSelector('#code .line');
    t.ok(await fits(), `${width}: the file view fits the window`);

    await page.keyboard.press('t');
    await page.keyboard.type('guide');
    await page.waitForSelector('#file-finder-results li');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/blob\/docs\/guide\.md$/);
    await page.waitForSelector('#code:has-text("Call parse_expression")');
    t.pass(`${width}: t, a name and Enter open a file`);

    // Tab reaches the blame toggle; Enter turns blame on.
    let focused = '';
    for (let presses = 0; presses < 60 && focused !== 'blame-toggle'; presses++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.id ?? '');
    }
    t.equal(focused, 'blame-toggle', `${width}: Tab reaches Blame`);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#L1 .blame a');
    t.ok(await fits(), `${width}: the blame fits the window`);

    await page.keyboard.press('?');
    t.ok(await page.isVisible('#shortcuts'), `${width}: ? shows the shortcuts`);
    t.same(errors, [], `${width}: no script error`);
    await page.close();
  }
});
