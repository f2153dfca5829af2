import t from 'tap';
import { launchBrowser, wordPoint } from '../helpers/browser.js';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { LICENSE_ENV, seedUsers } from '../helpers/auth.js';
import { startDaemon } from '../helpers/daemon.js';
import { commitAll, writeFiles } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository, routerRepositories } from '../server/fixture.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

/** A page that records every request it makes and every script error. */
async function openPage(browser: Browser): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, requests, errors };
}

t.test('search, results, file view, tree and symbols in a real browser', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true } });
  const browser = await launchBrowser(t);
  const { page, requests, errors } = await openPage(browser);

  await page.goto(`${daemon.url}/`);
  await page.waitForSelector('#repos-table tbody tr');
  t.match(await page.textContent('#repos'), /example\.com\/acme\/widgets/, 'the home page lists the repositories');

  await page.keyboard.press('/');
  t.equal(await page.evaluate(() => document.activeElement?.id), 'query', '/ focuses the search box');
  await page.keyboard.type('parse_expression');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#summary:has-text("matches")');
  t.match(page.url(), /\/search\?q=parse_expression$/, 'the query is kept in the URL');
  const files = await page.$$eval('#results .file-name', (links) => links.map((link) => link.textContent));
  t.same(new Set(files), new Set(['src/parser.c', 'src/parser.h', 'docs/guide.md', 'README.md']), 'every matching file is listed');
  const marks = await page.$$eval('#results mark', (found) => found.map((mark) => mark.textContent));
  t.ok(marks.length >= 5 && marks.every((mark) => mark === 'parse_expression'), 'matches are highlighted');
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const screenshot = path.join(ARTIFACTS, 'search-results.png');
  await page.screenshot({ path: screenshot, fullPage: true });
  t.same([...fs.readFileSync(screenshot).subarray(1, 4)], [...Buffer.from('PNG')], `screenshot saved to ${screenshot}`);

  await page.keyboard.press('ArrowDown');
  t.match(await page.evaluate(() => (document.activeElement as HTMLAnchorElement).href), /\/-\/blob\//, 'arrows move through the results');

  await page.click('#results .file:has(.file-name:text-is("src/parser.c")) a.ln.result-link >> nth=0');
  await page.waitForSelector('#code .line.selected');
  t.match(
    page.url(),
    /\/browse\/example\.com\/acme\/widgets@HEAD\/-\/blob\/src\/parser\.c\?hl=\d+-\d+(,\d+-\d+)*#L3$/,
    'a result line opens the file view at that line',
  );
  t.same(await page.$$eval('.line.selected', (lines) => lines.map((line) => line.id)), ['L3']);
  t.ok(await page.evaluate(() => (CSS.highlights.get('search-match')?.size ?? 0) >= 1), 'the search matches are highlighted in the file');
  t.ok(await page.$('#code .hljs-keyword'), 'the code is syntax highlighted');
  t.match(await page.textContent('#tree .current'), 'parser.c', 'the tree shows the file');

  await page.click('#tree a:text-is("docs/")');
  await page.waitForSelector('#listing');
  t.same(await page.$$eval('#listing li', (items) => items.map((item) => item.textContent)), ['guide.md'], 'a directory lists its entries');
  await page.click('#listing a:text-is("guide.md")');
  await page.waitForSelector('#code');
  t.match(await page.textContent('#code'), /Call parse_expression to parse/);

  await page.goto(`${daemon.url}/browse/example.com/acme/widgets@HEAD/-/blob/src/parser.c#L7-L9`);
  await page.waitForSelector('#code .line.selected');
  t.same(await page.$$eval('.line.selected', (lines) => lines.map((line) => line.id)), ['L7', 'L8', 'L9'], '#L7-L9 selects a range');
  // Click the middle of the word as a user would: find it in the line's text nodes.
  const word = await wordPoint(page, 8, 'parse_expression');
  t.ok(word, 'the symbol is on line 8');
  await page.mouse.click(word!.x, word!.y);
  await page.waitForSelector('#symbols:not([hidden]) h3');
  const panel = await page.textContent('#symbols');
  t.match(panel, /Definitions \(1\)/, 'a clicked symbol shows its definition');
  t.match(panel, /References \(5\)/, 'and its references');
  t.match(panel, /src\/parser\.c:3/);

  t.same(errors, [], 'no script errors');
  t.same(
    requests.filter((url) => !url.startsWith(daemon.url) && !url.startsWith('data:')),
    [],
    'no request to anything but the daemon',
  );
});

