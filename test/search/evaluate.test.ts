import t from 'tap';
import path from 'node:path';
import { validateConfig } from '../../src/config/config.js';
import type { Shard } from '../../src/index/shard-reader.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { parseQuery } from '../../src/query/parser.js';
import { openShardSet } from '../../src/search/shard-set.js';
import { searchShards } from '../../src/search/shard/evaluate.js';
import { TaskSlice } from '../../src/search/shard/shard-search.js';
import { createSignal } from '../../src/search/signal.js';
import type { ScoredMatch } from '../../src/worker/search-protocol.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

/** Two repositories of several shards each, `needle` in every file, more often in some. */
async function manyShards(root: string): Promise<Shard[]> {
  const filler = 'plain filler line without the word\n'.repeat(3000);
  const repos = ['example.com/alpha', 'example.com/beta'].map((name) => {
    const repoDir = path.join(root, name.replace('/', '_'));
    makeRepository(
      repoDir,
      Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`src/file${String(i).padStart(2, '0')}.c`, `${'needle here\n'.repeat(1 + (i % 4))}${filler}`])),
    );
    return { name, path: repoDir, public: true };
  });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos, index: { maxShardContentBytes: 1 << 20, ctagsCommand: '' } }, 'test');
  await runIndex(config);
  return openShardSet(config.dataDir).shards;
}

t.test('a capped evaluation keeps the best of what every shard found, however the shards are grouped, and no more than the cap', async (t) => {
  const shards = await manyShards(tempDir(t));
  t.ok(shards.length >= 4, `${shards.length} shards`);
  const wanted = 21;
  const query = parseQuery('needle', { regex: false, caseSensitive: false });
  const evaluate = (group: readonly Shard[]) => searchShards(query, group, {}, { wanted, deadline: performance.now() + 60_000, signal: createSignal() });
  const ranges = (match: ScoredMatch) => (match.content.length + match.path.length) / 2;
  const key = (group: readonly Shard[]) => (match: ScoredMatch) =>
    `${group[match.shard]!.meta.repository.name} ${group[match.shard]!.path(match.doc)} ${match.score}`;

  const whole = evaluate(shards);
  const kept = whole.matches.map(key(shards));
  const total = whole.matches.reduce((sum, match) => sum + ranges(match), 0);
  t.ok(total >= wanted && total - ranges(whole.matches.at(-1)!) < wanted, `the cap and the one file that reaches it (${total} ranges)`);
  t.equal(whole.stop, 'limit', 'cut, so not exhaustive');

  // Each shard alone, then the best of them all: what the grouped evaluation must keep.
  const alone = shards.flatMap((shard) => evaluate([shard]).matches.map((match) => ({ match, name: key([shard])(match) })));
  alone.sort((a, b) => b.match.score - a.match.score || (a.name < b.name ? -1 : 1));
  let sum = 0;
  const best = alone.filter(({ match }) => (sum < wanted ? ((sum += ranges(match)), true) : false)).map(({ name }) => name);
  t.same(new Set(kept), new Set(best), "the same files as the best of each shard's own");

  const half = Math.ceil(shards.length / 2);
  const split = [shards.slice(0, half), shards.slice(half)].flatMap((group) => evaluate(group).matches.map(key(group)));
  t.ok(
    kept.every((name) => split.includes(name)),
    'split in two groups, they keep every file the whole kept',
  );
});

t.test('a shard searched over several tasks is counted once, scanned when any of them found a match', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'r');
  // Every file a candidate for the literal, only the last one a match of the regex.
  makeRepository(repoDir, Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}.c`, i === 7 ? 'needle7\n' : 'needle\n'])));
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/r', path: repoDir, public: true }], index: { ctagsCommand: '' } },
    'test',
  );
  await runIndex(config);
  const { shards } = openShardSet(config.dataDir);
  const query = parseQuery('needle\\d', { regex: true, caseSensitive: true });
  const limits = () => ({ wanted: 100, deadline: performance.now() + 60_000, signal: createSignal() });
  const whole = searchShards(query, shards, {}, limits());
  t.equal(whole.matches.length, 1);
  t.same([whole.stats.shardsScanned, whole.stats.shardsSkipped], [1, 0], 'in one task: one shard scanned');

  // A slice of one document a task, each task resuming where the last gave up, as the pool does.
  const slice = () => new TaskSlice(0, () => true);
  let outcome = searchShards(query, shards, {}, { ...limits(), slice: slice() });
  const counted = { ...outcome.stats };
  let tasks = 1;
  let found = outcome.matches.length;
  while (outcome.resume) {
    const { shard, at, found: before } = outcome.resume;
    outcome = searchShards(query, shards.slice(shard), {}, { ...limits(), slice: slice(), resume: { at, found: before } });
    tasks++;
    found += outcome.matches.length;
    counted.shardsScanned += outcome.stats.shardsScanned;
    counted.shardsSkipped += outcome.stats.shardsSkipped;
    counted.shardsSkippedFilter += outcome.stats.shardsSkippedFilter;
    counted.shardFilesConsidered += outcome.stats.shardFilesConsidered;
  }
  t.ok(tasks > 2, `searched over ${tasks} tasks`);
  t.equal(found, 1, 'the same match');
  t.same(
    [counted.shardFilesConsidered, counted.shardsScanned, counted.shardsSkipped, counted.shardsSkippedFilter],
    [1, 1, 0, 0],
    'the shard considered once, and scanned, not skipped',
  );
});
