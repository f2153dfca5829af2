/**
 * A search's 21 stats: the evaluation's counters summed over its tasks, or the parts' stats summed over a stream,
 * and how the answer ended (flush reason, times). The one place stats are added up.
 */
import type { FlushReason, SearchStats } from '../../api/types.js';
import type { EvaluationStats, StopReason } from '../../worker/search-protocol.js';
import { emptyEvaluationStats } from '../shard/evaluate.js';

const NANOS_PER_MS = 1e6;

/** Object.assign, not `{ ...emptyEvaluationStats(), … }`: docs/design.md, "The hot path's memory". */
export function emptyStats(): SearchStats {
  return Object.assign(emptyEvaluationStats(), {
    actualMatchCount: 0,
    totalMatchCount: 0,
    duration: 0,
    fileCount: 0,
    filesSkipped: 0,
    wait: 0,
    matchTreeConstruction: 0,
    matchTreeSearch: 0,
    flushReason: 'FLUSH_REASON_FINAL_FLUSH' as const,
  });
}

/** Adds `part`'s counters to `total`'s (all of an EvaluationStats; every counter of a SearchStats, its flush reason left alone). */
export function addCounters(total: SearchStats, part: EvaluationStats | SearchStats): void {
  for (const key of Object.keys(part) as (keyof EvaluationStats)[]) {
    if ((key as keyof SearchStats) !== 'flushReason') total[key] += part[key];
  }
}

/**
 * Stats summed over the parts of an answer, as Sourcebot sums a stream's chunks (`accumulatedStats`):
 * the counters added, the first flush reason that is not the final one kept.
 */
export function accumulateStats(total: SearchStats, part: SearchStats): void {
  addCounters(total, part);
  if (total.flushReason === 'FLUSH_REASON_FINAL_FLUSH') total.flushReason = part.flushReason;
}

/** The most severe way any part stopped: a deadline or cancellation anywhere makes the whole a timeout. */
export function combinedStop(stops: readonly StopReason[]): StopReason {
  for (const reason of ['cancelled', 'deadline', 'limit'] as const) if (stops.includes(reason)) return reason;
  return 'complete';
}

/** `stats` of an answer that stopped as `stop` and was `cut` or not: its files skipped and flush reason. */
export function settleEnd(stats: SearchStats, stop: StopReason, cut: boolean): void {
  stats.filesSkipped = stop === 'complete' ? 0 : Math.max(0, stats.filesConsidered - stats.fileCount);
  stats.flushReason = flushReason(stop, cut);
}

function flushReason(stop: StopReason, cut: boolean): FlushReason {
  if (stop === 'deadline' || stop === 'cancelled') return 'FLUSH_REASON_TIMER_EXPIRED';
  return cut ? 'FLUSH_REASON_MAX_SIZE' : 'FLUSH_REASON_FINAL_FLUSH';
}

/** The stats' times, in nanoseconds, from when the search started, was planned and had searched. */
export function timeStats(stats: SearchStats, timings: { started: number; planned: number; searched: number }): void {
  stats.matchTreeConstruction = Math.round((timings.planned - timings.started) * NANOS_PER_MS);
  stats.matchTreeSearch = Math.round((timings.searched - timings.planned) * NANOS_PER_MS);
  stats.duration = Math.round((performance.now() - timings.started) * NANOS_PER_MS);
}
