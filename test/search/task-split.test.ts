import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { ShardWriter } from '../../src/index/shard-writer.js';
import { noSymbols } from '../../src/index/symbols.js';
import type { QueryNode } from '../../src/query/ast.js';
import { plan } from '../../src/query/plan.js';
import type { ShardFile } from '../../src/search/catalog.js';
import { ShardCache } from '../../src/search/shard-cache.js';
import { FRONT_END_LOOKUPS, taskSplit, type SplitBounds } from '../../src/search/task-split.js';
import { tempDir } from '../helpers/tmp.js';

/** Two shards of 60 files each: every file holds `common`, one file of each `PM_RESUME`, one of the first `rare_only_here`. */
/** The tasks a search of `query` runs as with a share of `share` workers, not alone, never on the front end (`taskSplit`). */
function taskCount(query: QueryNode, shards: readonly ShardFile[], share: number, mapped: ShardCache, fewBytes: number): number {
  return taskSplit(query, shards, mapped, { share, alone: false, fewBytes, frontEnd: false }).tasks;
}

function twoShards(dir: string): ShardFile[] {
  return [0, 1].map((index) => {
    const writer = new ShardWriter({
      repository: { id: 1, name: 'test/corpus', codeHostType: 'genericGitHost', public: true, archived: false, fork: false },
      branches: [{ name: 'HEAD', commit: 'c'.repeat(40) }],
      shardIndex: index,
    });
    for (let i = 0; i < 60; i++) {
      const text = `common text ${i}\n${i === 7 ? 'PM_RESUME\n' : ''}${index === 0 && i === 9 ? 'rare_only_here\n' : ''}`;
      const content = Buffer.from(text);
      writer.add({ path: `src/${index}/f${i}.c`, content, originalSize: content.length, language: '', branchMask: 1n, flags: 0, symbols: noSymbols() });
    }
    const file = path.join(dir, `corpus.${index}.trawl`);
    writer.write(file);
    return { path: file, bytes: fs.statSync(file).size };
  });
}

t.test('a search runs as one task when the posting lists its candidates come from are short', async (t) => {
  const shards = twoShards(tempDir(t));
  const mapped = new ShardCache();
  t.equal(
    taskCount(plan({ query: 'PM_RESUME', matches: 100 }, {}), shards, 2, mapped, 1_000_000),
    2,
    'shards not mapped yet: its share (no search waits for a mapping)',
  );
  for (const shard of shards) mapped.prefetch(shard.path);
  const tasks = (query: string, fewBytes: number, options: { regex?: boolean; caseSensitive?: boolean } = {}, share = 2) =>
    taskCount(
      plan({ query, matches: 100, isRegexEnabled: options.regex ?? false, isCaseSensitivityEnabled: options.caseSensitive ?? true }, {}),
      shards,
      share,
      mapped,
      fewBytes,
    );
  /** The fewest posting bytes under which `query` runs as one task: its candidates' bytes plus one. */
  const oneTaskFrom = (query: string, options: { regex?: boolean; caseSensitive?: boolean } = {}) => {
    for (let bytes = 1; bytes <= 100_000; bytes++) if (tasks(query, bytes, options) === 1) return bytes;
    return Infinity;
  };

  t.equal(tasks('PM_RESUME', 1_000_000, {}, 1), 1, "a search's share of one worker is one task");
  t.equal(tasks('PM_RESUME', 1_000_000, {}, 3), 1, 'a rare literal runs as one task whatever its share');
  t.equal(tasks('PM_RESUME', 1), 2, 'but not when its candidates reach the bound: its share');
  t.equal(tasks('NOWHERE_TO_BE_FOUND', 1), 1, 'a literal no shard holds has no candidates');

  const rare = oneTaskFrom('PM_RESUME');
  const common = oneTaskFrom('common');
  t.ok(rare > 1 && rare < common, `more candidates, more posting bytes: ${rare} < ${common}`);
  t.ok(oneTaskFrom('rare_only_here') < rare, 'a literal in one shard counts less than one in both');
  t.ok(oneTaskFrom('pm_resume', { caseSensitive: false }) >= rare, 'every casing of a case-insensitive literal counts');
  t.equal(oneTaskFrom('PM_RESUME common'), rare, 'an and: its rarest operand');
  t.equal(oneTaskFrom('common -content:PM_RESUME'), common, 'a negation narrows nothing');
  t.ok(oneTaskFrom('PM_RESUME or rare_only_here') > rare, 'an or: every operand');
  t.ok(oneTaskFrom('file:src/0/f17\\.c$') < oneTaskFrom('file:src/'), 'a path regex: its rarest trigram in the path index');

  t.equal(tasks('PM_RE\\w+', 1_000_000, { regex: true }), 2, 'a regex over content verifies too slowly for one worker alone');
  t.equal(tasks('-content:PM_RESUME', 1_000_000), 2, 'a negation alone: every document');
  t.equal(tasks('PM', 1_000_000), 2, 'a literal shorter than a trigram: every document');
  t.equal(tasks('repo:corpus', 1_000_000), 2, 'a repository pattern: every document');

  let seed = 11;
  const long = Array.from({ length: 120 }, () => 'abcdefghijklmnopqrstuvwxyz'[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26]).join('');
  t.equal(tasks(long, 1_000_000, { caseSensitive: false }), 2, 'a literal with more casings than the estimate may look up is split');
  t.equal(tasks(long, 1_000_000, { caseSensitive: true }), 1, 'as it is not when the lookups suffice');

  const missing = [...shards, { path: path.join(path.dirname(shards[0]!.path), 'gone.trawl'), bytes: 1 }];
  t.equal(
    taskCount(plan({ query: 'PM_RESUME', matches: 100 }, {}), missing, 2, mapped, 1_000_000),
    2,
    'a shard that cannot be opened: its share (the search reports it)',
  );
});

