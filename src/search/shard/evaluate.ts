/**
 * A shard group's evaluation, in a search worker (and in process for the CLI
 * and the benchmarks): each shard in turn until enough is found here and in
 * the search's other tasks, every match scored for the merge.
 */
import type { SearchContextConfig } from '../../config/config.js';
import { ShardFormatError } from '../../index/errors.js';
import type { Shard } from '../../index/shard-reader.js';
import type { QueryNode } from '../../query/ast.js';
import { resultTypeOf } from '../../query/plan.js';
import type { DocumentMatch, EvaluationStats, ScoredMatch, SearchSignal, ShardsOutcome, StopReason } from '../../worker/search-protocol.js';
import { addRangesFound, isSearchCancelled, rangesFound } from '../signal.js';
import { scoreFile } from './rank.js';
import { CompiledPatterns, searchShard, type TaskSlice } from './shard-search.js';

export interface SearchLimits {
  /** Stop once this many match ranges are found here and elsewhere (`matches + 1`). */
  wanted: number;
  /** performance.now() value after which the search stops. */
  deadline: number;
  signal: SearchSignal;
  /** Set when the first shard is resumed at this document (SearchTask.resumeAt): an earlier task counted it. */
  startAt?: number;
  /** When the task gives its worker up (its outcome's `resume` then says where the rest starts). */
  slice?: TaskSlice;
}

/**
 * Evaluates `query` over `shards` in order until `limits.wanted` match ranges
 * (files for type:file, repositories for type:repo) are found (counting
 * those other tasks added to the signal), the deadline passes or the search
 * is cancelled, or the task's slice is over. A corrupt shard, or one whose
 * mapping faulted, is counted in `crashes` and skipped. A shard is counted
 * (considered, scanned or skipped) by the task that started it.
 */
export function searchShards(query: QueryNode, shards: readonly Shard[], contexts: Record<string, SearchContextConfig>, limits: SearchLimits): ShardsOutcome {
  const { wanted, deadline, signal, startAt, slice } = limits;
  const stats = emptyEvaluationStats();
  stats.shardFilesConsidered = shards.length - (startAt === undefined ? 0 : 1);
  const matches: ScoredMatch[] = [];
  let totalRanges = 0;
  let stop: StopReason = 'complete';
  let resume: ShardsOutcome['resume'];
  const enoughElsewhere = () => rangesFound(signal) >= wanted;
  const isCancelled = () => isSearchCancelled(signal) || enoughElsewhere();
  const onMatchRanges = (ranges: number) => addRangesFound(signal, ranges);
  const patterns = new CompiledPatterns();
  const resultType = resultTypeOf(query);
  // type:repo: a repository's first matching file stands for it, so each shard stops there and a repository found skips its other shards.
  const repositoriesFound = new Set<number>();
  for (let index = 0; index < shards.length; index++) {
    const shard = shards[index]!;
    if (enoughElsewhere()) {
      stop = 'limit';
      break;
    }
    if (resultType === 'repo' && repositoriesFound.has(shard.meta.repository.id)) {
      stats.shardsSkipped++;
      continue;
    }
    const resumed = index === 0 ? startAt : undefined;
    const shardLimits = { maxMatchRanges: resultType === 'repo' ? 1 : wanted - rangesFound(signal), countFiles: resultType !== undefined, deadline, isCancelled, onMatchRanges, startAt: resumed, slice };
    let result;
    try {
      result = searchShard(shard, query, contexts, shardLimits, patterns);
    } catch (error) {
      if (!(error instanceof ShardFormatError) && !shard.faulted) throw error;
    }
    const matchesBefore = matches.length;
    // Written out, not `{ ...match, shard, score }`: docs/design.md, "The hot path's memory".
    for (const match of result?.matches ?? []) matches.push({ doc: match.doc, content: match.content, path: match.path, shard: index, score: score(shard, match) });
    if (result === undefined || shard.faulted) {
      matches.length = matchesBefore;
      stats.crashes++; // a corrupt or shrunk shard costs its own results, never the search
      continue;
    }
    const shardStats = result.stats;
    if (result.matches.length > 0 && resultType === 'repo') repositoriesFound.add(shard.meta.repository.id);
    // A resumed shard was counted by the task that started it.
    if (resumed === undefined) {
      if (result.matches.length > 0) stats.shardsScanned++;
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
      resume = { shard: index, doc: result.resumeAt! };
      stats.shardFilesConsidered -= shards.length - 1 - index; // the rest are the resuming task's
      break;
    }
    if (result.stopReason !== 'complete' && !(resultType === 'repo' && result.stopReason === 'limit')) {
      // Stopping because other tasks found enough is the match cap, not a cancellation.
      stop = result.stopReason === 'cancelled' && !isSearchCancelled(signal) ? 'limit' : result.stopReason;
      if (stop !== 'limit') break;
    }
  }
  return resume ? { kind: 'matches', matches, stats, totalRanges, stop, resume } : { kind: 'matches', matches, stats, totalRanges, stop };
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
