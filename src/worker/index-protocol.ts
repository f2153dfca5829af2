/** Messages between the index scheduler and its index thread, and the thread's priority. */
import type { Config } from '../config/config.js';

/**
 * How much lower the index thread's scheduling priority is than the front
 * end's (nice(2) steps): below the search workers' too, so that searches get
 * the cores first while a repository is re-indexed. The threads and ctags
 * processes the index thread starts inherit it.
 */
export const INDEX_NICE_INCREMENT = 15;

/** Run one pass with `config`: over the repositories named in `only`, or over all of them (dropping those no longer configured). */
export interface IndexRequest {
  config: Config;
  only?: string[];
  /** In a cluster: the other nodes serving each repository, to copy its shards from instead of building them. */
  replicas?: ShardSources;
}

/** Where a repository's shards may be copied from (indexer/shard-copy.ts): nodes' base URLs, and the cluster key. */
export interface ShardSources {
  key: string;
  nodes: Record<string, string[]>;
}

/** What a pass did with one repository. */
export type RepositoryOutcome =
  | { name: string; status: 'unchanged' }
  | {
      name: string;
      status: 'indexed';
      documents: number;
      sourceBytes: number;
      shardBytes: number;
      seconds: number;
      warnings: string[];
      /** The node whose shards were copied (its URL); absent when they were built here. */
      copiedFrom?: string;
      /** Why the shards of the nodes asked were not copied. */
      notCopied?: NotCopied[];
    }
  | { name: string; status: 'failed'; error: string };

/** Why a node's shards were not copied: `damaged` when they were what was wanted but came other than offered (indexer/shard-copy.ts). */
export interface NotCopied {
  node: string;
  reason: string;
  damaged: boolean;
}

export type IndexReply =
  | { type: 'started'; name: string }
  | { type: 'done'; outcomes: RepositoryOutcome[] }
  /** The pass could not run at all (e.g. another process holds the data directory). */
  | { type: 'failed'; error: string };

/**
 * The stop handshake of the index thread: one Int32 in shared memory. `terminate()` while the thread is inside
 * the addon aborts the process (N-API cannot throw into a thread being terminated), so the thread enters the addon
 * only through `uninterrupted`, and the scheduler stops it only through `stopOutsideNative`, which claims the word
 * when the thread is outside the addon and keeps it from entering again (docs/design.md, "Stop").
 */
const OUTSIDE = 0;
const INSIDE = 1;
const STOPPING = 2;

export function stopWord(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/** The index thread is being stopped: the pass ends here. */
export class IndexStoppedError extends Error {
  constructor() {
    super('the index thread is stopping');
    this.name = 'IndexStoppedError';
  }
}

/** Runs `run` (native code) unless the thread is being stopped (IndexStoppedError). */
export function uninterrupted<T>(word: Int32Array, run: () => T): T {
  if (Atomics.compareExchange(word, 0, OUTSIDE, INSIDE) !== OUTSIDE) throw new IndexStoppedError();
  try {
    return run();
  } finally {
    Atomics.store(word, 0, OUTSIDE);
  }
}

/** Resolves once the thread is outside the addon and can no longer enter it (or after `timeoutMs`): then it may be terminated. */
export async function stopOutsideNative(word: Int32Array, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Atomics.compareExchange(word, 0, OUTSIDE, STOPPING) === INSIDE && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}
