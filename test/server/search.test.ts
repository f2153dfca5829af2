import t from 'tap';
import path from 'node:path';
import { SearchResponse } from '../../src/api/schemas.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { fixtureRepository, routerRepositories } from './fixture.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

t.test('POST /api/search', async (t) => {
  const repo = fixtureRepository(t);
  const daemon: Daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true } });

  t.test('finds, ranks and positions matches, in the API shape', async (t) => {
    const response = await daemon.post('/api/search', { query: 'parse_expression', matches: 100, isCaseSensitivityEnabled: true });
    t.equal(response.status, 200);
    t.ok(response.headers.get('x-request-id'), 'a request id');
    const body = await response.json();
    assertSchema(t, SearchResponse, body, 'search response');
    t.equal(body.isSearchExhaustive, true);
    t.same(
      new Set(body.files.map((file: { fileName: { text: string } }) => file.fileName.text)),
      new Set(['src/parser.c', 'src/parser.h', 'docs/guide.md', 'README.md']),
    );
    t.equal(body.files[0].fileName.text, 'src/parser.c', 'the file defining the symbol ranks first');
    const readme = body.files.find((file: { fileName: { text: string } }) => file.fileName.text === 'README.md');
    t.same(readme.chunks[0].matchRanges[0].start, { byteOffset: 31, lineNumber: 3, column: 19 }, 'byte offset, line and code-point column');
    t.equal(body.stats.actualMatchCount, 5, '2 in parser.c, 1 in each other file');
    t.equal(body.repositoryInfo[0].name, 'example.com/acme/widgets');
  });

  t.test('stops at the match cap and says so', async (t) => {
    const body = await (await daemon.post('/api/search', { query: 'parse_expression', matches: 2 })).json();
    t.equal(body.stats.actualMatchCount, 2);
    t.equal(body.isSearchExhaustive, false);
    t.equal(body.stats.flushReason, 'FLUSH_REASON_MAX_SIZE');
  });

  t.test('a request id sent by the client is echoed', async (t) => {
    const response = await daemon.fetch('/api/search', {
      method: 'POST',
      headers: { 'X-Request-Id': 'abc-123' },
      body: JSON.stringify({ query: 'x', matches: 1 }),
    });
    t.equal(response.headers.get('x-request-id'), 'abc-123');
  });

  t.test('bad input gets the error object and the daemon keeps serving', async (t) => {
    await expectError(
      t,
      await daemon.fetch('/api/search', { method: 'POST', body: '{"query": "x", "matches":' }),
      400,
      'INVALID_REQUEST_BODY',
      /not valid JSON/,
    );
    await expectError(t, await daemon.fetch('/api/search', { method: 'POST', body: '[1, 2]' }), 400, 'INVALID_REQUEST_BODY', /JSON object/);
    await expectError(t, await daemon.fetch('/api/search', { method: 'POST', body: '' }), 400, 'INVALID_REQUEST_BODY');
    await expectError(t, await daemon.post('/api/search', { query: 42, matches: 1 }), 400, 'INVALID_REQUEST_BODY', /`query`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x' }), 400, 'INVALID_REQUEST_BODY', /`matches`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 0 }), 400, 'INVALID_REQUEST_BODY', /`matches`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 1e12 }), 400, 'INVALID_REQUEST_BODY', /`matches`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 1, contextLines: 100000 }), 400, 'INVALID_REQUEST_BODY', /`contextLines`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 1, isRegexEnabled: 'yes' }), 400, 'INVALID_REQUEST_BODY', /`isRegexEnabled`/);
    await expectError(t, await daemon.post('/api/search', { query: 'x'.repeat(5000), matches: 1 }), 400, 'INVALID_REQUEST_BODY', /`query`/);
    await expectError(t, await daemon.post('/api/search', { query: 'foo "bar', matches: 1 }), 400, 'FAILED_TO_PARSE_QUERY', /column 5 of "foo \\"bar"/);
    await expectError(t, await daemon.post('/api/search', { query: '(a', matches: 1, isRegexEnabled: true }), 400, 'FAILED_TO_PARSE_QUERY');
    const costly = Array.from({ length: 3 }, (_, i) => `[\\p{L}\\p{N}]{300}${i}`).join(' or ');
    await expectError(
      t,
      await daemon.post('/api/search', { query: costly, matches: 1, isRegexEnabled: true }),
      400,
      'FAILED_TO_PARSE_QUERY',
      /regexes compile to more than 1,000,000 RE2 instructions together/,
    );
    await expectError(t, await daemon.post('/api/search', { query: 'context:nope x', matches: 1 }), 404, 'SEARCH_CONTEXT_NOT_FOUND', /nope/);
    const ok = await daemon.post('/api/search', { query: 'parse_expression', matches: 1 });
    t.equal(ok.status, 200, 'still serving');
  });

  t.test('a 10 MB body is refused without reading it all', async (t) => {
    const huge = JSON.stringify({ query: 'x', matches: 1, padding: 'p'.repeat(10 << 20) });
    await expectError(t, await daemon.fetch('/api/search', { method: 'POST', body: huge }), 400, 'INVALID_REQUEST_BODY', /over the limit/);
    t.equal((await daemon.post('/api/search', { query: 'x', matches: 1 })).status, 200, 'still serving');
  });

  t.test('a catastrophic-backtracking regex runs in linear time', async (t) => {
    const started = Date.now();
    const response = await daemon.post('/api/search', { query: '(a+)+$', matches: 10, isRegexEnabled: true });
    t.equal(response.status, 200);
    const body = await response.json();
    assertSchema(t, SearchResponse, body, 'search response');
    t.ok(Date.now() - started < 5000, 'answered well within the time budget');
  });

  t.test('unknown fields are ignored; whole returns the content', async (t) => {
    const body = await (await daemon.post('/api/search', { query: 'file:parser\\.h$', matches: 5, whole: true, somethingElse: 1 })).json();
    t.equal(body.files.length, 1);
    t.equal(body.files[0].content, 'int parse_expression(const char *text);\n');
  });
});

