/**
 * One query of the exhaustive search benchmark (search-exhaustive.ts starts this per query, so that each
 * has a heap and a peak of its own): every match of the query over the Linux 6.1 index, in process,
 * as `trawl search` would find them with no cap (MODE `objects`), or answered as /api/search's JSON bytes, as a
 * search worker renders them (MODE `json`), or as the daemon answers it, its search pool's workers (one per core)
 * finding and rendering (MODE `daemon`). Prints one JSON line: run times, the part of each spent finding the
 * matches (the rest builds the response; `daemon`: the longest wait for a search task), match ranges found, files
 * returned (objects only), and whether the response holds them all (it is cut at 64 MiB of content).
 *
 *   node dist/bench/exhaustive-query.js DATA_DIR QUERY_JSON MODE CORPUS
 */
import os from 'node:os';
import type { SearchResponse, SearchStats } from '../src/api/types.js';
import { validateConfig } from '../src/config/config.js';
import { loadCatalog } from '../src/search/catalog.js';
import { SearchPool } from '../src/search/pool.js';
import { openShardSet } from '../src/search/shard-set.js';
import { search, searchInto } from '../src/search/in-process.js';
import { renderFiles, responseJson } from '../src/search/response/build.js';
import { linuxRepositoryConfig } from './corpus.js';
import { searchRequest, type BenchQuery } from './queries.js';

/** More match ranges than the corpus holds: no cap. */
const UNCAPPED_MATCHES = 100_000_000;
/** A query slower than this runs once. */
const SLOW_RUN_MS = 10_000;
/** Warm-up runs (the JIT, the first touch of the mapped shards) go on for this long, up to WARM_UP_RUNS of them. */
const WARM_UP_MS = 1_000;
const WARM_UP_RUNS = 500;
const RUNS = 3;

const [dataDir, queryJson, mode, corpus] = process.argv.slice(2);
const q = JSON.parse(queryJson!) as BenchQuery;
const { shards } = openShardSet(dataDir!);
const request = searchRequest(q, UNCAPPED_MATCHES);
const environment = { publicUrl: 'http://127.0.0.1:6070', contexts: {}, timeBudgetMs: 3_600_000 };
const runs: number[] = [];
const finding: number[] = [];
let files = 0;
let ranges = 0;
let exhaustive = false;
const pool = mode === 'daemon' ? await startedPool() : undefined;
// A daemon answers the same kinds of query again and again: runs are timed once the warm-up is over, unless the first is slow.
const first = await timedRun();
if (first.ms < SLOW_RUN_MS) {
  for (let run = 1, spent = first.ms; run < WARM_UP_RUNS && spent < WARM_UP_MS; run++) spent += (await timedRun()).ms;
  for (let run = 0; run < RUNS; run++) record(await timedRun());
} else {
  record(first);
}
await pool?.close();
console.log(JSON.stringify({ runs, finding, files, ranges, exhaustive }));

function record(run: { ms: number; stats: SearchStats }): void {
  runs.push(run.ms);
  finding.push((pool ? run.stats.wait : run.stats.matchTreeSearch) / 1e6);
  ranges = run.stats.totalMatchCount;
}

/** One search of the query as `mode` answers it, timed. */
async function timedRun(): Promise<{ ms: number; stats: SearchStats }> {
  const started = performance.now();
  let stats: SearchStats;
  if (pool) {
    const json = await pool.searchJson(await pool.plan(request), request, { visible: () => true });
    stats = json.stats;
    const end = json.body.at(-1)!; // the last piece holds `"isSearchExhaustive":…}`
    exhaustive = Buffer.from(end.buffer, end.byteOffset, end.byteLength).toString('latin1', end.byteLength - 5) === 'true}';
    json.release();
  } else {
    let response: Omit<SearchResponse, 'files'>;
    if (mode === 'json') {
      const rendered = searchInto(renderFiles, request, shards, environment);
      responseJson(rendered); // the body's bytes, as the worker writes them
      response = rendered;
    } else {
      const objects = search(request, shards, environment);
      files = objects.files.length;
      response = objects;
    }
    stats = response.stats;
    exhaustive = response.isSearchExhaustive;
  }
  return { ms: performance.now() - started, stats };
}

/** The daemon's search pool over the index, once every worker and the front end have mapped its shards. */
async function startedPool(): Promise<SearchPool> {
  const config = validateConfig({ dataDir: dataDir!, repos: [linuxRepositoryConfig(corpus!)] }, 'bench');
  const started = new SearchPool({
    workers: os.availableParallelism(),
    maxQueuedSearches: 1,
    timeBudgetMs: environment.timeBudgetMs,
    publicUrl: environment.publicUrl,
    contexts: {},
  });
  started.setCatalog(loadCatalog(config));
  while (started.workerShardsMapped < shards.length || started.shardsMapped < shards.length) await new Promise((resolve) => setTimeout(resolve, 50));
  return started;
}
