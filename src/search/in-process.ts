/**
 * One search run start to end on the caller's thread, over shards it has
 * mapped (the CLI's `trawl search`, the benchmarks): plan, evaluate, build
 * the response. The daemon runs the same steps across threads (pool.ts, sinks.ts).
 */
import type { SearchRequest, SearchResponse } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { Shard } from '../index/shard-reader.js';
import { plan } from '../query/plan.js';
import type { SearchSignal } from '../worker/search-protocol.js';
import { buildLocalResponse, collectFiles, type Built, type FileSink } from './response/build.js';
import { searchShards } from './shard/evaluate.js';
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
  const started = performance.now();
  const query = plan(request, environment.contexts);
  const planned = performance.now();
  const limits = { wanted: request.matches + 1, deadline: started + environment.timeBudgetMs, signal: environment.signal ?? createSignal() };
  const outcome = searchShards(query, shards, environment.contexts, limits);
  return buildLocalResponse(
    files,
    request,
    query,
    outcome,
    shards,
    environment.publicUrl,
    { started, planned, searched: performance.now() },
    environment.responseContentBytes,
  );
}
