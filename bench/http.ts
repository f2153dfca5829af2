/**
 * HTTP load benchmark: the daemon as users run it (`trawl serve`, a worker
 * per core) on the Linux 6.1 index, driven by wrk from the same machine.
 * Per query class and concurrency 1, 16 and 64: throughput and p50/p99
 * latency; the selective literals offered at fixed rates, with latency from
 * each request's scheduled send time; the same searches through the search
 * pool alone, in this process (no HTTP); the daemon's memory (anonymous RSS:
 * heap and stacks, the mapped index's page cache excluded); and the time from
 * `git commit` to searchable on a small watched repository. Written to
 * docs/benchmarks.md.
 *
 *   npm run bench:http        (apt-get install wrk)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SearchRequest } from '../src/api/schemas.js';
import { parseBody, validator } from '../src/api/validate.js';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
import {
  formatMs as format,
  MATCHES,
  median,
  pacedWrkScript,
  removeScratch,
  runPacedWrk,
  runWrk,
  scratch,
  searchBody,
  startDaemon,
  threadCpuSeconds,
  wrkScript,
} from './http-harness.js';
import { poolLoad } from './pool-load.js';
import { QUERY_CLASSES } from './queries.js';
import { writeReportBlock } from './report.js';

const CONCURRENCY = [1, 16, 64];
/**
 * A literal that is in no file: a search that costs almost nothing past the
 * HTTP request, the task round trip to a worker and the trigram lookups. Its
 * row is the floor under every other class.
 */
const NO_MATCH = { name: 'literal in no file (the floor)', queries: [{ query: 'QZXJ_IN_NO_FILE_WK', caseSensitive: true, rg: null }] };
const SECONDS = Number(process.env.TRAWL_BENCH_HTTP_SECONDS ?? 6);
/** Offered rates (requests/s, in all) of the fixed-rate runs of the selective literals, over FIXED_RATE_CONNECTIONS. */
const FIXED_RATES = [500, 1000, 2000];
const FIXED_RATE_CONNECTIONS = 64;
/** Seconds per fixed-rate run: its first second is not measured (pacedWrkScript). */
const FIXED_RATE_SECONDS = SECONDS + 4;
/** Searches in flight when the search pool is driven without HTTP (the c = 64 cell's concurrency). */
const POOL_IN_FLIGHT = 64;
/** Back-to-back runs of the target's cell (selective literals at the highest concurrency): one run's p99 swings by a fifth on these machines. */
const TARGET_CELL_RUNS = 5;
const TARGET_CONNECTIONS = CONCURRENCY[CONCURRENCY.length - 1]!;

function memory(pid: number): { anonMiB: number; fileMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { anonMiB: kib('RssAnon') / 1024, fileMiB: kib('RssFile') / 1024 };
}

