/** Messages between the index scheduler and its index thread. */
import type { RepositoryOutcome } from './run-index.js';

/** Run one pass: over the repositories named in `only`, or over all of them. */
export interface IndexRequest {
  only?: string[];
}

export type IndexReply =
  | { type: 'started'; name: string }
  | { type: 'done'; outcomes: RepositoryOutcome[] }
  /** The pass could not run at all (e.g. another process holds the data directory). */
  | { type: 'failed'; error: string };