t.test('every webUrl the API returns opens a page showing that file, in a git repository and in a plain directory', async (t) => {
  const repo = fixtureRepository(t);
  const plain = path.join(tempDir(t, 'trawl-plain-'), 'notes');
  writeFiles(plain, {
    'todo.md': '# Todo\n\nparse_expression docs\n',
    'src/notes.c': 'int notes(void) { return 0; }\n',
    'node_modules/skip/x.js': 'skipped\n',
  });
  const daemon = await startDaemon(t, {
    repos: [repo.config, { name: 'local/notes', path: plain, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const body = await (await daemon.post('/api/search', { query: 'file:.', matches: 1000 })).json();
  const results = body.files as { fileName: { text: string }; repository: string; webUrl: string }[];
  t.equal(results.filter((result) => result.repository === repo.config.name).length, 6, 'every file of the fixture');
  t.same(
    results
      .filter((result) => result.repository === 'local/notes')
      .map((result) => result.fileName.text)
      .sort(),
    ['src/notes.c', 'todo.md'],
    'and of the plain directory',
  );
  const browser = await launchBrowser(t);
  const { page, errors } = await openPage(browser);
  for (const result of results) {
    await page.goto(result.webUrl);
    await page.waitForSelector('#crumbs strong');
    t.equal(
      await page.textContent('#crumbs strong'),
      path.basename(result.fileName.text),
      `${result.repository} ${result.fileName.text}: the page names the file`,
    );
    const shown = (await page.$('#code')) ? await page.textContent('#code') : await page.textContent('.binary');
    t.ok(shown && shown.length > 0, `${result.repository} ${result.fileName.text}: the page shows its content`);
  }
  await page.goto(`${daemon.url}/`);
  await page.click('#repos a:text-is("local/notes")');
  await page.waitForSelector('#listing');
  t.same(
    (await page.$$eval('#listing li', (items) => items.map((item) => item.textContent))).sort(),
    ['src/', 'todo.md'],
    "the plain directory's page lists its files, not an error",
  );
  t.same(errors, [], 'no script errors');
});

t.test('a result cut at the match cap offers to load more', async (t) => {
  const repo = fixtureRepository(t);
  writeFiles(repo.root, { 'gen/many.txt': 'needle\n'.repeat(150) });
  commitAll(repo.root, 'many needles');
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const { page } = await openPage(browser);
  await page.goto(`${daemon.url}/search?q=needle`);
  await page.waitForSelector('#load-more');
  t.match(await page.textContent('#summary'), /^100 matches in 1 file .*Results were cut at 100 matches — load more$/);
  await page.click('#load-more');
  await page.waitForSelector('#summary:has-text("150 matches")');
  t.notOk(await page.$('#load-more'), 'all 150 matches: nothing more to load');
  t.equal(await page.$$eval('#results mark', (marks) => marks.length), 150);
});

t.test('narrow screens and instances without anonymous access', async (t) => {
  const repo = fixtureRepository(t);
  let key = '';
  const daemon = await startDaemon(
    t,
    { repos: [{ ...repo.config, public: false }], auth: { anonymousAccess: false }, index: { ctagsCommand: '' } },
    {
      prepare: async (configFile) => void (key = (await seedUsers(configFile, [{ email: 'reader@example.com', role: 'owner' }]))['reader@example.com']!.key),
      env: LICENSE_ENV,
    },
  );
  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 375, height: 700 } });
  await page.goto(`${daemon.url}/search?q=parse_expression`);
  await page.waitForSelector('#auth:not([hidden])');
  t.match(await page.textContent('#auth-message'), /no credential was sent and anonymous access is off/, 'asks for an API key, with the API’s message');
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no horizontal scrolling at 375 px');
  await page.fill('#api-key', key);
  await page.click('#auth-form button');
  await page.waitForSelector('#results mark');
  t.ok(await page.$$eval('#results mark', (marks) => marks.length > 0), 'with the key, the private repository is searched');
  t.ok(await page.isHidden('#auth'), 'the prompt is gone');
});

t.test('where no one can sign in there is no Sign in; a page the app lacks says so, in a page', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const { page, errors } = await openPage(browser);
  await page.goto(`${daemon.url}/`);
  await page.waitForSelector('#repos-table tbody tr');
  t.equal(await page.$('#sign-in-link'), null, 'no member has a password and there is no single sign-on: no Sign in');

  const response = await page.goto(`${daemon.url}/no/such/page`);
  t.equal(response?.status(), 404, 'a 404');
  await page.waitForSelector('#not-found');
  t.match(await page.textContent('#not-found'), /Page not found.*\/no\/such\/page/s, 'the page says what was not found');
  t.equal(await page.title(), 'Page not found — trawl');
  const api = await daemon.fetch('/no/such/page');
  t.equal(api.status, 404);
  t.match(await api.json(), { errorCode: 'NOT_FOUND' }, 'a client that does not ask for HTML still gets the error object');
  t.same(errors, [], 'no script errors');
});

t.test('the same search shows the same files in the same order, a file whose name matches first', async (t) => {
  const repositories = routerRepositories(t);
  const daemon = await startDaemon(t, { repos: repositories, auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 2 } });
  const browser = await launchBrowser(t);
  const { page, errors } = await openPage(browser);
  const shown: string[][] = [];
  for (let i = 0; i < 3; i++) {
    await page.goto(`${daemon.url}/search?q=router`);
    await page.waitForSelector('#summary:has-text("matches")');
    shown.push(
      await page.$$eval('#results .file', (files) =>
        files.map((file) => `${file.querySelector('.repo')!.textContent} ${file.querySelector('.file-name')!.textContent}`),
      ),
    );
  }
  t.ok(shown[0]!.length > 4, `${shown[0]!.length} files`);
  t.same(shown[1], shown[0], 'the second search shows the first one’s files, in its order');
  t.same(shown[2], shown[0], 'and so does the third');
  t.ok(
    shown[0]!.slice(0, 4).every((file) => file.endsWith(' test/Router.js')),
    'the files whose name matches come first',
  );
  t.same(errors, [], 'no script errors');
});
