/** Messages between the index scheduler and its index thread. */
import type { Config } from '../config/config.js';
import type { RepositoryOutcome } from './run-index.js';

/** Run one pass with `config`: over the repositories named in `only`, or over all of them (dropping those no longer configured). */
export interface IndexRequest {
  config: Config;
  only?: string[];
}

export type IndexReply =
  | { type: 'started'; name: string }
  | { type: 'done'; outcomes: RepositoryOutcome[] }
  /** The pass could not run at all (e.g. another process holds the data directory). */
  | { type: 'failed'; error: string };
