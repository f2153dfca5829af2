/**
 * HTTP load benchmark: the daemon as users run it (`trawl serve`, a worker
 * per core) on the Linux 6.1 index, driven by wrk from the same machine.
 * Per query class and concurrency 1, 16 and 64: throughput and p50/p99
 * latency; the daemon's memory (anonymous RSS: heap and stacks, the mapped
 * index's page cache excluded); and the time from `git commit` to searchable
 * on a small watched repository. Written to docs/benchmarks.md.
 *
 *   npm run bench:http        (apt-get install wrk)
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig } from './corpus.js';
import { QUERY_CLASSES, type BenchQuery } from './queries.js';
import { writeReportBlock } from './report.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const CONCURRENCY = [1, 16, 64];
const SECONDS = Number(process.env.TRAWL_BENCH_HTTP_SECONDS ?? 6);
const MATCHES = 100;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-http-'));

interface Daemon {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function startDaemon(config: object): Promise<Daemon> {
  const file = path.join(scratch, `config-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify({ ...config, auth: { anonymousAccess: true }, listen: { host: '127.0.0.1', port: 0 } }));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TRAWL_LOG_LEVEL: 'warn' } });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /trawl listening on (\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  for (let ready = false; !ready; ) {
    ready = (await fetch(`${url}/api/health`)).status === 200;
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function requestBody(q: BenchQuery): string {
  return JSON.stringify({ query: q.query, matches: MATCHES, isRegexEnabled: q.regex ?? false, isCaseSensitivityEnabled: q.caseSensitive ?? false });
}

/** A wrk script that cycles through the class's queries. */
function wrkScript(queries: BenchQuery[]): string {
  const file = path.join(scratch, 'post.lua');
  const bodies = queries.map((q) => `[==[${requestBody(q)}]==]`).join(', ');
  fs.writeFileSync(
    file,
    `local bodies = { ${bodies} }
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "/api/search", { ["Content-Type"] = "application/json" }, bodies[(i % #bodies) + 1])
end
`,
  );
  return file;
}

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit]!;

/** Runs wrk (asynchronously, so the memory sampler keeps running) and reads its report. */
async function runWrk(url: string, script: string, connections: number, seconds: number) {
  const { stdout: out } = await promisify(execFile)('wrk', ['-t', String(Math.min(2, connections)), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '15s', '--latency', '-s', script, url], { encoding: 'utf8' });
  const percentile = (p: string) => {
    const found = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    return found ? toMs(found[1]!, found[2]!) : NaN;
  };
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: percentile('50'),
    p99: percentile('99'),
    failed: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((a, b) => a + Number(b), 0) ?? 0),
  };
}

/** CPU seconds used so far by the daemon's main thread and by all its other threads (workers, indexer, GC helpers). */
function threadCpuSeconds(pid: number): { main: number; workers: number } {
  const ticks = (file: string) => {
    const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100 on Linux)
  };
  const all = fs.readdirSync(`/proc/${pid}/task`).map((tid) => ({ tid: Number(tid), seconds: ticks(`/proc/${pid}/task/${tid}/stat`) }));
  const main = all.find((thread) => thread.tid === pid)?.seconds ?? 0;
  return { main, workers: all.reduce((sum, thread) => sum + thread.seconds, 0) - main };
}

function memory(pid: number): { anonMiB: number; fileMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { anonMiB: kib('RssAnon') / 1024, fileMiB: kib('RssFile') / 1024 };
}

/** Seconds from `git commit` to the first search that finds the new text, on a small watched repository. */
async function commitToSearchable(runs: number): Promise<number[]> {
  const repo = path.join(scratch, 'small');
  fs.mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: repo });
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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const format = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
const repository = linuxRepositoryConfig(corpus);
console.error('indexing (skipped when the index is current) …');
await runIndex(validateConfig({ dataDir, repos: [repository] }, 'bench'));
const daemon = await startDaemon({ dataDir, repos: [repository], server: { rescanIntervalSeconds: 0 } });
const rows: string[] = [];
const cpuRows: string[] = [];
let peakAnon = 0;
let peakFile = 0;
const sample = setInterval(() => {
  const { anonMiB, fileMiB } = memory(daemon.child.pid!);
  peakAnon = Math.max(peakAnon, anonMiB);
  peakFile = Math.max(peakFile, fileMiB);
}, 250);
try {
  for (const { name, queries } of QUERY_CLASSES) {
    const script = wrkScript(queries);
    await runWrk(daemon.url, script, 4, 1); // warm the queries' pages
    const cells: string[] = [];
    for (const connections of CONCURRENCY) {
      const cpuBefore = threadCpuSeconds(daemon.child.pid!);
      const result = await runWrk(daemon.url, script, connections, SECONDS);
      const cpu = threadCpuSeconds(daemon.child.pid!);
      console.error(`${name} c=${connections}: ${result.rps.toFixed(0)} req/s, p50 ${format(result.p50)} ms, p99 ${format(result.p99)} ms, failed ${result.failed}`);
      cells.push(`${result.rps.toFixed(0)} · ${format(result.p50)} / ${format(result.p99)}${result.failed ? ` (${result.failed} failed)` : ''}`);
      if (connections === 16) {
        const perRequest = (thread: 'main' | 'workers') => format(((cpu[thread] - cpuBefore[thread]) * 1000) / (result.rps * SECONDS));
        cpuRows.push(`| ${name} | ${perRequest('main')} | ${perRequest('workers')} |`);
      }
    }
    rows.push(`| ${name} | ${cells.join(' | ')} |`);
  }
} finally {
  clearInterval(sample);
  await daemon.stop();
}
const lags = await commitToSearchable(5);
fs.rmSync(scratch, { recursive: true, force: true });

const body = `The daemon (\`trawl serve\`, ${os.availableParallelism()} search workers) on the Linux 6.1 index, warm page cache,
driven by \`wrk\` on the same ${os.availableParallelism()}-core machine (so the load generator takes CPU from the daemon),
\`POST /api/search\` with \`matches: ${MATCHES}\`, each class's queries (those of the search-latency table) in turn,
${SECONDS} s per cell after a 1 s warm-up. Cells: requests/s · p50 / p99 latency in ms.

| class | c = 1 | c = 16 | c = 64 |
|---|---|---|---|
${rows.join('\n')}

CPU per request at c = 16, in ms (from /proc: the front end's thread, and all other threads — search
workers, GC helpers):

| class | front end | workers and helpers |
|---|---|---|
${cpuRows.join('\n')}

Daemon memory during the run: anonymous RSS (heap, stacks, worker threads; the mapped index's page cache
excluded) peaked at **${peakAnon.toFixed(0)} MiB**; file-backed RSS (shard pages in the page cache, shared with
every process mapping them) peaked at ${peakFile.toFixed(0)} MiB.

Commit to searchable (a watched 200-file repository, \`git commit\` until a search finds the new text, ${lags.length} runs):
median **${median(lags).toFixed(2)} s**, max ${Math.max(...lags).toFixed(2)} s.

Targets (issue 4): ≥ 1,000 requests/s for selective literals at c = 64 with p99 ≤ 50 ms; RSS ≤ 1 GB;
commit to searchable ≤ 2 s.`;
console.log(`wrote ${writeReportBlock('http-load', body)}`);
console.log(body);