/** Seconds from `git commit` to the first search that finds the new text, on a small watched repository. */
async function commitToSearchable(runs: number): Promise<number[]> {
  const repo = path.join(scratch, 'small');
  fs.mkdirSync(repo);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: repo });
  git('init', '-q');
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(repo, `file${i}.c`), `int function_${i}(void) { return ${i}; }\n`.repeat(20));
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  const daemon = await startDaemon({ dataDir: path.join(scratch, 'small-data'), repos: [{ name: 'bench/small', path: repo, public: true }] });
  const seconds: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const marker = `fresh_marker_${run}_${Date.now()}`;
      fs.writeFileSync(path.join(repo, `new${run}.c`), `int ${marker};\n`);
      git('add', '-A');
      const started = performance.now();
      git('commit', '-q', '-m', `add ${marker}`);
      for (;;) {
        const response = await fetch(`${daemon.url}/api/search`, { method: 'POST', body: JSON.stringify({ query: marker, matches: 1 }) });
        if (((await response.json()) as { files: unknown[] }).files.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      seconds.push((performance.now() - started) / 1000);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  } finally {
    await daemon.stop();
  }
  return seconds;
}

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
const repository = linuxRepositoryConfig(corpus);
console.error('indexing (skipped when the index is current) …');
const daemonConfig = { dataDir, repos: [repository], server: { rescanIntervalSeconds: 0 } };
const config = validateConfig(daemonConfig, 'bench');
await runIndex(config);
warmPageCache(dataDir);
const daemon = await startDaemon(daemonConfig);
const rows: string[] = [];
const fixedRateRows: string[] = [];
const targetRuns: Awaited<ReturnType<typeof runWrk>>[] = [];
let peakAnon = 0;
let peakFile = 0;
const sample = setInterval(() => {
  const { anonMiB, fileMiB } = memory(daemon.child.pid!);
  peakAnon = Math.max(peakAnon, anonMiB);
  peakFile = Math.max(peakFile, fileMiB);
}, 250);
try {
  for (const { name, queries } of [...QUERY_CLASSES, NO_MATCH]) {
    const script = wrkScript('search', '/api/search', queries.map(searchBody));
    await runWrk(daemon.url, script, 4, 1); // warm the queries' pages
    const cells: string[] = [];
    let cpuPerRequest = '';
    for (const connections of CONCURRENCY) {
      const cpuBefore = threadCpuSeconds(daemon.child.pid!);
      const result = await runWrk(daemon.url, script, connections, SECONDS);
      const cpu = threadCpuSeconds(daemon.child.pid!);
      console.error(
        `${name} c=${connections}: ${result.rps.toFixed(0)} req/s, p50 ${format(result.p50)} ms, p99 ${format(result.p99)} ms, failed ${result.failed}`,
      );
      cells.push(`${result.rps.toFixed(0)} · ${format(result.p50)} / ${format(result.p99)}${result.failed ? ` (${result.failed} failed)` : ''}`);
      if (connections === 16) {
        const perRequest = (thread: 'main' | 'workers') => format(((cpu[thread] - cpuBefore[thread]) * 1000) / (result.rps * SECONDS));
        cpuPerRequest = `${perRequest('main')} / ${perRequest('workers')}`;
      }
    }
    rows.push(`| ${name} | ${cells.join(' | ')} | ${cpuPerRequest} |`);
  }
  const selective = QUERY_CLASSES[0]!;
  const selectiveBodies = selective.queries.map(searchBody);
  const selectiveScript = wrkScript('search', '/api/search', selectiveBodies);
  for (let run = 0; run < TARGET_CELL_RUNS; run++) {
    const result = await runWrk(daemon.url, selectiveScript, TARGET_CONNECTIONS, SECONDS);
    console.error(
      `${selective.name} c=${TARGET_CONNECTIONS}, run ${run + 1}: ${result.rps.toFixed(0)} req/s, p50 ${format(result.p50)} ms, p99 ${format(result.p99)} ms, failed ${result.failed}`,
    );
    targetRuns.push(result);
  }
  const paced = pacedWrkScript('paced', '/api/search', selectiveBodies);
  for (const rate of FIXED_RATES) {
    const result = await runPacedWrk(daemon.url, paced, rate, FIXED_RATE_CONNECTIONS, FIXED_RATE_SECONDS);
    console.error(
      `${selective.name} at ${rate}/s: ${result.rps.toFixed(0)} req/s, p50 ${format(result.p50)} ms, p99 ${format(result.p99)} ms, failed ${result.failed}`,
    );
    const failed = result.failed ? ` (${result.failed} failed)` : '';
    fixedRateRows.push(
      `| ${rate} | ${result.rps.toFixed(0)}${failed} | ${format(result.p50)} | ${format(result.p90)} | ${format(result.p99)} | ${format(result.max)} |`,
    );
  }
} finally {
  clearInterval(sample);
  await daemon.stop();
}
const selectiveRequests = QUERY_CLASSES[0]!.queries.map((q) => parseBody(validator(SearchRequest), Buffer.from(searchBody(q))));
const poolAlone = await poolLoad(config, selectiveRequests, POOL_IN_FLIGHT, SECONDS);
console.error(
  `pool alone, ${POOL_IN_FLIGHT} in flight: ${poolAlone.searchesPerSecond.toFixed(0)} searches/s, p50 ${format(poolAlone.p50)} ms, p99 ${format(poolAlone.p99)} ms`,
);
const lags = await commitToSearchable(5);
removeScratch();

