import t from 'tap';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { fuzzyDistance } from '../../src/web/file-finder.js';
import { fixtureRepository } from '../server/fixture.js';

t.test('fuzzy distance: the characters in order, in the file name first, in fewer runs', async (t) => {
  t.equal(fuzzyDistance('src/lexer.c', 'xyz'), undefined, 'characters not there');
  t.equal(fuzzyDistance('src/lexer.c', 'cl'), fuzzyDistance('src/lexer.c', 'cl'), 'the same for the same');
  t.ok(fuzzyDistance('src/lexer.c', 'lex')! < fuzzyDistance('lib/l/e/x.c', 'lex')!, 'one run before three');
  t.ok(fuzzyDistance('src/parser.c', 'par')! < fuzzyDistance('parts/main.c', 'par')!, 'in the file name before in a directory');
});

t.test('go to file, the collapsible tree and the keyboard help, in a real browser', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser);
  await page.goto(`${daemon.url}/browse/example.com/acme/widgets@HEAD/-/blob/src/parser.c`);
  await page.waitForSelector('#code .line');

  await page.keyboard.press('t');
  await page.waitForSelector('#file-finder[open] #file-finder-input');
  await page.keyboard.type('lexc');
  await page.waitForSelector('#file-finder-results li');
  t.equal(await page.textContent('#file-finder-results li[aria-selected="true"]'), 'src/lexer.c', 'the closest file first');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/blob\/src\/lexer\.c$/);
  await page.waitForSelector('#code:has-text("next_token")');
  t.equal(await page.locator('#file-finder').count(), 0, 'the finder is gone');

  await page.click('#go-to-file');
  await page.fill('#file-finder-input', 'gdmd');
  await page.waitForSelector('#file-finder-results li');
  t.same(
    await page.$$eval('#file-finder-results li', (items) => items.map((item) => item.textContent)),
    ['docs/guide.md'],
    'only the paths holding the characters in order',
  );
  t.equal(new URL(page.url()).searchParams.get('find'), 'gdmd', 'what is typed is in the URL');
  await page.reload();
  await page.waitForSelector('#file-finder[open] #file-finder-results li');
  t.equal(await page.inputValue('#file-finder-input'), 'gdmd', 'a reload opens the finder as it was');
  t.equal(await page.textContent('#file-finder-results li'), 'docs/guide.md', 'with its results');
  await page.keyboard.press('Escape');
  await page.waitForURL((url) => !url.searchParams.has('find'));
  t.pass('closing it takes it out of the URL');
  await page.keyboard.press('t');
  await page.waitForSelector('#file-finder[open] #file-finder-input');
  await page.keyboard.type('gdmd');
  await page.waitForSelector('#file-finder-results li');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#file-finder', { state: 'detached' });
  t.pass('Escape closes it');

  const docs = '#tree li.node-tree:has(> a:text-is("docs/"))';
  t.equal(await page.getAttribute(`${docs} > .toggle`, 'aria-expanded'), 'false', 'a directory off the path is closed');
  await page.click(`${docs} > .toggle`);
  await page.waitForSelector(`${docs} > ul a:text-is("guide.md")`);
  t.equal(await page.getAttribute(`${docs} > .toggle`, 'aria-expanded'), 'true', 'its toggle opens it, its entries fetched');
  await page.focus(`${docs} > .toggle`);
  await page.keyboard.press('Enter');
  t.notOk(await page.isVisible(`${docs} > ul`), 'and the keyboard closes it');
  const src = '#tree li.node-tree:has(> a:text-is("src/"))';
  t.equal(await page.getAttribute(`${src} > .toggle`, 'aria-expanded'), 'true', "the file's directory is open");

  await page.locator('body').press('?');
  t.ok(await page.isVisible('#shortcuts'), '? shows the keyboard help');
  t.same(errors, [], 'no script error');
});
