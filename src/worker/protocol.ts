/**
 * The messages between the front end and the search workers (Piscina tasks).
 * Everything here is structured-cloneable; the signal is a SharedArrayBuffer
 * view, so it is shared, not copied.
 */
import type { SearchContextConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import type { ShardsOutcome } from '../search/engine.js';
import type { SearchSignal } from '../search/signal.js';

/** Search one group of shards. */
export interface SearchTask {
  /** Manifest generation the shard list comes from. */
  generation: number;
  /** Absolute paths of the group's shard files, in search order. */
  shardFiles: string[];
  query: QueryNode;
  contexts: Record<string, SearchContextConfig>;
  /** Stop once this many match ranges are found in all tasks of the search. */
  wanted: number;
  /** Wall-clock deadline, milliseconds since the epoch (threads have different performance.now() origins). */
  deadlineEpochMs: number;
  signal: SearchSignal;
}

/** The group's matches (`shard` indexes SearchTask.shardFiles) and counters; a shard that failed to open counts as a crash. */
export type SearchTaskResult = ShardsOutcome;
