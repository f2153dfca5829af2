/**
 * The daemon's search pool driven in this process, with no HTTP and no load
 * generator: a closed loop like wrk's (each of `inFlight` callers starts its
 * next search as its last one is answered, the queries in turn). Set against
 * the HTTP table's cell of the same concurrency, it says what the front end's
 * request handling costs under load.
 */
import os from 'node:os';
import type { SearchRequest } from '../src/api/types.js';
import type { Config } from '../src/config/config.js';
import { loadCatalog } from '../src/search/catalog.js';
import { SearchPool } from '../src/search/pool.js';
import { percentile } from './stats.js';

const WARM_UP_SECONDS = 3;

export interface PoolLoad {
  searchesPerSecond: number;
  p50: number;
  p99: number;
}

/** Runs the loop for WARM_UP_SECONDS unmeasured (the workers map the shards), then for `seconds`; latencies in ms. */
export async function poolLoad(config: Config, requests: readonly SearchRequest[], inFlight: number, seconds: number): Promise<PoolLoad> {
  const pool = new SearchPool({
    workers: os.availableParallelism(),
    maxQueuedSearches: inFlight,
    timeBudgetMs: config.server.searchTimeBudgetMs,
    publicUrl: 'http://127.0.0.1',
    contexts: config.contexts,
  });
  pool.setCatalog(loadCatalog(config));
  const everything = () => true;
  const loop = async (caller: number, until: number, latencies: number[]) => {
    for (let next = caller; performance.now() < until; next++) {
      const started = performance.now();
      const request = requests[next % requests.length]!;
      // Released as the daemon does once the body is written: a held render slot would leave the next searches none.
      (await pool.searchJson(await pool.plan(request), request, { visible: everything })).release();
      latencies.push(performance.now() - started);
    }
  };
  const run = async (runSeconds: number) => {
    const latencies: number[] = [];
    const until = performance.now() + runSeconds * 1000;
    await Promise.all(Array.from({ length: inFlight }, (_, caller) => loop(caller, until, latencies)));
    return latencies;
  };
  try {
    await run(WARM_UP_SECONDS);
    const latencies = await run(seconds);
    return { searchesPerSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  } finally {
    await pool.close();
  }
}
