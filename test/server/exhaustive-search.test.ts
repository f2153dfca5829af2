import t from 'tap';
import http from 'node:http';
import { SearchResponse, SearchStats } from '../../src/api/schemas.js';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { git } from '../helpers/git.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { slowCorpus } from './fixture.js';

interface File {
  fileName: { text: string };
  chunks: { matchRanges: unknown[] }[];
}

/** Match ranges per file of `files`, by path. */
const rangesByPath = (files: File[]) =>
  Object.fromEntries(files.map((file) => [file.fileName.text, file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0)]));

/** `body` posted to `path`, its response read slowly: nothing for a while, then a little at a time. */
function readSlowly(url: string, body: object): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (response) => {
      const received: Buffer[] = [];
      response.pause();
      const pump = () => {
        let piece: Buffer | null;
        for (let bites = 0; bites < 64 && (piece = response.read(65536) as Buffer | null) !== null; bites++) received.push(piece);
        if (!response.readableEnded) setTimeout(pump, 5);
      };
      response.on('end', () => resolve(Buffer.concat(received).toString('utf8')));
      response.on('readable', () => undefined);
      setTimeout(pump, 500);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

t.test('an exhaustive search answers every match, past the cap of `matches` and the bound on content', async (t) => {
  const corpus = slowCorpus(t); // 48 files in each of whose 4,500 lines `quick` is once: 216,000 match ranges
  const daemon = await startDaemon(t, { repos: [corpus], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  // The oracle: git grep's count of matching lines (one match each) per file.
  const expected = Object.fromEntries(
    git(corpus.path, 'grep', '-c', 'quick')
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.lastIndexOf(':')), Number(line.slice(line.lastIndexOf(':') + 1))]),
  );
  const total = Object.values(expected).reduce((sum, count) => sum + count, 0);
  t.equal(total, 216_000, 'more than any capped search may return');

  t.test('without `exhaustive`, `matches` is capped', async (t) => {
    await expectError(t, await daemon.post('/api/search', { query: 'quick', matches: 100_001 }), 400, 'INVALID_REQUEST_BODY', /`matches`.*`exhaustive`/);
    await expectError(t, await daemon.post('/api/stream_search', { query: 'quick', matches: 100_001 }), 400, 'INVALID_REQUEST_BODY', /`matches`/);
    await expectError(t, await daemon.post('/api/search', { query: 'quick', matches: 2 ** 60, exhaustive: true }), 400, 'INVALID_REQUEST_BODY', /`matches`/);
    await expectError(t, await daemon.post('/api/search', { query: 'quick', matches: 10, exhaustive: 'yes' }), 400, 'INVALID_REQUEST_BODY', /`exhaustive`/);
  });

  t.test('/api/search: one JSON response with every file and range', async (t) => {
    const response = await daemon.post('/api/search', { query: 'quick', matches: 1e12, exhaustive: true, contextLines: 2 });
    t.equal(response.status, 200);
    t.match(response.headers.get('content-type'), /application\/json/);
    const body = await response.json();
    assertSchema(t, SearchResponse, body, 'the response');
    t.same(rangesByPath(body.files), expected, "every file, with as many ranges as git grep's lines");
    t.equal(body.stats.actualMatchCount, total);
    t.equal(body.stats.totalMatchCount, total);
    t.equal(body.stats.fileCount, 48);
    t.equal(body.stats.flushReason, 'FLUSH_REASON_FINAL_FLUSH');
    t.equal(body.isSearchExhaustive, true);
    t.same(
      body.repositoryInfo.map((info: { name: string }) => info.name),
      [corpus.name],
    );
  });

  t.test('`matches` still caps an exhaustive search', async (t) => {
    const body = await (await daemon.post('/api/search', { query: 'quick', matches: 1000, exhaustive: true })).json();
    t.equal(body.stats.actualMatchCount, 1000);
    t.equal(body.isSearchExhaustive, false);
    t.equal(body.stats.flushReason, 'FLUSH_REASON_MAX_SIZE');
  });

  t.test('/api/stream_search: every match, in parts, to a client that reads slowly', async (t) => {
    const text = await readSlowly(`${daemon.url}/api/stream_search`, { query: 'quick', matches: 1e12, exhaustive: true });
    const payloads = text
      .split('\n\n')
      .filter((block) => block.startsWith('data: '))
      .map((block) => block.slice('data: '.length));
    t.equal(payloads.at(-1), '[DONE]');
    const final = JSON.parse(payloads.at(-2)!);
    t.equal(final.type, 'final');
    assertSchema(t, SearchStats, final.accumulatedStats, 'accumulated stats');
    const chunks = payloads.slice(0, -2).map((payload) => JSON.parse(payload));
    t.ok(chunks.length > 2, `in several parts (${chunks.length})`);
    const counts: Record<string, number> = {};
    for (const chunk of chunks) {
      for (const [file, ranges] of Object.entries(rangesByPath(chunk.files))) counts[file] = (counts[file] ?? 0) + ranges;
    }
    t.same(counts, expected, 'every range of every file, once');
    t.equal(final.accumulatedStats.actualMatchCount, total);
    t.equal(final.isSearchExhaustive, true);
  });

  t.test('a client that leaves an exhaustive search stops it; the daemon keeps serving', async (t) => {
    await new Promise<void>((resolve, reject) => {
      const request = http.request(`${daemon.url}/api/search`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.end(JSON.stringify({ query: 'quick', matches: 1e12, exhaustive: true, contextLines: 100 }));
    });
    const idle = async () => /^trawl_search_queue_depth 0$/m.test(await (await daemon.fetch('/metrics')).text());
    await waitFor(idle, 60_000, 'the search to end');
    t.equal((await daemon.post('/api/search', { query: 'quick', matches: 1 })).status, 200, 'still serving');
  });
});
