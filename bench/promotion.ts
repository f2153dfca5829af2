/**
 * What a search leaves to the old generation, on the Linux 6.1 index: bytes
 * that survive V8's young-generation collections although the search that
 * made them is over. They are collected only by full (mark-compact)
 * collections, whose pauses make the latency tail under load, so a healthy
 * search path promotes next to nothing. Measured three ways, per query class:
 *
 * - a search worker's heap: searches run one at a time in this process, as a
 *   worker runs them (the worker's own task function), each followed by forced
 *   minor collections;
 * - the front end's heap: the same through the daemon's SearchPool (one
 *   worker), the collections forced on this thread;
 * - the daemon's main thread through HTTP: `trawl serve` with `--trace-gc`,
 *   wrk with one connection (a request is over long before the next
 *   scavenge), the growth of its heap after each scavenge per request.
 *
 * Found this way so far (docs/design.md, "The hot path's memory"): object spreads plus new members,
 * getters in object literals, WeakMaps keyed by per-search objects,
 * AbortControllers, strings received from a worker.
 *
 *   npm run bench:promotion
 */
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { SearchRequest as SearchRequestSchema } from '../src/api/schemas.js';
import type { SearchRequest } from '../src/api/types.js';
import { parseBody, validator } from '../src/api/validate.js';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { loadCatalog } from '../src/search/catalog.js';
import { plan } from '../src/query/plan.js';
import { SearchPool } from '../src/search/pool.js';
import { createSignal } from '../src/search/signal.js';
import searchTask from '../src/worker/search-thread.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
import { median, removeScratch, runWrk, searchBody, startDaemon, wrkScript } from './http-harness.js';
import { QUERY_CLASSES } from './queries.js';
import { writeReportBlock } from './report.js';

const SEARCHES = Number(process.env.TRAWL_BENCH_PROMOTION_SEARCHES ?? 300);
const BATCH = 50;
const HTTP_SECONDS = 5;
const PUBLIC_URL = 'http://127.0.0.1';

const forceGc = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc;
if (!forceGc) throw new Error('run with node --expose-gc (npm run bench:promotion)');

const corpus = ensureLinuxCorpus();
const daemonConfig = { dataDir: path.join(benchDirectory(), 'data-linux'), repos: [linuxRepositoryConfig(corpus)], server: { rescanIntervalSeconds: 0 } };
const config = validateConfig(daemonConfig, 'bench');
console.error('indexing (skipped when the index is current) …');
await runIndex(config);
warmPageCache(config.dataDir);
const catalog = loadCatalog(config);
const shardFiles = catalog.repositories.flatMap((repo) => repo.shards.map((shard) => shard.path));

const oldSpaceBytes = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;

/**
 * KB the old generation grows per call of `run`, each call followed by three
 * forced minor collections (an object that survives two is promoted): the
 * median over consecutive batches of calls, leaving out batches during which
 * a full collection ran (it takes back what was promoted). One forced full
 * collection before the first: more between batches would measure what a
 * full collection discards and the next calls rebuild (bytecode, feedback).
 */
async function promotedPerCall(run: (call: number) => unknown): Promise<number> {
  let call = 0;
  const runBatch = async () => {
    for (const end = call + BATCH; call < end; call++) {
      await run(call);
      // Collected in a later turn of the event loop, as in the daemon, where a request's garbage meets a scavenge
      // after the turn that finished it is over.
      await new Promise((resolve) => setImmediate(resolve));
      for (let i = 0; i < 3; i++) forceGc!({ type: 'minor' });
    }
  };
  await runBatch(); // compiled and warm
  forceGc!();
  await runBatch(); // the full collection's sweeping, which shrinks the count, is over
  const clean: number[] = [];
  while (call < BATCH * 2 + SEARCHES) {
    // V8's GC profiler records natively: a PerformanceObserver's entries, queued in the heap, were themselves promoted.
    const profiler = new v8.GCProfiler();
    profiler.start();
    const before = oldSpaceBytes();
    await runBatch();
    const kb = (oldSpaceBytes() - before) / BATCH / 1024;
    if (profiler.stop().statistics.every((collection) => collection.gcType === 'Scavenge')) clean.push(kb);
  }
  return clean.length === 0 ? NaN : median(clean);
}

/** The search task the pool would send for `request` when one worker runs the whole search, as that worker receives it (a copy). */
function workerTask(request: SearchRequest) {
  const now = Date.now();
  const query = plan(request, config.contexts);
  const render = { request, publicUrl: PUBLIC_URL, startedEpochMs: now, plannedEpochMs: now };
  const task = {
    generation: catalog.generation,
    shardFiles,
    query,
    contexts: config.contexts,
    wanted: request.matches + 1,
    deadlineEpochMs: now + 10_000,
    signal: createSignal(),
    render,
  };
  return structuredClone(task);
}

