/**
 * A shard group's evaluation, in a search worker (and in process for the CLI
 * and the benchmarks): each shard in turn, each up to the match cap of its
 * own, every match scored for the merge. What a shard finds depends on the
 * query and the shard alone, never on how the search was split or timed, so
 * the same search finds the same files (docs/design.md, "The search path").
 */
import type { SearchContextConfig } from '../../config/config.js';
import { ShardFormatError } from '../../index/errors.js';
import type { Shard } from '../../index/shard-reader.js';
import type { QueryNode } from '../../query/ast.js';
import { resultTypeOf } from '../../query/plan.js';
import type { DocumentMatch, EvaluationStats, ScoredMatch, SearchSignal, ShardResume, ShardsOutcome, StopReason } from '../../worker/search-protocol.js';
import { isSearchCancelled } from '../signal.js';
import { compareRanks, scoreFile } from './rank.js';
import { CompiledPatterns } from './compiled-patterns.js';
import { searchShard, type TaskSlice } from './shard-search.js';

export interface SearchLimits {
  /** Each shard stops once it holds this many match ranges (files for type:file): `matches + 1`. */
  wanted: number;
  /** performance.now() value after which the search stops. */
  deadline: number;
  signal: SearchSignal;
  /** Set when the first shard is resumed (SearchTask.resume): where in its evaluation order, and what the earlier task counted there. */
  resume?: ShardResume;
  /** When the task gives its worker up (its outcome's `resume` then says where the rest starts). */
  slice?: TaskSlice;
}

/**
 * Evaluates `query` over `shards` in order, each until `limits.wanted` match
 * ranges (files for type:file, one for type:repo) are found in it, the
 * deadline passes or the search is cancelled, or the task's slice is over.
 * The task keeps the best of what it found, by score, up to `wanted`
 * ranges (anything below cannot be in the answer). A corrupt shard, or one
 * whose mapping faulted, is counted in `crashes` and skipped. A shard is
 * counted considered by the task that started it, and scanned or skipped by
 * the task that finished it.
 */
