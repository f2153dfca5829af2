import t, { type Test } from 'tap';
import path from 'node:path';
import type { FileResult, SearchRequest } from '../../src/api/types.js';
import { decodeFiles, encodeFiles } from '../../src/cluster/peer-files.js';
import { validateConfig } from '../../src/config/config.js';
import type { Shard } from '../../src/index/shard-reader.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { plan } from '../../src/query/plan.js';
import { buildResponse, foundIn, renderFiles } from '../../src/search/response/build.js';
import { RESPONSE_CONTENT_BYTES } from '../../src/search/response/cut.js';
import { mergeRenderedFiles, redraftFrom, redraftJson, renderedFiles } from '../../src/search/response/rendered-files.js';
import { findPackedMatch, packMatches } from '../../src/search/packed-matches.js';
import { openShardSet } from '../../src/search/shard-set.js';
import { searchShards } from '../../src/search/shard/evaluate.js';
import { createSignal } from '../../src/search/signal.js';
import type { RenderedFiles, ShardsOutcome } from '../../src/worker/search-protocol.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

const PUBLIC_URL = 'http://trawl.test';
const TIMINGS = { started: 0, planned: 0, searched: 0 };
const TIME_STATS = ['duration', 'matchTreeConstruction', 'matchTreeSearch', 'wait'];

/** Two repositories of two shards each; a few files match, some alike in both repositories (equal scores). */
async function shardsOfTwoRepositories(root: string): Promise<Shard[]> {
  const filler = 'plain filler line without the word\n'.repeat(1700);
  const repos = ['example.com/alpha', 'example.com/beta'].map((name, r) => {
    const repoDir = path.join(root, name.replace('/', '_'));
    makeRepository(
      repoDir,
      Object.fromEntries(
        Array.from({ length: 36 }, (_, i) => {
          const lines = i % 4 === 0 ? '' : `${'needle here\n'.repeat(i % 5)}${i % 3 === 0 ? 'needles\n' : ''}${r === 1 && i % 7 === 0 ? 'int needle;\n' : ''}`;
          return [`src/file${String(i).padStart(2, '0')}.c`, `${lines}${filler}${lines}`];
        }),
      ),
    );
    return { name, path: repoDir, public: true };
  });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos, index: { maxShardContentBytes: 1 << 20, ctagsCommand: '' } }, 'test');
  await runIndex(config);
  return openShardSet(config.dataDir).shards;
}

/** What a worker answers for `shards` (search-thread.ts): the outcome, and its files rendered within `maxContentBytes`. */
function renderedPart(request: SearchRequest, shards: readonly Shard[], maxContentBytes: number): RenderedFiles {
  const query = plan(request, {});
  const outcome = searchShards(query, shards, {}, { wanted: request.matches + 1, deadline: performance.now() + 60_000, signal: createSignal() });
  const { stats, repositoryInfo, files } = buildResponse(
    () => renderedFiles(shards),
    request,
    query,
    foundIn(outcome, shards),
    [outcome],
    PUBLIC_URL,
    TIMINGS,
    maxContentBytes,
  );
  return { kind: 'files', outcome, packedMatches: packMatches(outcome.matches), stats, repositoryInfo, ...files };
}

/** The match of a part's file, as the pool finds it again among the part's packed matches. */
const matchOfIn = (parts: readonly RenderedFiles[], groups: readonly Shard[][]) => (part: number, file: number) => {
  const { packedMatches, shards, docs } = parts[part]!;
  const match = findPackedMatch(packedMatches, shards[file]!, docs[file]!);
  return match && { ...match, shard: groups[part]![match.shard]! };
};

/** The response one worker builds from every part's matches. */
function builtFromMatches(request: SearchRequest, groups: readonly Shard[][], outcomes: readonly ShardsOutcome[], maxContentBytes: number) {
  const found = outcomes.flatMap((outcome, index) => foundIn(outcome, groups[index]!));
  const built = buildResponse(() => renderFiles(), request, plan(request, {}), found, outcomes, PUBLIC_URL, TIMINGS, maxContentBytes);
  return { ...built, files: Buffer.concat(built.files).toString() };
}