/** KB the daemon's main thread promotes per request at one connection, from its `--trace-gc` lines. */
async function httpPromotedPerRequest(bodies: string[]): Promise<number> {
  const daemon = await startDaemon(daemonConfig, {}, ['--trace-gc']);
  try {
    const script = wrkScript('promotion', '/api/search', bodies);
    await runWrk(daemon.url, script, 4, 2);
    let trace = '';
    const listen = (chunk: Buffer) => (trace += chunk.toString('latin1'));
    daemon.child.stdout!.on('data', listen);
    const { rps } = await runWrk(daemon.url, script, 1, HTTP_SECONDS);
    daemon.child.stdout!.off('data', listen);
    return heapGrowthAfterScavenges(trace, daemon.child.pid!) / (rps * HTTP_SECONDS) / 1024;
  } finally {
    await daemon.stop();
  }
}

/**
 * Bytes the main thread's heap grew from one scavenge to the next, summed
 * (`[pid:isolate] … Scavenge A (a) -> B (b) MB`; the main isolate is the one
 * whose address is lowest: workers' isolates are allocated later, higher).
 */
function heapGrowthAfterScavenges(trace: string, pid: number): number {
  const line = new RegExp(`^\\[${pid}:(0x[0-9a-f]+)\\]\\s+[\\d.]+ ms: (Scavenge|Mark-Compact|Mark-Sweep)[^\\d]*[\\d.]+ \\([\\d.]+\\) -> ([\\d.]+) \\(`, 'gm');
  const byIsolate = new Map<string, { kind: string; after: number }[]>();
  for (const [, isolate, kind, after] of trace.matchAll(line)) {
    const events = byIsolate.get(isolate!) ?? [];
    events.push({ kind: kind!, after: Number(after) });
    byIsolate.set(isolate!, events);
  }
  const main = [...byIsolate.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))[0];
  let growth = 0;
  const events = main === undefined ? [] : byIsolate.get(main)!;
  for (let i = 1; i < events.length; i++) if (events[i]!.kind === 'Scavenge') growth += events[i]!.after - events[i - 1]!.after;
  return growth * 2 ** 20;
}

const kb = (value: number) => (Number.isNaN(value) ? '—' : value.toFixed(2));

const pool = new SearchPool({
  workers: 1,
  maxQueuedSearches: 1,
  timeBudgetMs: config.server.searchTimeBudgetMs,
  publicUrl: PUBLIC_URL,
  contexts: config.contexts,
});
pool.setCatalog(catalog);
// The front end maps the shards in the background: their tables, allocated meanwhile, are not what a search leaves.
while (pool.shardsMapped < shardFiles.length) await new Promise((resolve) => setTimeout(resolve, 50));
const rows: string[] = [];
try {
  for (const { name, queries } of QUERY_CLASSES) {
    const bodies = queries.map(searchBody);
    const requests = bodies.map((body) => parseBody(validator(SearchRequestSchema), Buffer.from(body)));
    const pick = (call: number) => requests[call % requests.length]!;
    const worker = await promotedPerCall((call) => searchTask(workerTask(pick(call))));
    const frontEnd = await promotedPerCall((call) => pool.plan(pick(call)).then((query) => pool.searchJson(query, pick(call), { visible: () => true })));
    const http = await httpPromotedPerRequest(bodies);
    console.error(`${name}: worker ${kb(worker)} KB, front end ${kb(frontEnd)} KB, HTTP main thread ${kb(http)} KB per search`);
    rows.push(`| ${name} | ${kb(worker)} | ${kb(frontEnd)} | ${kb(http)} |`);
  }
} finally {
  await pool.close();
  removeScratch();
}

const body = `KB promoted to the old generation per search (in process: the median of batches of ${BATCH} searches, ${SEARCHES} in all, without a full collection; \`matches: 100\`; HTTP: ${HTTP_SECONDS} s of wrk at
one connection), on the Linux 6.1 index, ${os.availableParallelism()} cores. The front end includes the SearchPool's
task round trip; the HTTP column is the whole daemon's main thread (request handling, the pool, the response).

| Query class | search worker | front end (pool) | daemon main thread (HTTP) |
| --- | ---: | ---: | ---: |
${rows.join('\n')}`;
console.log(`wrote ${writeReportBlock('promotion', body)}`);
