/**
 * One search run start to end on the caller's thread, over shards it has
 * mapped (the CLI's `trawl search`, the benchmarks): plan, evaluate, build
 * the response. The daemon runs the same steps across threads (pool.ts, sinks.ts).
 */
import type { SearchRequest, SearchResponse } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { Shard } from '../index/shard-reader.js';
import { plan, resultTypeOf } from '../query/plan.js';
import type { SearchSignal } from '../worker/search-protocol.js';
import { buildLocalResponse, collectFiles, type Built, type FileSink } from './response/build.js';
import { partRanges } from './search-run.js';
import { searchShards } from './shard/evaluate.js';
import { TaskSlice } from './shard/shard-search.js';
import { createSignal } from './signal.js';

export interface SearchEnvironment {
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  /** A search stops after this long and returns what it found (default 10 s). */
  timeBudgetMs: number;
  /** Cancels the search when set (client gone). */
  signal?: SearchSignal;
  /** The bound on a response's file content in bytes (response/cut.ts RESPONSE_CONTENT_BYTES unless set). */
  responseContentBytes?: number;
}

/** Runs `request` over `shards`; throws what query/plan.ts's `plan` throws. */
export function search(request: SearchRequest, shards: readonly Shard[], environment: SearchEnvironment): SearchResponse {
  return searchInto(collectFiles, request, shards, environment);
}

/** As `search`, its files made into what `files` makes of them (renderFiles: the JSON a worker answers /api/search with). */
export function searchInto<T>(files: () => FileSink<T>, request: SearchRequest, shards: readonly Shard[], environment: SearchEnvironment): Built<T> {
  const { query, limits, timings } = planned(request, environment);
  const outcome = searchShards(query, shards, environment.contexts, limits);
  return buildLocalResponse(files, request, query, outcome, shards, environment.publicUrl, timings(), environment.responseContentBytes);
}

/**
 * Every match of `request` up to its `matches`, in parts of about `partRanges` results, each built when found: what
 * is held at a time is one part, whatever the search finds. Parts come in index order, not ranked against each other;
 * each part's stats are its own. Plans the query now, so throws what `plan` throws before any part is asked for.
 */
export function searchParts(request: SearchRequest, shards: readonly Shard[], environment: SearchEnvironment): Generator<SearchResponse> {
  const { query, limits, timings } = planned(request, environment);
  const countsFiles = resultTypeOf(query) !== undefined;
  return (function* () {
    let rest = shards;
    let resume: { at: number; found: number } | undefined;
    let left = request.matches; // what the parts before left of `matches`
    for (;;) {
      const slice = new TaskSlice(Infinity, () => false, partRanges(request));
      const outcome = searchShards(query, rest, environment.contexts, { ...limits, resume, slice });
      const part = buildLocalResponse(collectFiles, { ...request, matches: left }, query, outcome, rest, environment.publicUrl, timings(), Infinity);
      left -= countsFiles ? part.stats.fileCount : part.stats.actualMatchCount;
      yield part;
      if (!outcome.resume || left <= 0) return;
      rest = rest.slice(outcome.resume.shard);
      resume = { at: outcome.resume.at, found: outcome.resume.found };
    }
  })();
}

/** `request` planned, the limits of its search, and its timings (`timings()`: searched now). */
function planned(request: SearchRequest, environment: SearchEnvironment) {
  const started = performance.now();
  const query = plan(request, environment.contexts);
  const plannedAt = performance.now();
  const limits = { wanted: request.matches + 1, deadline: started + environment.timeBudgetMs, signal: environment.signal ?? createSignal() };
  return { query, limits, timings: () => ({ started, planned: plannedAt, searched: performance.now() }) };
}
