import t from 'tap';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { git, writeFiles } from '../helpers/git.js';
import { fixtureRepository } from '../server/fixture.js';

t.test('history, commits with their diffs, the latest commit and blame, in a real browser', async (t) => {
  const repo = fixtureRepository(t);
  // 55 more commits by two authors: more than a page of history.
  for (let i = 1; i <= 55; i++) {
    writeFiles(repo.root, { 'log.txt': `entry ${i}\n` });
    const author = i % 2 === 0 ? ['Ada Lovelace', 'ada@example.com'] : ['Bob Builder', 'bob@example.com'];
    git(repo.root, 'add', '-A');
    git(
      repo.root,
      '-c',
      `user.name=${author[0]}`,
      '-c',
      `user.email=${author[1]}`,
      'commit',
      '-q',
      `--author=${author[0]} <${author[1]}>`,
      '-m',
      `change ${i}`,
    );
  }
  const total = Number(git(repo.root, 'rev-list', '--count', 'HEAD').trim());
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 900 } });
  const base = `${daemon.url}/browse/example.com/acme/widgets@HEAD/-`;

  await page.goto(`${base}/commits/`);
  await page.waitForSelector('#commits li');
  t.equal(await page.locator('#commits li').count(), 50, 'a page of 50 commits');
  t.match(await page.textContent('#commits li >> nth=0'), /change 55/, 'newest first');
  await page.click('#older');
  await page.waitForURL(/page=2/);
  await page.waitForSelector('#commits li');
  t.equal(await page.locator('#commits li').count(), total - 50, 'the older ones on the next page');

  await page.goto(`${base}/commits/`);
  await page.fill('#history-filters input[name=author]', 'ada');
  await page.fill('#history-filters input[name=query]', '^change [1-3]\\s*$');
  await page.click('#history-filters button[type=submit]');
  await page.waitForURL(/author=ada/);
  // The unfiltered page stays until the filtered one replaces it: wait for a list without its newest commit.
  await page.waitForFunction(() => {
    const subjects = [...document.querySelectorAll('#commits .commit-subject')].map((link) => link.textContent);
    return subjects.length > 0 && !subjects.includes('change 55');
  });
  t.same(
    await page.$$eval('#commits .commit-subject', (links) => links.map((link) => link.textContent)),
    ['change 2'],
    'filtered by author and message, as git would',
  );

  await page.click('#commits .commit-subject');
  await page.waitForSelector('#diff');
  t.equal(await page.textContent('#commit h2'), 'change 2');
  t.match(await page.textContent('#commit .commit-meta'), /Ada Lovelace <ada@example\.com>/);
  t.same(
    await page.$$eval('#diff tr.add td.code, #diff tr.del td.code', (cells) => cells.map((cell) => cell.textContent)),
    ['-entry 1', '+entry 2'],
    'the diff against its parent',
  );
  await page.click('.commit-parents a');
  await page.waitForSelector('#commit h2:text-is("change 1")');
  t.pass('a parent opens');

  await page.goto(`${base}/blob/docs/guide.md`);
  await page.waitForSelector('#latest-commit .commit-subject');
  t.equal(await page.textContent('#latest-commit .commit-subject'), 'Add the lexer', "the file's latest commit");
  await page.click('#blame-toggle');
  await page.waitForSelector('#L1 .blame a');
  t.equal(await page.textContent('#L1 .blame a'), repo.first.slice(0, 8), 'line 1 is from the first commit');
  t.equal(await page.textContent('#L3 .blame a'), repo.second.slice(0, 8), 'line 3 from the second');
  t.match(page.url(), /\?blame=1$/, 'blame is in the URL');
  await page.click('#L3 .blame a');
  await page.waitForSelector('#commit h2:text-is("Add the lexer")');
  t.pass("a line's commit opens from its blame");
  t.same(errors, [], 'no script error');
});
