import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

const ARTIFACTS = path.resolve('test-artifacts');

/** The panel's values and counts, facet by facet. */
const panel = (page: Page) =>
  page.$$eval('#facets .facet', (sections) =>
    Object.fromEntries(
      sections.map((section) => [
        section.getAttribute('data-facet')!,
        Object.fromEntries(
          [...section.querySelectorAll('.facet-value')].map((button) => [
            button.getAttribute('data-value'),
            Number(button.querySelector('.count')!.textContent),
          ]),
        ),
      ]),
    ),
  );
const shownFiles = (page: Page) => page.$$eval('#results .file:not([hidden]) .file-name', (links) => links.map((link) => link.textContent).sort());

t.test("the filter panel counts the results' repositories, languages and directories, and filters them from the URL", async (t) => {
  const root = tempDir(t, 'trawl-facets-');
  const repos = (
    [
      { name: 'example.com/alpha', files: { 'src/a.c': 'int facet_term;\n', 'src/b.py': 'facet_term = 1\n', 'docs/readme.md': 'The facet_term.\n' } },
      { name: 'example.com/beta', files: { 'lib/x.c': 'int facet_term;\n', 'top.go': 'var facet_term int\n' } },
    ] as { name: string; files: Record<string, string> }[]
  ).map(({ name, files }) => {
    const dir = path.join(root, name.split('/')[1]!);
    makeRepository(dir, files);
    return { name, path: dir, public: true };
  });
  const daemon = await startDaemon(t, { repos, auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const api = await (await daemon.post('/api/search', { query: 'facet_term', matches: 100 })).json();
  const byRepository: Record<string, number> = {};
  for (const file of api.files as { repository: string }[]) byRepository[file.repository] = (byRepository[file.repository] ?? 0) + 1;

  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 800 } });
  await page.goto(`${daemon.url}/search?q=facet_term`);
  await page.waitForSelector('#facets .facet-value');
  const counts = await panel(page);
  t.same(counts.repo, byRepository, "the repositories' counts are the API's");
  t.same(counts.lang, { C: 2, Python: 1, Markdown: 1, Go: 1 });
  t.same(counts.dir, { 'src/': 2, 'docs/': 1, 'lib/': 1, '/': 1 });

  await page.click('#facets [data-facet="lang"] [data-value="C"]');
  t.same(await shownFiles(page), ['lib/x.c', 'src/a.c'], 'a language chosen shows its files');
  t.match(await page.textContent('#summary'), /2 shown by the filters/);
  await page.click('#facets [data-facet="repo"] [data-value="example.com/alpha"]');
  t.same(await shownFiles(page), ['src/a.c'], 'a repository too: the files that have both');
  t.match(page.url(), /lang=C/);
  t.match(page.url(), /repo=example\.com%2Falpha/);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'facets.png'), fullPage: true });

  await page.reload();
  await page.waitForSelector('#facets .facet-value');
  t.same(await shownFiles(page), ['src/a.c'], 'the URL restores the filters');
  t.equal(await page.getAttribute('#facets [data-facet="lang"] [data-value="C"]', 'aria-pressed'), 'true');

  await page.click('#facets [data-facet="lang"] [data-value="Python"]');
  t.same(await shownFiles(page), ['src/a.c', 'src/b.py'], 'two values of a facet show the files of either');
  await page.click('#facets [data-facet="repo"] [data-value="example.com/alpha"]');
  await page.click('#facets [data-facet="lang"] [data-value="C"]');
  await page.click('#facets [data-facet="lang"] [data-value="Python"]');
  t.equal((await shownFiles(page)).length, 5, 'nothing chosen, every file');
  t.notMatch(page.url(), /lang=|repo=/, 'and the URL says so');

  await page.setViewportSize({ width: 375, height: 800 });
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'nothing wider than a 375 px screen');
  t.same(errors, [], 'no script error');
});