t.test('invisible repositories do not exist for anonymous callers', async (t) => {
  const visible = fixtureRepository(t, 'example.com/acme/public');
  const hidden = { ...fixtureRepository(t, 'example.com/acme/private').config, public: false };
  const daemon = await startDaemon(t, { repos: [visible.config, hidden], auth: { anonymousAccess: true } });
  const body = await (await daemon.post('/api/search', { query: 'parse_expression', matches: 100 })).json();
  t.same([...new Set(body.files.map((file: { repository: string }) => file.repository))], ['example.com/acme/public']);
  const repos = await (await daemon.fetch('/api/repos')).json();
  t.same(
    repos.map((repo: { repoName: string }) => repo.repoName),
    ['example.com/acme/public'],
  );
});

t.test('without anonymous access, reads need a credential', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: false } });
  await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 1 }), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await daemon.fetch('/api/repos'), 401, 'NOT_AUTHENTICATED');
  t.equal((await daemon.fetch('/api/health')).status, 200, 'health needs no credential');
  t.equal((await daemon.fetch('/api/version')).status, 200, 'version needs no credential');
});

t.test('type:file and type:repo count files and repositories against `matches`, not match ranges', async (t) => {
  const root = tempDir(t, 'trawl-types-');
  // One repository with many matches in one file, ahead of two with one match each.
  const repos = (
    [
      { name: 'example.com/a/busy', files: { 'busy.c': 'int typed_needle;\n'.repeat(50), 'also.c': 'typed_needle\n' } },
      { name: 'example.com/b/quiet', files: { 'quiet.c': 'typed_needle\n' } },
      { name: 'example.com/c/calm', files: { 'calm.c': 'typed_needle\n' } },
    ] as { name: string; files: Record<string, string> }[]
  ).map(({ name, files }) => {
    const dir = path.join(root, name.split('/')[2]!);
    makeRepository(dir, files);
    return { name, path: dir, public: true };
  });
  const daemon = await startDaemon(t, { repos, auth: { anonymousAccess: true } });
  const search = async (query: string, matches: number) =>
    (await (await daemon.post('/api/search', { query, matches })).json()) as {
      files: { repository: string; fileName: { text: string }; chunks: unknown[] }[];
      isSearchExhaustive: boolean;
      stats: { totalMatchCount: number };
    };
  const everyRepository = repos.map((repo) => repo.name).sort();
  for (const matches of [3, 4, 100]) {
    const body = await search('type:repo typed_needle', matches);
    t.same(body.files.map((file) => file.repository).sort(), everyRepository, `type:repo, matches ${matches}: every repository, once`);
    t.ok(body.files.every((file) => file.chunks.length === 0));
    t.equal(body.isSearchExhaustive, true);
  }
  const two = await search('type:repo typed_needle', 2);
  t.equal(new Set(two.files.map((file) => file.repository)).size, 2, 'matches 2: two repositories');
  t.equal(two.isSearchExhaustive, false);

  for (const matches of [4, 100]) {
    const body = await search('type:file typed_needle', matches);
    t.same(body.files.map((file) => file.fileName.text).sort(), ['also.c', 'busy.c', 'calm.c', 'quiet.c'], `type:file, matches ${matches}: every file`);
    t.equal(body.isSearchExhaustive, true);
    // Content ranges of counted files are never returned, so few are collected: busy.c's 50 lines are not all held.
    t.ok(body.stats.totalMatchCount < 50, `ranges held per counted file are bounded (${body.stats.totalMatchCount} in all)`);
  }
  const three = await search('type:file typed_needle', 3);
  t.equal(three.files.length, 3, 'matches 3: three files');
  t.equal(three.isSearchExhaustive, false);
});

t.test('the same capped search answers the same files in the same order, however it is split; a file whose name matches is never cut', async (t) => {
  const repositories = routerRepositories(t);
  const daemon = await startDaemon(t, { repos: repositories, auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 2 } });
  const files = async () => {
    const body = await (await daemon.post('/api/search', { query: 'router', matches: 20 })).json();
    return (body.files as { repository: string; fileName: { text: string } }[]).map((file) => `${file.repository} ${file.fileName.text}`);
  };
  const alone = await files(); // an idle pool splits it between the workers
  const together = await Promise.all(Array.from({ length: 6 }, files)); // a busy one runs each as one task
  const again = await files();
  for (const [i, answer] of [...together, again].entries()) t.same(answer, alone, `answer ${i + 2} is the first's, file for file`);
  t.same(
    alone.filter((file) => file.endsWith(' test/Router.js')).sort(),
    repositories.map((repo) => `${repo.name} test/Router.js`).sort(),
    "every repository's test/Router.js, whose name matches, is in the answer though static rank puts tests last",
  );
  t.ok(
    alone.slice(0, 4).every((file) => file.endsWith(' test/Router.js')),
    'and ranked first, with its file-name match',
  );
});