t.test('the front end starts a search itself when it compiles no regex and its lookups are few', async (t) => {
  const shards = twoShards(tempDir(t));
  const mapped = new ShardCache();
  for (const shard of shards) mapped.prefetch(shard.path);
  const bounds: SplitBounds = { share: 2, alone: true, fewBytes: 1024, frontEnd: true };
  const startsHere = (query: string, changes: Partial<SplitBounds> = {}, regex = false) =>
    taskSplit(plan({ query, matches: 100, isRegexEnabled: regex, isCaseSensitivityEnabled: true }, {}), shards, mapped, { ...bounds, ...changes }).startsHere;

  t.ok(startsHere('PM_RESUME'), 'few candidates, alone: here');
  t.notOk(startsHere('PM_RESUME', { alone: false }), 'few candidates while other searches are in flight: a worker');
  t.ok(startsHere('NOWHERE_TO_BE_FOUND', { alone: false, share: 1 }), 'no candidates: here, whatever the load');
  t.notOk(startsHere('common', { fewBytes: 8 }), 'candidates past the bound: a worker');
  t.notOk(startsHere('PM_RESUME', { frontEnd: false }), 'not when the pool says never');
  t.ok(startsHere('file:src/0/f7\\.c$', {}, true), 'a small regex, alone: compiled here');
  t.notOk(startsHere('NOWHERE_TO_BE_FOUND or file:src/0/f7\\.c$', { alone: false }, true), 'not while others are in flight');
  t.notOk(startsHere('file:src/0/f7\\.c\\p{L}{20}', {}, true), 'a Unicode property: a worker, however few its candidates');
  t.notOk(startsHere('file:src/0/f7\\.c[a-zé]', {}, true), 'a class past ASCII: a worker');
  t.notOk(startsHere('file:src/0/f7\\.c(x{9}){9}', {}, true), 'repetitions that multiply past the bound: a worker');
  t.notOk(startsHere('file:src/0/f7\\.c(?i)x', {}, true), 'syntax whose cost cannot be told: a worker');
  const withContext = plan({ query: 'PM_RESUME context:kernel', matches: 100 }, { kernel: { include: ['test/*'], exclude: [] } });
  t.notOk(taskSplit(withContext, shards, mapped, bounds).startsHere, 'a context names patterns of its own: a worker');
  t.ok(startsHere('PM_RESUME lang:C'), 'a language filter compiles nothing');

  // A case-sensitive literal no shard holds: each of its distinct trigrams looked up in each of the two shards.
  let seed = 7;
  const absent = Array.from({ length: 200 }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26]).join('');
  const lookups = 2 * new Set(Array.from({ length: absent.length - 2 }, (_, i) => absent.slice(i, i + 3))).size;
  t.ok(lookups > FRONT_END_LOOKUPS.busy && lookups <= FRONT_END_LOOKUPS.alone, `the literal's ${lookups} lookups sit between the two bounds`);
  t.ok(startsHere(absent), 'alone: its lookups are within the bound');
  t.notOk(startsHere(absent, { alone: false }), 'busy: past the bound, a worker');

  const missing = [...shards, { path: path.join(path.dirname(shards[0]!.path), 'gone.trawl'), bytes: 1 }];
  const query = plan({ query: 'PM_RESUME', matches: 100 }, {});
  t.notOk(taskSplit(query, missing, mapped, bounds).startsHere, 'a shard the front end has not mapped: a worker');
  t.notOk(taskSplit(query, [], mapped, bounds).startsHere, 'no shard: nothing to start');
});
