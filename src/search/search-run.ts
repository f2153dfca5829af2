/**
 * One search in flight, from its admission to its answer: what was asked, its plan, signal and place among the
 * searches in flight, when it started, and the stats it settles. Every task and render spec of the search is made
 * here, so the pipeline's stages (docs/design.md, "The search path") take the search and nothing else.
 */
import type { SearchRequest, SearchStats } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import type { RenderSpec, SearchSignal, SearchTask } from '../worker/search-protocol.js';
import type { Admission } from './admissions.js';

/** What every search of a pool takes from its configuration. */
export interface SearchSettings {
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  timeBudgetMs: number;
  /** Searches in flight at most (admissions.ts). */
  maxQueuedSearches: number;
}

/** What the pool counts over all searches (its metrics). */
export interface PoolCounters {
  /** Tasks that failed in a worker (not corrupt shards: those are per-search `crashes`). */
  workerFailures: number;
  /** Shards that searches could not read: the `crashes` of every answer. */
  shardFailures: number;
  /** Search tasks that gave their worker up to another caller's (contention.ts). */
  tasksYielded: number;
  /** Searches that gave their place in a full queue to another caller's (admissions.ts). */
  searchesDisplaced: number;
}

export interface SearchRunInit {
  request: SearchRequest;
  query: QueryNode;
  signal: SearchSignal;
  /** performance.now() of this thread when the search started (before it was admitted). */
  started: number;
  /** Who asks: the search's tasks wait in its turns (caller-queue.ts). */
  caller: string | undefined;
  admission: Admission;
  /** The manifest generation its shards come from. */
  generation: number;
  /** Whether the front end runs the search's first task itself (task-split.ts, worker-source.ts). */
  startsHere: boolean;
  settings: SearchSettings;
  counters: PoolCounters;
}

export class SearchRun {
  readonly request: SearchRequest;
  readonly query: QueryNode;
  readonly signal: SearchSignal;
  readonly started: number;
  /** When the query was planned: the search was admitted with its plan. */
  readonly planned = performance.now();
  readonly caller: string | undefined;
  readonly admission: Admission;
  readonly generation: number;
  readonly startsHere: boolean;
  readonly settings: SearchSettings;
  readonly counters: PoolCounters;

  constructor(init: SearchRunInit) {
    this.request = init.request;
    this.query = init.query;
    this.signal = init.signal;
    this.started = init.started;
    this.caller = init.caller;
    this.admission = init.admission;
    this.generation = init.generation;
    this.startsHere = init.startsHere;
    this.settings = init.settings;
    this.counters = init.counters;
  }

  /** A task over `shardFiles`: the whole search's when it has `render`, one of its several rendering their files with `renderFiles`. One literal, not a spread plus members (docs/design.md, "The hot path's memory"). */
  task(shardFiles: string[], render?: RenderSpec, renderFiles?: RenderSpec): SearchTask {
    return {
      generation: this.generation,
      shardFiles,
      query: this.query,
      contexts: this.settings.contexts,
      wanted: this.request.matches + 1,
      deadlineEpochMs: performance.timeOrigin + this.started + this.settings.timeBudgetMs,
      signal: this.signal,
      render,
      renderFiles,
      partRanges: this.request.exhaustive ? partRanges(this.request) : undefined,
    };
  }

  /** What a worker needs to build this search's response into `slot`, if given, or a stream's part of `request`. */
  renderSpec(slot?: number, request = this.request): RenderSpec {
    const { timeOrigin } = performance;
    return {
      request,
      publicUrl: this.settings.publicUrl,
      startedEpochMs: timeOrigin + this.started,
      plannedEpochMs: timeOrigin + this.planned,
      slot,
    };
  }

  /** When the search started, was planned, and had searched (now). */
  timings(): { started: number; planned: number; searched: number } {
    return { started: this.started, planned: this.planned, searched: performance.now() };
  }

  /** `stats` as the answer has them: with the search's wait for workers, its crashes counted by the pool. */
  settle<T extends SearchStats>(stats: T, waitMs: number): T {
    stats.wait = nanoseconds(waitMs);
    this.counters.shardFailures += stats.crashes;
    return stats;
  }
}

/** About how many lines of content (a match range's, with its context) one part of an exhaustive search holds: a few MiB of JSON. */
const PART_LINES = 1 << 14;
/** Match ranges one part of an exhaustive search with `whole` holds at most: each brings its file's content. */
const WHOLE_PART_RANGES = 16;

/** The match ranges a task of the exhaustive search of `request` holds before it hands its part on (SearchTask.partRanges). */
export function partRanges(request: SearchRequest): number {
  return request.whole ? WHOLE_PART_RANGES : Math.max(1, Math.floor(PART_LINES / (1 + 2 * (request.contextLines ?? 0))));
}

export const nanoseconds = (ms: number) => Math.round(ms * 1e6);
