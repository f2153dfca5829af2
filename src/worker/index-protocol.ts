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
}

/** What a pass did with one repository. */
export type RepositoryOutcome =
  | { name: string; status: 'unchanged' }
  | { name: string; status: 'indexed'; documents: number; sourceBytes: number; shardBytes: number; seconds: number; warnings: string[] }
  | { name: string; status: 'failed'; error: string };

export type IndexReply =
  | { type: 'started'; name: string }
  | { type: 'done'; outcomes: RepositoryOutcome[] }
  /** The pass could not run at all (e.g. another process holds the data directory). */
  | { type: 'failed'; error: string };
