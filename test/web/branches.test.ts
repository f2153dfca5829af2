import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { commitAll, git, writeFiles } from '../helpers/git.js';
import { fixtureRepository } from '../server/fixture.js';

t.test('the file and directory views switch between the indexed branches, keeping the path', async (t) => {
  const repo = fixtureRepository(t);
  git(repo.root, 'checkout', '-q', '-b', 'release');
  writeFiles(repo.root, { 'docs/guide.md': '# Guide\n\nOn the release branch.\n', 'docs/release.md': 'Release notes\n' });
  commitAll(repo.root, 'release notes');
  git(repo.root, 'checkout', '-q', 'main');
  const daemon = await startDaemon(t, { repos: [{ ...repo.config, branches: ['release'] }], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${daemon.url}/browse/${repo.config.name}@HEAD/-/blob/docs/guide.md`);
  await page.waitForSelector('#code .line');
  await page.waitForSelector('#branch option[value=release]', { state: 'attached' });
  t.same(
    await page.$$eval('#branch option', (options) => options.map((option) => option.textContent)),
    ['main', 'release'],
    'the indexed branches are offered',
  );
  t.equal(await page.inputValue('#branch'), 'main', 'the default branch is chosen');
  t.notMatch(await page.textContent('#code'), /release branch/);

  await page.selectOption('#branch', 'release');
  await page.waitForSelector('#code:has-text("On the release branch.")');
  t.match(page.url(), /\/browse\/example\.com\/acme\/widgets@release\/-\/blob\/docs\/guide\.md$/, 'the same file on the branch chosen, in the URL');
  t.equal(await page.inputValue('#branch'), 'release');
  t.ok(await page.$('#tree a:text-is("release.md")'), "the tree is the branch's");

  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: daemon.url });
  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
  await page.click('#copy-path');
  await page.waitForSelector('#copy-path:has-text("Copied")');
  t.equal(await clipboard(), 'docs/guide.md', 'Copy path copies the path in the repository');
  await page.click('#copy-link');
  await page.waitForSelector('#copy-link:has-text("Copied")');
  t.equal(await clipboard(), page.url(), "Copy link copies the page's URL, the branch in it");

  await page.click('#crumbs a:text-is("docs")');
  await page.waitForSelector('#listing');
  t.equal(await page.inputValue('#branch'), 'release', 'a directory keeps the branch');
  await page.selectOption('#branch', 'main');
  await page.waitForFunction(() => location.pathname.endsWith('@main/-/tree/docs'));
  await page.waitForSelector('#listing');
  t.notOk(await page.$('#listing a:text-is("release.md")'), "the directory on main lists main's files");
  await page.goBack();
  await page.waitForSelector('#listing a:text-is("release.md")');
  t.pass('and back returns to the release branch');
  t.same(errors, [], 'no script error');
});
