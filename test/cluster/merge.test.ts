import t from 'tap';
import type { FileResult, SearchResponse } from '../../src/api/types.js';
import { mergeRanked } from '../../src/cluster/merge.js';
import { emptyStats } from '../../src/search/response/stats.js';

const range = { start: { byteOffset: 0, lineNumber: 1, column: 1 }, end: { byteOffset: 1, lineNumber: 1, column: 2 } };

/** A file of `repository` with `ranges` match ranges over two chunks, ranked `score`. */
function file(repository: string, path: string, score: number, ranges: number): FileResult {
  const first = Math.ceil(ranges / 2);
  const chunk = (count: number, line: number) => ({
    content: 'x\n',
    matchRanges: Array.from({ length: count }, () => range),
    contentStart: { byteOffset: 0, lineNumber: line, column: 1 },
  });
  return {
    fileName: { text: path, matchRanges: [] },
    webUrl: `http://trawl.test/${repository}/${path}`,
    repository,
    repositoryId: repository.length,
    language: 'Text',
    chunks: [chunk(first, 1), chunk(ranges - first, 10)].filter((c) => c.matchRanges.length > 0),
    score,
  };
}

function answer(files: FileResult[], isSearchExhaustive = true): SearchResponse {
  const stats = { ...emptyStats(), fileCount: files.length, filesConsidered: 10 };
  const repositoryInfo = [...new Set(files.map((f) => f.repository))].map((name) => ({
    id: name.length,
    codeHostType: 'github' as const,
    name,
    displayName: name,
    webUrl: `https://${name}`,
  }));
  return { files, repositoryInfo, stats, isSearchExhaustive };
}

const names = (response: SearchResponse) => response.files.map((f) => `${f.repository}/${f.fileName.text}`);
const rangesOf = (f: FileResult) => f.chunks.reduce((sum, c) => sum + c.matchRanges.length, 0);

t.test('the nodes’ files ranked together: score, then repository, then path', async (t) => {
  const merged = mergeRanked(
    [answer([file('b', 'x', 9, 1), file('b', 'y', 2, 1)]), answer([file('a', 'z', 9, 1), file('a', 'w', 5, 1)])],
    { query: 'x', matches: 100 },
    false,
    true,
  );
  t.same(names(merged), ['a/z', 'b/x', 'a/w', 'b/y']);
  t.equal(merged.isSearchExhaustive, true);
  t.equal(merged.stats.actualMatchCount, 4);
  t.equal(merged.stats.fileCount, 4, 'the counters summed');
  t.equal(merged.stats.filesConsidered, 20);
  t.ok(
    merged.files.every((f) => f.score === undefined),
    'no scores unless the request was ranked',
  );
});

t.test('cut at `matches` ranges: the last file kept within what is left, the rest left out, not exhaustive', async (t) => {
  const merged = mergeRanked(
    [answer([file('a', '1', 3, 4), file('a', '2', 1, 4)]), answer([file('b', '3', 2, 4)])],
    { query: 'x', matches: 6, ranked: true },
    false,
    true,
  );
  t.same(names(merged), ['a/1', 'b/3']);
  t.same(merged.files.map(rangesOf), [4, 2]);
  t.equal(merged.stats.actualMatchCount, 6);
  t.equal(merged.isSearchExhaustive, false);
  t.equal(merged.stats.flushReason, 'FLUSH_REASON_MAX_SIZE');
  t.same(
    merged.files.map((f) => f.score),
    [3, 2],
    'a ranked request keeps the scores',
  );
  t.same(
    merged.repositoryInfo.map((info) => info.name),
    ['a', 'b'],
  );
});

t.test('type:file and type:repo count files, not ranges', async (t) => {
  const merged = mergeRanked([answer([file('a', '1', 3, 4), file('a', '2', 1, 4)]), answer([file('b', '3', 2, 4)])], { query: 'x', matches: 2 }, true, true);
  t.same(names(merged), ['a/1', 'b/3']);
  t.same(merged.files.map(rangesOf), [4, 4], 'files are whole');
  t.same(
    merged.repositoryInfo.map((info) => info.name),
    ['a', 'b'],
    'only the repositories of the files shown',
  );
});

t.test('not exhaustive when a node’s answer was not, or a partition did not answer', async (t) => {
  t.equal(mergeRanked([answer([file('a', '1', 1, 1)]), answer([], false)], { query: 'x', matches: 10 }, false, true).isSearchExhaustive, false);
  const incomplete = mergeRanked([answer([file('a', '1', 1, 1)])], { query: 'x', matches: 10 }, false, false);
  t.equal(incomplete.isSearchExhaustive, false);
  t.same(names(incomplete), ['a/1']);
});