export function searchShards(query: QueryNode, shards: readonly Shard[], contexts: Record<string, SearchContextConfig>, limits: SearchLimits): ShardsOutcome {
  const { wanted, deadline, signal, slice } = limits;
  const stats = emptyEvaluationStats();
  stats.shardFilesConsidered = shards.length - (limits.resume === undefined ? 0 : 1);
  let matches: ScoredMatch[] = [];
  /** What `matches` hold against the cap. */
  let held = 0;
  let totalRanges = 0;
  let stop: StopReason = 'complete';
  let resume: ShardsOutcome['resume'];
  const isCancelled = () => isSearchCancelled(signal);
  const patterns = new CompiledPatterns();
  const resultType = resultTypeOf(query);
  // type:repo: a repository's first matching file stands for it, so each shard stops there and a repository found skips its other shards.
  const repositoriesFound = new Set<number>();
  const counts = resultType !== undefined;
  for (let index = 0; index < shards.length; index++) {
    const shard = shards[index]!;
    if (resultType === 'repo' && repositoriesFound.has(shard.meta.repository.id)) {
      stats.shardsSkipped++;
      continue;
    }
    const resumed = index === 0 ? limits.resume : undefined;
    const shardLimits = {
      maxMatchRanges: resultType === 'repo' ? 1 : wanted - (resumed?.found ?? 0),
      countFiles: counts,
      deadline,
      isCancelled,
      startAt: resumed?.at,
      slice,
    };
    let result;
    try {
      result = searchShard(shard, query, contexts, shardLimits, patterns);
    } catch (error) {
      if (!(error instanceof ShardFormatError) && !shard.faulted) throw error;
    }
    const matchesBefore = matches.length;
    const heldBefore = held;
    for (const match of result?.matches ?? []) {
      // Written out, not `{ ...match, shard, score }`: docs/design.md, "The hot path's memory".
      matches.push({ doc: match.doc, content: match.content, path: match.path, shard: index, score: score(shard, match) });
      held += weight(match, counts);
    }
    if (result === undefined || shard.faulted) {
      matches.length = matchesBefore;
      held = heldBefore;
      stats.crashes++; // a corrupt or shrunk shard costs its own results, never the search
      continue;
    }
    const shardStats = result.stats;
    if (result.matches.length > 0 && resultType === 'repo') repositoriesFound.add(shard.meta.repository.id);
    // A shard given up mid-way is counted by the task that finishes it, with what the earlier tasks found there.
    if (result.stopReason !== 'yielded') {
      if (result.matches.length > 0 || (resumed?.found ?? 0) > 0) stats.shardsScanned++;
      else if (shardStats.ngramLookups === 0 && shardStats.filesConsidered === 0) stats.shardsSkippedFilter++;
      else stats.shardsSkipped++;
    }
    stats.filesConsidered += shardStats.filesConsidered;
    stats.filesLoaded += shardStats.filesLoaded;
    stats.contentBytesLoaded += shardStats.contentBytesLoaded;
    stats.indexBytesLoaded += shardStats.indexBytesLoaded;
    stats.ngramLookups += shardStats.ngramLookups;
    stats.ngramMatches += shardStats.ngramMatches;
    stats.regexpsConsidered += shardStats.regexpsConsidered;
    totalRanges += shardStats.matchRanges;
    if (result.stopReason === 'yielded') {
      resume = { shard: index, at: result.resumeAt!, found: (resumed?.found ?? 0) + result.counted };
      stats.shardFilesConsidered -= shards.length - 1 - index; // the rest are the resuming task's
      break;
    }
    if (result.stopReason === 'limit' && resultType !== 'repo') stop = 'limit';
    else if (result.stopReason === 'cancelled' || result.stopReason === 'deadline') {
      stop = result.stopReason;
      break;
    }
    if (held > 2 * wanted) ({ matches, held } = best(matches, wanted, counts, shards));
  }
  if (held > wanted) {
    const found = matches.length;
    ({ matches } = best(matches, wanted, counts, shards));
    if (matches.length < found && stop === 'complete') stop = 'limit';
  }
  return resume ? { kind: 'matches', matches, stats, totalRanges, stop, resume } : { kind: 'matches', matches, stats, totalRanges, stop };
}

/** What a match counts against the cap: its ranges, or one when files are counted. */
function weight(match: DocumentMatch, counts: boolean): number {
  return counts ? 1 : (match.content.length + match.path.length) / 2;
}

/**
 * The best of `matches` by score (ties by repository and path, as the merge orders them), up to the one that
 * reaches `wanted`, and what they hold: the rest cannot be in any answer, which takes files best first until `matches`.
 */
function best(matches: ScoredMatch[], wanted: number, counts: boolean, shards: readonly Shard[]): { matches: ScoredMatch[]; held: number } {
  const at = (match: ScoredMatch) => shards[match.shard]!;
  const repositoryOf = (match: ScoredMatch) => at(match).meta.repository.name;
  const pathOf = (match: ScoredMatch) => at(match).path(match.doc);
  const sorted = matches.sort((a, b) => compareRanks(a, b, repositoryOf, pathOf));
  let held = 0;
  let end = 0;
  while (end < sorted.length && held < wanted) held += weight(sorted[end++]!, counts);
  return { matches: sorted.slice(0, end), held };
}

export function emptyEvaluationStats(): EvaluationStats {
  return {
    crashes: 0,
    shardFilesConsidered: 0,
    shardsScanned: 0,
    shardsSkipped: 0,
    shardsSkippedFilter: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    contentBytesLoaded: 0,
    indexBytesLoaded: 0,
    ngramLookups: 0,
    ngramMatches: 0,
    regexpsConsidered: 0,
  };
}

function score(shard: Shard, match: DocumentMatch): number {
  return scoreFile({
    content: match.content.length > 0 ? shard.content(match.doc) : Buffer.alloc(0),
    ranges: match.content,
    path: shard.pathBytes(match.doc),
    pathRanges: match.path,
    symbols: shard.symbolsOverlapping(match.doc, match.content),
    doc: match.doc,
    documentCount: shard.documentCount,
  });
}
