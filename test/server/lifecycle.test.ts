import t from 'tap';
import fs from 'node:fs';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { type Daemon, runDaemon, startDaemon, waitFor } from '../helpers/daemon.js';
import { commitAll, makeRepository, writeFiles } from '../helpers/git.js';
import { threadNiceValues } from '../helpers/threads.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository, SLOW_QUERY, slowCorpus } from './fixture.js';

/**
 * Starts `count` slow searches on a one-worker daemon and resolves once at
 * least two are in flight: one such search takes only tens of milliseconds,
 * so a signal sent after a fixed delay can come after all of them are answered.
 */
async function searchesInFlight(daemon: Daemon, count: number) {
  const responses = Array.from({ length: count }, () => daemon.post('/api/search', SLOW_QUERY));
  const queueDepth = async () => Number(/^trawl_search_queue_depth (\d+)$/m.exec(await (await daemon.fetch('/metrics')).text())?.[1]);
  await waitFor(async () => (await queueDepth()) >= 2, 10_000, 'searches to be in flight');
  return responses;
}

t.test('a commit to a watched repository becomes searchable without a restart', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const search = async () => (await (await daemon.post('/api/search', { query: 'freshly_committed_symbol', matches: 5 })).json()).files.length;
  t.equal(await search(), 0, 'not there before the commit');
  writeFiles(repo.root, { 'src/new.c': 'int freshly_committed_symbol;\n' });
  commitAll(repo.root, 'add a symbol');
  await waitFor(async () => (await search()) === 1, 15_000, 'the commit to become searchable');
  t.pass('searchable after the commit');
  const repos = await (await daemon.fetch('/api/repos')).json();
  t.equal(repos[0].indexState, 'ready');
});

t.test('indexing runs below the search workers, which run below the front end', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 2 } });
  const pid = daemon.process.pid!;
  const values = threadNiceValues(pid);
  const frontEnd = values.get(pid)!;
  const count = (nice: number) => [...values.values()].filter((value) => value === Math.min(19, nice)).length;
  t.equal(count(frontEnd + 10), 2, 'the two search workers, 10 steps down');
  // The index thread loads nodegit, whose own threads start from it and so run as low as it does.
  t.ok(count(frontEnd + 15) >= 1, 'the index thread, 15 steps down');
  t.equal(count(frontEnd) + count(frontEnd + 10) + count(frontEnd + 15), values.size, 'no thread at another priority');
});

t.test('searches hold render slots while in flight and give them back, whether answered or abandoned', async (t) => {
  const daemon = await startDaemon(t, { repos: [slowCorpus(t)], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } });
  const slotsInUse = async () => Number(/^trawl_render_slots_in_use (\d+)$/m.exec(await (await daemon.fetch('/metrics')).text())?.[1]);
  const clients = Array.from({ length: 8 }, () => new AbortController());
  const responses = clients.map(({ signal }) =>
    daemon
      .fetch('/api/search', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(SLOW_QUERY), signal })
      .then((response) => response.json() as Promise<{ stats: { flushReason: string } }>)
      .catch(() => null),
  );
  await waitFor(async () => (await slotsInUse()) >= 2, 10_000, 'searches to hold slots');
  for (const client of clients.slice(0, 4)) client.abort();
  const bodies = await Promise.all(responses);
  t.ok(
    bodies.slice(4).every((body) => body?.stats.flushReason === 'FLUSH_REASON_FINAL_FLUSH'),
    'the searches whose clients stayed were answered',
  );
  await waitFor(async () => (await slotsInUse()) === 0, 10_000, 'every slot to be given back');
  t.pass('no slot is held at rest');
});

t.test('SIGTERM during a search lets it finish, then exits 0', async (t) => {
  const daemon = await startDaemon(t, { repos: [slowCorpus(t)], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } });
  const pending = await searchesInFlight(daemon, 16);
  daemon.process.kill('SIGTERM');
  const responses = await Promise.all(pending);
  t.same(new Set(responses.map((response) => response.status)), new Set([200]), 'the searches in flight were answered');
  const bodies = await Promise.all(responses.map((response) => response.json()));
  t.same(new Set(bodies.map((body) => body.stats.flushReason)), new Set(['FLUSH_REASON_FINAL_FLUSH']), 'and ran to the end');
  t.equal(await daemon.exited, 0, 'exit status 0');
  t.match(daemon.stderr(), /"inFlight":[1-9]\d*,"msg":"shutting down"/, 'searches were in flight when the signal came');
});

