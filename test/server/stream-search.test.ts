import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { SearchResponse, SearchStats } from '../../src/api/schemas.js';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { writeFiles, commitAll } from '../helpers/git.js';
import { assertSchema } from '../helpers/schema.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { fixtureRepository, slowCorpus } from './fixture.js';

/** The `data:` payloads of a server-sent event stream. */
function events(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice('data: '.length));
}

t.test('POST /api/stream_search', async (t) => {
  const repo = fixtureRepository(t);
  // Enough matching text that a full stream does not fit in socket buffers: a slow reader exercises backpressure.
  writeFiles(repo.root, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`gen/file${i}.txt`, 'needle line of generated text\n'.repeat(2000)])));
  commitAll(repo.root, 'generated files');
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });

  t.test('chunks, then final, then [DONE]', async (t) => {
    const response = await daemon.post('/api/stream_search', { query: 'parse_expression', matches: 100 });
    t.equal(response.status, 200);
    t.match(response.headers.get('content-type'), /text\/event-stream/);
    const payloads = events(await response.text());
    t.equal(payloads.at(-1), '[DONE]');
    const parsed = payloads.slice(0, -1).map((payload) => JSON.parse(payload));
    const chunks = parsed.filter((event) => event.type === 'chunk');
    const final = parsed.at(-1);
    t.ok(chunks.length >= 1, 'at least one chunk event');
    for (const chunk of chunks) assertSchema(t, SearchResponse, { ...chunk, isSearchExhaustive: true, type: undefined }, 'chunk event');
    t.equal(final.type, 'final');
    assertSchema(t, SearchStats, final.accumulatedStats, 'accumulated stats');
    t.equal(final.isSearchExhaustive, true);
    t.equal(
      final.accumulatedStats.actualMatchCount,
      chunks.reduce((sum, chunk) => sum + chunk.stats.actualMatchCount, 0),
      "the final stats sum the chunks'",
    );
    const files = chunks.flatMap((chunk) => chunk.files.map((file: { fileName: { text: string } }) => file.fileName.text));
    t.same(new Set(files), new Set(['src/parser.c', 'src/parser.h', 'docs/guide.md', 'README.md']));
  });

  t.test('errors before the first byte are JSON errors', async (t) => {
    const response = await daemon.post('/api/stream_search', { query: 'lang:klingon x', matches: 1 });
    t.equal(response.status, 400);
    t.equal((await response.json()).errorCode, 'FAILED_TO_PARSE_QUERY');
  });

  t.test('a client that disconnects mid-stream cancels it; the daemon keeps serving', async (t) => {
    await new Promise<void>((resolve, reject) => {
      const request = http.request(`${daemon.url}/api/stream_search`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (response) => {
        response.once('data', () => {
          request.destroy(); // gone after the first bytes
          resolve();
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
      request.end(JSON.stringify({ query: 'needle', matches: 100000 }));
    });
    const after = await daemon.post('/api/search', { query: 'parse_expression', matches: 5 });
    t.equal(after.status, 200, 'still serving');
    const metrics = await (await daemon.fetch('/metrics')).text();
    t.match(metrics, /trawl_http_requests_total\{route="\/api\/stream_search",status="aborted"\} 1/, 'the daemon saw the client go');
  });

  t.test('a client that reads slowly gets the whole stream', async (t) => {
    const text = await new Promise<string>((resolve, reject) => {
      const request = http.request(`${daemon.url}/api/stream_search`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (response) => {
        // Bytes, not setEncoding: on a decoding stream Node 20's read(n) compares n with the chunk
        // array's length (read(7) over 'aaaa', 'bbbb', 'cccc' returns 8 characters), loses count of
        // what it holds and later throws a TypeError; seen once in CI.
        const received: Buffer[] = [];
        response.pause();
        const pump = () => {
          let piece: Buffer | null;
          while ((piece = response.read(16384) as Buffer | null) !== null) received.push(piece);
          if (!response.readableEnded) setTimeout(pump, 20);
        };
        response.on('end', () => resolve(Buffer.concat(received).toString('utf8')));
        response.on('readable', () => undefined);
        setTimeout(pump, 200);
      });
      request.on('error', reject);
      request.end(JSON.stringify({ query: 'needle', matches: 60000 }));
    });
    const payloads = events(text);
    t.equal(payloads.at(-1), '[DONE]');
    const final = JSON.parse(payloads.at(-2)!);
    t.equal(final.type, 'final');
    const chunks = payloads.slice(0, -2).map((payload) => JSON.parse(payload));
    const ranges = chunks.reduce((sum, chunk) => sum + chunk.stats.actualMatchCount, 0);
    t.equal(ranges, 60000, 'every match range arrived');
    t.equal(
      chunks.reduce(
        (sum, chunk) =>
          sum +
          chunk.files.reduce((n: number, file: { chunks: { matchRanges: unknown[] }[] }) => n + file.chunks.reduce((m, c) => m + c.matchRanges.length, 0), 0),
        0,
      ),
      60000,
      'in the files, as their stats say',
    );
    t.same(
      [final.accumulatedStats.actualMatchCount, final.accumulatedStats.fileCount],
      [60000, chunks.reduce((sum, chunk) => sum + chunk.stats.fileCount, 0)],
      "the final stats sum the chunks'",
    );
    for (const chunk of chunks) assertSchema(t, SearchResponse, { ...chunk, isSearchExhaustive: false, type: undefined }, 'chunk event');
    t.same(Object.keys(chunks[0]), ['type', 'files', 'repositoryInfo', 'stats'], "members in the spec's order");
    t.ok(text.length > 4 << 20, `a stream larger than socket buffers (${text.length} bytes)`);
  });
});

t.test('a stream_search client that reads nothing is cut off, and the daemon keeps serving', async (t) => {
  const daemon = await startDaemon(t, {
    repos: [slowCorpus(t)],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { streamStallSeconds: 1, workers: 1 },
  });
  const { port } = new URL(daemon.url);
  const body = JSON.stringify({ query: 'quick', matches: 100_000, contextLines: 3 });
  const socket = net.connect(Number(port), '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.once('connect', () => {
    socket.write(
      `POST /api/stream_search HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    socket.pause(); // never read: tens of megabytes of results wait
  });
  t.equal((await daemon.fetch('/api/health')).status, 200, 'health answers meanwhile');
  const aborted = async () =>
    /^trawl_http_requests_total\{route="\/api\/stream_search",status="aborted"\} 1$/m.test(await (await daemon.fetch('/metrics')).text());
  await waitFor(aborted, 120_000, 'the stalled stream to be cut off');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.resume();
  await closed;
  t.ok(
    received.length > 0 && !received.includes('[DONE]'),
    `the client got part of the stream, then the connection closed (${received.length} characters, no [DONE])`,
  );
  const after = await daemon.post('/api/search', { query: 'quick', matches: 5 });
  t.equal(after.status, 200, 'and serves the next search');
});

t.test('a grant removed while a stream waits: none of its later events shows that repository', async (t) => {
  const secret = fixtureRepository(t, 'example.com/acme/secret');
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [{ ...secret.config, public: false }, slowCorpus(t)], auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner' },
          { email: 'member@example.com', role: 'member' },
        ]);
      },
    },
  );
  const owner = users['owner@example.com']!;
  const member = users['member@example.com']!;
  const grant = (method: 'POST' | 'DELETE') =>
    method === 'POST'
      ? daemon.fetch('/api/admin/grants', { method, headers: bearer(owner.key), body: JSON.stringify({ userId: member.id, repo: secret.config.name }) })
      : daemon.fetch(`/api/admin/grants?userId=${encodeURIComponent(member.id)}&repo=${encodeURIComponent(secret.config.name)}`, {
          method,
          headers: bearer(owner.key),
        });
  t.equal((await grant('POST')).status, 200);

  /** The member's stream for parse_expression; `whenStarted` runs once its first bytes arrived. */
  const memberStream = (whenStarted: () => Promise<unknown> = async () => undefined) =>
    new Promise<string[]>((resolve, reject) => {
      const request = http.request(`${daemon.url}/api/stream_search`, { method: 'POST', headers: bearer(member.key) });
      request.on('response', (response) => {
        let text = '';
        let started: Promise<unknown> | undefined;
        response.setEncoding('utf8');
        response.on('data', (piece: string) => {
          text += piece;
          started ??= whenStarted();
        });
        response.on('end', () => void started!.then(() => resolve(events(text)), reject));
      });
      request.on('error', reject);
      request.end(JSON.stringify({ query: 'parse_expression', matches: 100 }));
    });
  const repositoriesIn = (payloads: string[]) =>
    new Set(
      payloads
        .filter((payload) => payload.startsWith('{"type":"chunk"'))
        .flatMap((payload) => (JSON.parse(payload) as { files: { repository: string }[] }).files.map((file) => file.repository)),
    );

  t.same([...repositoriesIn(await memberStream())], [secret.config.name], 'granted, the stream shows the repository');

  // The one worker is busy with big searches, so the member's search waits behind them: the grant goes while it waits.
  // Literal ones: each is one task, sent to the worker as the search is admitted (a regex search plans first).
  const blockers = Array.from({ length: 8 }, () => daemon.post('/api/search', { query: 'lazy dog 0123456789', matches: 20_000 }));
  const queueDepth = async () =>
    Number(/^trawl_search_queue_depth (\d+)$/m.exec(await (await daemon.fetch('/metrics', { headers: bearer(owner.key) })).text())?.[1]);
  await waitFor(async () => (await queueDepth()) >= 8, 10_000, 'the big searches to be queued');
  const payloads = await memberStream(async () => t.equal((await grant('DELETE')).status, 200, 'the grant is removed mid-stream'));
  t.same([...repositoriesIn(payloads)], [], 'no event after the removal shows the repository');
  t.equal(JSON.parse(payloads.at(-2)!).type, 'final', 'the stream ends as usual: the credential itself is still good');
  t.equal(payloads.at(-1), '[DONE]');
  t.same(new Set((await Promise.all(blockers)).map((response) => response.status)), new Set([200]));
});
