import t, { type Test } from 'tap';
import path from 'node:path';
import { validateConfig } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { openShardSet } from '../../src/search/shard-set.js';
import { search, searchInto, type SearchEnvironment } from '../../src/search/in-process.js';
import { renderFiles, responseJson } from '../../src/search/response/build.js';
import type { SearchRequest } from '../../src/api/types.js';
import { QueryParseError } from '../../src/query/errors.js';
import { UnknownSearchContextError } from '../../src/query/plan.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRepository } from '../helpers/git.js';

const PARSER_C = `/* parser */
#include "parser.h"

struct parser {
\tint depth;
};

int parse_expression(struct parser *p) {
\treturn p->depth;
}

int parse_statement(struct parser *p) {
\treturn parse_expression(p) + 1;
}
`;
const UNICODE_MD = 'Ünïcödé: parse_expression in prose\n\ttab\tparse_expression\r\n';

async function fixture(t: Test) {
  const root = tempDir(t);
  const repo = path.join(root, 'repo');
  makeRepository(repo, {
    'src/parser.c': PARSER_C,
    'docs/guide.md': UNICODE_MD,
    'src/parse_expression_test.c': 'int test_it(void) { return 0; }\n',
    'vendor/lib/other.c': 'int parse_expression_helper;\n',
  });
  const dataDir = path.join(root, 'data');
  await runIndex(
    validateConfig(
      {
        dataDir,
        repos: [{ name: 'github.com/acme/compiler', path: repo, codeHostType: 'github', webUrl: 'https://github.com/acme/compiler', public: true }],
        index: { ctagsProcesses: 1 },
      },
      'test',
    ),
  );
  return openShardSet(dataDir).shards;
}

const environment: SearchEnvironment = { publicUrl: 'http://trawl.test', contexts: {}, timeBudgetMs: 10_000 };
const request = (query: string, extra: Partial<SearchRequest> = {}): SearchRequest => ({ query, matches: 100, ...extra });

t.test('search responses: ranking, chunks, positions, symbols, links, stats', async (t) => {
  const shards = await fixture(t);
  const response = search(request('parse_expression'), shards, environment);
  t.same(Object.keys(response).sort(), ['files', 'isSearchExhaustive', 'repositoryInfo', 'stats']);
  t.equal(response.isSearchExhaustive, true);
  t.equal(response.stats.flushReason, 'FLUSH_REASON_FINAL_FLUSH');
  t.equal(Object.keys(response.stats).length, 21, 'all 21 stats fields');
  t.same(
    response.files.map((f) => f.fileName.text),
    ['src/parse_expression_test.c', 'src/parser.c', 'vendor/lib/other.c', 'docs/guide.md'],
    'file-name match, then the exact definition, then a match inside a definition, then prose',
  );

  const parser = response.files.find((f) => f.fileName.text === 'src/parser.c')!;
  t.equal(parser.language, 'C');
  t.equal(parser.repository, 'github.com/acme/compiler');
  t.same(parser.branches, ['HEAD', 'main'], 'the default branch is also listed under its own name');
  t.equal(parser.webUrl, 'http://trawl.test/browse/github.com/acme/compiler@HEAD/-/blob/src/parser.c');
  t.match(parser.externalWebUrl, /^https:\/\/github\.com\/acme\/compiler\/blob\/[0-9a-f]{40}\/src\/parser\.c$/);
  t.same(parser.fileName.matchRanges, []);
  t.equal(parser.chunks.length, 2, 'separate lines without context make separate chunks');
  const [definition, call] = parser.chunks;
  t.equal(definition!.content, 'int parse_expression(struct parser *p) {\n');
  t.same(definition!.contentStart, { byteOffset: PARSER_C.indexOf('int parse_expression'), lineNumber: 8, column: 1 });
  t.same(definition!.matchRanges, [
    {
      start: { byteOffset: PARSER_C.indexOf('parse_expression'), lineNumber: 8, column: 5 },
      end: { byteOffset: PARSER_C.indexOf('parse_expression') + 16, lineNumber: 8, column: 21 },
    },
  ]);
  t.same(definition!.symbols, [{ symbol: 'parse_expression', kind: 'function' }], 'ctags definitions on the chunk');
  t.equal(call!.content, '\treturn parse_expression(p) + 1;\n');
  t.equal(call!.matchRanges[0]!.start.column, 9, 'a tab is one column');
  t.equal(call!.symbols, undefined, 'a call is not a definition');

  const guide = response.files.find((f) => f.fileName.text === 'docs/guide.md')!;
  t.same(
    guide.chunks[0]!.matchRanges.map((r) => [r.start.byteOffset, r.start.lineNumber, r.start.column]),
    [
      [Buffer.byteLength('Ünïcödé: '), 1, 10],
      [Buffer.byteLength('Ünïcödé: parse_expression in prose\n\ttab\t'), 2, 6],
    ],
    'byte offsets count bytes, columns count code points',
  );
  t.equal(guide.chunks.length, 1, 'adjacent lines merge into one chunk');
  t.ok(guide.chunks[0]!.content.endsWith('\r\n'), 'CRLF lines are kept whole');

  const named = response.files[0]!;
  t.same(named.fileName.matchRanges, [{ start: { byteOffset: 4, lineNumber: 1, column: 5 }, end: { byteOffset: 20, lineNumber: 1, column: 21 } }]);
  t.same(response.repositoryInfo, [{ id: 1, codeHostType: 'github', name: 'github.com/acme/compiler', webUrl: 'https://github.com/acme/compiler' }]);
  t.equal(response.stats.actualMatchCount, 6);
  t.equal(response.stats.totalMatchCount, 6);
  t.equal(response.stats.fileCount, 4);
  t.ok(response.stats.duration > 0 && Number.isInteger(response.stats.duration), 'durations are whole nanoseconds');
  t.ok(response.stats.ngramLookups > 0 && response.stats.indexBytesLoaded > 0);
});

