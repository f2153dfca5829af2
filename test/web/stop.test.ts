import t from 'tap';
import type { Route } from 'playwright-core';
import { launchBrowser, watchedPage } from '../helpers/browser.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from '../server/fixture.js';

t.test('a search in progress shows how long it has run, and Stop ends it', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const browser = await launchBrowser(t);
  const { page, errors } = await watchedPage(browser);
  // The search is held before it reaches the daemon, for as long as the test likes: no race with a fast answer.
  const held: Route[] = [];
  await page.route('**/api/stream_search', (route) => void held.push(route));
  const failed = new Promise<string>((resolve) =>
    page.on('requestfailed', (request) => request.url().endsWith('/api/stream_search') && resolve(request.failure()!.errorText)),
  );

  await page.goto(`${daemon.url}/search?q=parse_expression`);
  await page.waitForSelector('#summary #stop');
  await page.waitForFunction(() => /\d+\.\d s/.test(document.querySelector('#summary .elapsed')?.textContent ?? ''));
  t.match(await page.textContent('#summary'), /Searching… \d+\.\d s/, 'the time it has run');
  await page.click('#stop');
  t.match(await failed, /abort/i, 'the request is aborted');
  t.equal(await page.textContent('#summary'), 'Stopped.');
  t.equal(await page.locator('#results .file').count(), 0);

  // Let searches through again: the same search answers.
  await page.unroute('**/api/stream_search');
  await page.reload();
  await page.waitForSelector('#results .file');
  // The first file shows while the stream still runs: the summary is read once it has ended.
  await page.waitForFunction(() => document.querySelector('#stop') === null);
  t.match(await page.textContent('#summary'), /matches? in \d+ files?/, 'answered, the progress gone');
  t.equal(await page.locator('#stop').count(), 0);
  t.same(errors, [], 'no script error');
});