/**
 * The merged files are views of the parts' bytes, never copies: joined wherever they continue each other, and, when no
 * file was drafted again (`whole`), every other view one byte of punctuation.
 */
function checkViews(t: Test, views: readonly Uint8Array[], parts: readonly RenderedFiles[], label: string, whole: boolean): void {
  const partBuffers = new Set(parts.flatMap((part) => part.json.map((piece) => piece.buffer)));
  const joinable = views.findIndex(
    (view, i) => i > 0 && view.buffer === views[i - 1]!.buffer && views[i - 1]!.byteOffset + views[i - 1]!.byteLength === view.byteOffset,
  );
  t.equal(joinable, -1, `${label}: neighbouring views of the same bytes are joined`);
  if (whole)
    t.ok(
      views.every((view) => partBuffers.has(view.buffer) || view.byteLength === 1),
      `${label}: the files are the parts' own bytes`,
    );
}

const withoutTimes = (stats: object) => Object.fromEntries(Object.entries(stats).filter(([key]) => !TIME_STATS.includes(key)));

t.test('files rendered where they were found merge to the response built from all the matches', async (t) => {
  const shards = await shardsOfTwoRepositories(tempDir(t));
  t.ok(shards.length >= 4, `at least two shards a repository (${shards.length} shards)`);
  // Groups holding shards of both repositories, as the pool's would; and a group per repository, one finding nothing for `int needle`.
  const mixed = [shards.filter((_, i) => i % 2 === 0), shards.filter((_, i) => i % 2 === 1)];
  const byRepository = ['example.com/alpha', 'example.com/beta'].map((name) => shards.filter((shard) => shard.meta.repository.name === name));
  const cases = [
    ...[
      { query: 'needle', matches: 10_000 },
      { query: 'needle', matches: 10_000, contextLines: 2 },
      { query: 'need[a-z]+', matches: 10_000, isRegexEnabled: true },
    ].map((request) => ({ request, groups: mixed })),
    { request: { query: 'int needle', matches: 10_000 }, groups: byRepository },
  ];
  let compared = 0;
  let cutByContent = 0;
  let partCutByContent = 0;
  let cutByMatches = 0;
  let inPieces = 0;
  for (const { request: search, groups } of cases) {
    for (const [matches, maxContentBytes] of [10_000, 300, 57, 10, 1].flatMap((matches) =>
      [RESPONSE_CONTENT_BYTES, 2_000, 600, 0].map((bytes) => [matches, bytes] as const),
    )) {
      const request = { ...search, matches };
      const parts = groups.map((group) => renderedPart(request, group, maxContentBytes));
      const merged = mergeRenderedFiles(parts, request, redraftFrom(matchOfIn(parts, groups), request, PUBLIC_URL), maxContentBytes);
      const expected = builtFromMatches(
        request,
        groups,
        parts.map((part) => part.outcome),
        maxContentBytes,
      );
      const label = `${JSON.stringify(request)}, ${maxContentBytes} bytes of content`;
      if (merged === undefined) throw new Error(`${label}: not merged`);
      t.equal(Buffer.concat(merged.files).toString(), expected.files, `${label}: the same files in the same order`);
      checkViews(t, merged.files, parts, label, expected.stats.totalMatchCount <= matches);
      t.same([merged.repositoryInfo, merged.isSearchExhaustive], [expected.repositoryInfo, expected.isSearchExhaustive], `${label}: repositories, exhaustive`);
      t.same(withoutTimes(merged.stats), withoutTimes(expected.stats), `${label}: the same stats`);
      compared++;
      if (expected.stats.totalMatchCount > matches) cutByMatches++;
      else if (!expected.isSearchExhaustive) cutByContent++;
      if (parts.some((part) => part.cutByContent)) partCutByContent++;
      if (parts.some((part) => part.json.length > 1)) inPieces++;
    }
  }
  t.equal(compared, 80);
  t.ok(inPieces >= 5, `parts whose JSON spans several of the writer's pieces were merged (${inPieces})`);
  t.ok(
    cutByContent >= 6 && partCutByContent >= 6 && cutByMatches >= 20,
    `responses cut by the bound on content (${cutByContent}) or at \`matches\` (${cutByMatches}), and parts cut by the bound (${partCutByContent}), were compared`,
  );
});