t.test('context lines widen and merge chunks; whole returns the content', async (t) => {
  const shards = await fixture(t);
  const response = search(request('file:parser\\.c$ parse_expression', { contextLines: 2, whole: true }), shards, environment);
  const [file] = response.files;
  t.equal(file!.chunks.length, 1, 'windows 6–10 and 10–14 touch and merge');
  t.equal(file!.chunks[0]!.contentStart.lineNumber, 6);
  t.equal(file!.chunks[0]!.content, PARSER_C.split('\n').slice(5, 14).join('\n') + '\n');
  t.equal(file!.content, PARSER_C);
  t.equal(file!.fileName.matchRanges.length, 1, 'the file: term marks the path');
});

t.test('the match cap cuts the result and says so', async (t) => {
  const shards = await fixture(t);
  const capped = search(request('parse_expression', { matches: 3 }), shards, environment);
  t.equal(capped.isSearchExhaustive, false);
  t.equal(capped.stats.flushReason, 'FLUSH_REASON_MAX_SIZE');
  t.equal(capped.stats.actualMatchCount, 3);
  t.ok(capped.stats.totalMatchCount >= 4, 'the engine found more than it returned');
  const exact = search(request('parse_expression', { matches: 6 }), shards, environment);
  t.equal(exact.isSearchExhaustive, true, 'exactly `matches` ranges is exhaustive');
  const fileOnly = search(request('type:file parse_expression'), shards, environment);
  t.ok(
    fileOnly.files.every((f) => f.chunks.length === 0),
    'type:file returns files without chunks',
  );
  const repoOnly = search(request('type:repo parse'), shards, environment);
  t.equal(repoOnly.files.length, 1, 'type:repo returns one entry per repository');
  const late = search(request('parse_expression'), shards, { ...environment, timeBudgetMs: -1 });
  t.same([late.isSearchExhaustive, late.stats.flushReason], [false, 'FLUSH_REASON_TIMER_EXPIRED']);
});

t.test('a response carries a bounded amount of content, whatever matches asks, and says when it was cut', async (t) => {
  const shards = await fixture(t);
  const everything = search(request('parse', { matches: 1000, whole: true }), shards, environment);
  t.ok(everything.files.length > 2 && everything.isSearchExhaustive, `uncapped: ${everything.files.length} files`);
  const first = everything.files[0]!;
  const firstSize = Buffer.byteLength(first.content!) + first.chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.content), 0);
  const bounded = search(request('parse', { matches: 1000, whole: true }), shards, { ...environment, responseContentBytes: firstSize });
  t.same(
    bounded.files.map((file) => file.fileName.text),
    everything.files.slice(0, 2).map((file) => file.fileName.text),
    'files up to the bound (the one that passes it included), best first',
  );
  t.same([bounded.isSearchExhaustive, bounded.stats.flushReason], [false, 'FLUSH_REASON_MAX_SIZE'], 'and the response says it was cut');
  t.equal(
    bounded.stats.actualMatchCount,
    bounded.files.reduce((sum, file) => sum + file.fileName.matchRanges.length + file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0), 0),
    'its counts are of what it carries',
  );
});

t.test("files rendered to JSON as they are made are the object response's JSON, cut where it is cut", async (t) => {
  const shards = await fixture(t);
  const queries: [string, Partial<SearchRequest>, Partial<SearchEnvironment>][] = [
    ['parse_expression', {}, {}],
    ['parse', { contextLines: 2, whole: true }, {}], // multi-byte, tab and CRLF content, symbols
    ['parse', { matches: 1000, whole: true }, { responseContentBytes: 10 }], // cut by content
    ['parse', { matches: 3 }, {}], // cut by the match cap
    ['type:file parse', {}, {}],
    ['nothing_matches_this', {}, {}],
  ];
  for (const [query, extra, bound] of queries) {
    const objects = search(request(query, extra), shards, { ...environment, ...bound });
    const rendered = searchInto(renderFiles, request(query, extra), shards, { ...environment, ...bound });
    t.equal(Buffer.concat(rendered.files).toString(), JSON.stringify(objects.files), `${query}: the files`);
    // The timings differ from run to run; every count must not.
    const counts = (stats: object) =>
      Object.fromEntries(Object.entries(stats).filter(([key]) => !['duration', 'matchTreeConstruction', 'matchTreeSearch'].includes(key)));
    t.same(counts(JSON.parse(responseJson(rendered).toString()).stats as object), counts(objects.stats), `${query}: the stats`);
    t.equal(responseJson({ ...rendered, stats: objects.stats }).toString(), JSON.stringify(objects), `${query}: the whole response, members in order`);
  }
});

t.test('bad queries and contexts are errors before any shard is read', async (t) => {
  const shards = await fixture(t);
  t.throws(() => search(request('foo or'), shards, environment), QueryParseError);
  t.throws(() => search(request('context:nope x'), shards, environment), UnknownSearchContextError);
  t.same(search(request(''), shards, environment).files, [], 'the empty query matches nothing');
});