const body = `The daemon (\`trawl serve\`, ${os.availableParallelism()} search workers) on the Linux 6.1 index, warm page cache,
driven by \`wrk\` on the same ${os.availableParallelism()}-core machine (so the load generator takes CPU from the daemon),
\`POST /api/search\` with \`matches: ${MATCHES}\`, each class's queries (those of the search-latency table) in turn,
${SECONDS} s per cell after a 1 s warm-up. Cells: requests/s · p50 / p99 latency in ms. The last row searches
for a literal that is in no file: the cost of a request with next to no search work in it. "CPU at c = 16" is
the CPU per request in ms, from /proc: the front end's thread / all other threads (search workers, GC helpers).

| class | c = 1 | c = 16 | c = 64 | CPU at c = 16 |
|---|---|---|---|---|
${rows.join('\n')}

The target's cell, selective literals at c = ${TARGET_CONNECTIONS}, run ${TARGET_CELL_RUNS} more times back to back (${SECONDS} s each;
requests/s · p50 / p99 ms): ${targetRuns.map((run) => `${run.rps.toFixed(0)} · ${format(run.p50)} / ${format(run.p99)}${run.failed ? ` (${run.failed} failed)` : ''}`).join(', ')};
median p99 **${format(median(targetRuns.map((run) => run.p99)))} ms**, median throughput ${median(targetRuns.map((run) => run.rps)).toFixed(0)} requests/s.

The selective literals through the daemon's search pool alone, driven in the benchmark's process after the
daemon stopped (no HTTP, no wrk; ${POOL_IN_FLIGHT} searches in flight, each caller starting its next search as its last one
is answered, ${SECONDS} s): **${poolAlone.searchesPerSecond.toFixed(0)} searches/s, p50 ${format(poolAlone.p50)} / p99 ${format(poolAlone.p99)} ms**. Against the c = ${POOL_IN_FLIGHT} cell above,
the difference is what HTTP (the front end's request handling and wrk) costs under load.

The same daemon with the selective literals offered at a fixed rate from ${FIXED_RATE_CONNECTIONS} connections (wrk paced by its
script: ${FIXED_RATE_SECONDS} s per rate, the first second not measured), each request's latency counted from when the schedule
meant to send it, so a stall counts against every request it holds back (as wrk2 counts it). The table above
measures saturation instead: with ${CONCURRENCY[CONCURRENCY.length - 1]} connections each sending as soon as its last answer came, mean
latency is ${CONCURRENCY[CONCURRENCY.length - 1]} ÷ throughput (Little's law), so a p99 under 50 ms at c = 64 there needs well over
1,280 requests/s whatever the tail.

| offered req/s | achieved req/s | p50 ms | p90 ms | p99 ms | max ms |
|---|---|---|---|---|---|
${fixedRateRows.join('\n')}

Daemon memory during the run: anonymous RSS (heap, stacks, worker threads; the mapped index's page cache
excluded) peaked at **${peakAnon.toFixed(0)} MiB**; file-backed RSS (shard pages in the page cache, shared with
every process mapping them) peaked at ${peakFile.toFixed(0)} MiB.

Commit to searchable (a watched 200-file repository, \`git commit\` until a search finds the new text, ${lags.length} runs):
median **${median(lags).toFixed(2)} s**, max ${Math.max(...lags).toFixed(2)} s.

Targets (issue 4): ≥ 1,000 requests/s for selective literals at c = 64 with p99 ≤ 50 ms; RSS ≤ 1 GB;
commit to searchable ≤ 2 s. Issue 34: selective literals ≥ 2,000 requests/s from 64 connections with p99 ≤ 20 ms —
the 2,000 row of the fixed-rate table; saturated, a mean of 20 ms at c = 64 would take 3,200 requests/s.`;
console.log(`wrote ${writeReportBlock('http-load', body)}`);
console.log(body);