t.test('the file cut at `matches` is drafted again from its match; without its match the files are not merged', async (t) => {
  const shards = await shardsOfTwoRepositories(tempDir(t));
  const groups = [shards.filter((_, i) => i % 2 === 0), shards.filter((_, i) => i % 2 === 1)];
  const request = { query: 'needle', matches: 10_000 };
  const parts = groups.map((group) => renderedPart(request, group, RESPONSE_CONTENT_BYTES));
  const total = parts.reduce((sum, part) => sum + part.outcome.totalRanges, 0);
  const asked: number[][] = [];
  const matchOf = matchOfIn(parts, groups);
  const counting = (part: number, file: number) => {
    asked.push([part, file]);
    return matchOf(part, file);
  };
  const all = { ...request, matches: total };
  t.equal(mergeRenderedFiles(parts, all, redraftFrom(counting, all, PUBLIC_URL))?.isSearchExhaustive, true, 'every range fits: exhaustive');
  t.same(asked, [], 'no file drafted again');
  const lessOne = { ...request, matches: total - 1 };
  const cut = mergeRenderedFiles(parts, lessOne, redraftFrom(counting, lessOne, PUBLIC_URL));
  t.same(
    [cut?.isSearchExhaustive, cut?.stats.actualMatchCount, asked.length],
    [false, total - 1, 1],
    'one range too many: the last file drafted again with one range less',
  );
  t.equal(
    mergeRenderedFiles(parts, lessOne, () => undefined),
    undefined,
    'its match not to be had: not merged',
  );
});

t.test('parts sent to another node (cluster/peer-files.ts) merge there as here, the cut file drafted again from its JSON', async (t) => {
  const shards = await shardsOfTwoRepositories(tempDir(t));
  const groups = [shards.filter((_, i) => i % 2 === 0), shards.filter((_, i) => i % 2 === 1)];
  const outline = (json: string) =>
    (JSON.parse(json) as FileResult[]).map(
      (file) => `${file.repository}/${file.fileName.text} ${file.chunks.map((chunk) => chunk.matchRanges.length).join(',')}`,
    );
  let cut = 0;
  for (const search of [{ query: 'needle' }, { query: 'need[a-z]+', isRegexEnabled: true, contextLines: 1 }]) {
    for (const matches of [10_000, 57, 10, 1]) {
      const request = { ...search, matches };
      const parts = groups.map((group) => renderedPart(request, group, RESPONSE_CONTENT_BYTES));
      const sent = decodeFiles(Buffer.concat(encodeFiles(parts)));
      const merged = mergeRenderedFiles(sent, request, (part, file, budget) => redraftJson(sent[part]!, file, budget));
      const expected = builtFromMatches(
        request,
        groups,
        parts.map((part) => part.outcome),
        RESPONSE_CONTENT_BYTES,
      );
      const label = JSON.stringify(request);
      if (merged === undefined) throw new Error(`${label}: not merged`);
      const files = Buffer.concat(merged.files).toString();
      if (expected.stats.totalMatchCount <= matches) t.equal(files, expected.files, `${label}: nothing cut, the same bytes`);
      else cut++;
      t.same(outline(files), outline(expected.files), `${label}: the same files, the same ranges in each chunk`);
      t.same([merged.repositoryInfo, merged.isSearchExhaustive], [expected.repositoryInfo, expected.isSearchExhaustive], `${label}: repositories, exhaustive`);
      t.same(withoutTimes(merged.stats), withoutTimes(expected.stats), `${label}: the same stats`);
    }
  }
  t.equal(cut, 6, 'six answers cut at `matches` in the middle of a file');
});