t.test('SIGTERM during an index pass abandons the pass and exits at once; the next start indexes again', async (t) => {
  // universal-ctags that takes 30 s to start: the first index pass waits for it.
  const slowCtags = path.join(tempDir(t), 'slow-ctags');
  fs.writeFileSync(slowCtags, '#!/bin/sh\nsleep 30\nexec ctags "$@"\n', { mode: 0o755 });
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: slowCtags } }, { waitForIndex: false });
  const indexState = async () => ((await (await daemon.fetch('/api/repos')).json()) as { indexState: string }[])[0]?.indexState;
  await waitFor(async () => (await indexState()) === 'indexing', 10_000, 'the first pass to start');
  const signalled = performance.now();
  t.equal(await daemon.stop(), 0, 'exit status 0');
  const stopMs = performance.now() - signalled;
  t.ok(stopMs < 10_000, `stopped in ${stopMs.toFixed(0)} ms, without waiting for the pass`);
  t.match(daemon.stderr(), /the index pass in progress is abandoned/, 'and said so');

  const restarted = await runDaemon(t, daemon.configFile, { waitForIndex: false });
  await waitFor(async () => (await (await restarted.fetch('/api/repos')).json())[0]?.indexState === 'indexing', 10_000, 'the pass to start again');
  t.pass('the abandoned repository is indexed again at the next start');
});

t.test('while stopping, new requests get 503; a second signal exits at once', async (t) => {
  const daemon = await startDaemon(t, {
    repos: [slowCorpus(t)],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { shutdownDrainSeconds: 60, workers: 1 },
  });
  // One kept-alive connection, opened before the signal, to send a request on after it.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const get = (pathName: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      http
        .get(`${daemon.url}${pathName}`, { agent }, (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
        })
        .on('error', reject);
    });
  t.equal((await get('/api/version')).status, 200, 'a connection is open');
  const slow = (await searchesInFlight(daemon, 16)).map((response) => response.catch(() => null));
  daemon.process.kill('SIGTERM');
  await daemon.waitForLog(/shutting down/, 'shutdown to begin');
  const refused = await get('/api/repos');
  t.equal(refused.status, 503, 'a new request on an open connection is refused');
  t.equal(JSON.parse(refused.body).errorCode, 'SERVICE_UNAVAILABLE');
  t.equal(refused.headers['retry-after'], '5', 'with Retry-After');
  t.equal(JSON.parse((await get('/api/health')).body).status, 'stopping', 'health says stopping');
  daemon.process.kill('SIGTERM');
  t.equal(await daemon.exited, 1, 'the second signal exits at once');
  await Promise.all(slow);
});

t.test('a full search queue answers 503 with Retry-After', async (t) => {
  const daemon = await startDaemon(t, {
    repos: [slowCorpus(t)],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { maxQueuedSearches: 1, workers: 1 },
  });
  const responses = await Promise.all(Array.from({ length: 6 }, () => daemon.post('/api/search', SLOW_QUERY)));
  const statuses = responses.map((response) => response.status);
  t.ok(statuses.includes(200), 'some searches ran');
  const refused = responses.find((response) => response.status === 503);
  t.ok(refused, `some were refused (${statuses.join(', ')})`);
  t.equal((await refused!.json()).errorCode, 'SERVICE_UNAVAILABLE');
  t.equal(refused!.headers.get('retry-after'), '1');
});

t.test('SIGTERM while shards are being built exits 0, never inside the addon', async (t) => {
  // 32 MB of varied text: most of a pass is the addon collecting trigrams and building postings.
  const root = path.join(tempDir(t, 'trawl-busy-'), 'busy');
  makeRepository(root, Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`data/file${i}.txt`, randomBytes(256 * 1024).toString('hex')])));
  const repos = [{ name: 'example.com/acme/busy', path: root, public: true }];
  let configFile: string | undefined;
  for (const delayMs of [0, 300, 700, 1300, 2000, 3000]) {
    const daemon = configFile
      ? await runDaemon(t, configFile, { waitForIndex: false })
      : await startDaemon(t, { repos, auth: { anonymousAccess: true }, index: { ctagsCommand: '' } }, { waitForIndex: false });
    configFile = daemon.configFile;
    const indexState = async () => ((await (await daemon.fetch('/api/repos')).json()) as { indexState: string }[])[0]?.indexState;
    await waitFor(async () => (await indexState()) === 'indexing', 10_000, 'the pass to start');
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    t.equal(await daemon.stop(), 0, `SIGTERM ${delayMs} ms into the pass: exit status 0`);
    t.notMatch(daemon.stderr(), /FATAL|napi_throw|Aborted/, 'no abort');
  }
});
