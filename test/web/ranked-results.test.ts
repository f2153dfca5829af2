import t from 'tap';
import type { Route } from 'playwright-core';
import type { SearchResponse } from '../../src/api/types.js';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { routerRepositories } from '../server/fixture.js';

/** The stream's chunk events in reverse order: the parts of a search that finished the other way round. */
async function reversedParts(route: Route): Promise<void> {
  const response = await route.fetch();
  const blocks = (await response.text()).split('\n\n').filter((block) => block !== '');
  const isChunk = (block: string) => block.startsWith('data: {"type":"chunk"');
  const chunks = blocks.filter(isChunk).reverse();
  const body = blocks.map((block) => (isChunk(block) ? chunks.shift()! : block)).join('\n\n') + '\n\n';
  await route.fulfill({ response, body });
}

t.test('results stream into their ranked places: the same files in the same order however the parts arrive', async (t) => {
  // Four repositories over two workers: each search streams two parts, and the page's first 100 matches are cut.
  const daemon = await startDaemon(t, { repos: routerRepositories(t), auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 2 } });
  const api = (await (await daemon.post('/api/search', { query: 'router', matches: 100, contextLines: 1 })).json()) as SearchResponse;
  const expected = api.files.map((file) => `${file.repository} ${file.fileName.text}`);
  t.ok(expected.length > 20 && !api.isSearchExhaustive, `a cut answer of ${expected.length} files`);
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser);
  const shown = async () => {
    await page.waitForSelector('#summary:has-text("matches in")');
    return page.$$eval('#results .file', (items) =>
      items.map((item) => `${item.querySelector('.repo')!.textContent} ${item.querySelector('.file-name')!.textContent}`),
    );
  };
  for (let run = 1; run <= 3; run++) {
    await page.goto(`${daemon.url}/search?q=router`);
    t.same(await shown(), expected, `run ${run}: the files /api/search answers, in its order`);
  }
  await page.route('**/api/stream_search', reversedParts);
  await page.goto(`${daemon.url}/search?q=router`);
  t.same(await shown(), expected, 'the parts in the other order: the same files in the same order');
  t.match(
    await page.textContent('#summary'),
    new RegExp(`^${api.stats.actualMatchCount} matches in ${expected.length} files`),
    'the count /api/search answers',
  );
  t.ok(await page.isVisible('#load-more'), 'and more to load');
  t.same(errors, [], 'no script error');
});
