/**
 * Every match over HTTP (issue 58), into docs/benchmarks.md: an exhaustive /api/search of each query, read by curl
 * from the daemon over the Linux 6.1 index (piped into `tail`), beside `rg --json` over the tree piped into `wc -c`, alternating
 * in the same run; the daemon's anonymous memory (heap and buffers, not the mapped index) sampled every 20 ms.
 *
 *   npm run bench:every-match
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
import { removeScratch, startDaemon } from './http-harness.js';
import { QUERY_CLASSES, searchRequest, type BenchQuery } from './queries.js';
import { writeReportBlock } from './report.js';
import { percentile } from './stats.js';

const RUNS = Number(process.env.TRAWL_BENCH_RUNS ?? 3);
/** The queries with the most matches, and two selective ones. */
const QUERIES = ['return', 'static', '\\w{5}\\s+\\w{5}', 'lang:c mutex_lock', 'PM_RESUME'].map((query) =>
  QUERY_CLASSES.flatMap((c) => c.queries).find((q) => q.query === query)!,
);
/** Long enough for every query here: the bench measures delivery, not the daemon's default time budget. */
const TIME_BUDGET_MS = 300_000;

/** Wall milliseconds and stdout of `command` run by the shell. */
function timedShell(command: string): { ms: number; out: string } {
  const started = performance.now();
  const out = execFileSync('sh', ['-c', command], { encoding: 'utf8', maxBuffer: 1 << 20 });
  return { ms: performance.now() - started, out };
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** The daemon's anonymous memory in bytes. */
function anonymous(pid: number): number {
  const kib = /RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib ?? 0) * 1024;
}

/** One exhaustive /api/search of `q` read by curl: its time, bytes, the ranges its stats count, and the daemon's peak anonymous growth. */
async function trawlOnce(url: string, pid: number, q: BenchQuery) {
  const body = JSON.stringify({ ...searchRequest(q, Number.MAX_SAFE_INTEGER), exhaustive: true });
  const before = anonymous(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, anonymous(pid))), 20);
  // The body's last 4 KiB hold its stats: tail reads every byte, as wc does for ripgrep; curl counts them.
  const command = `curl -sS -w '%{stderr}%{size_download}' -X POST -H 'Content-Type: application/json' --data-binary ${shellQuote(body)} ${url}/api/search | tail -c 4096`;
  const started = performance.now();
  const { end, bytes } = await new Promise<{ end: string; bytes: number }>((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => (code === 0 ? resolve({ end: out, bytes: Number(err.trim()) }) : reject(new Error(`curl exited with ${code}: ${err}`))));
  });
  const ms = performance.now() - started;
  clearInterval(sampler);
  const ranges = Number(/"actualMatchCount":(\d+)/.exec(end)?.[1]);
  const exhaustive = /"isSearchExhaustive":true\}$/.test(end);
  return { ms, bytes, ranges, exhaustive, growth: peak - before };
}

function ripgrepOnce(corpus: string, q: BenchQuery) {
  const args = ['--json', '--no-config', '--no-ignore', '--hidden', '-g', "'!.git'", ...q.rg!.map(shellQuote), '--', ...(q.rgPaths ?? ['.']).map(shellQuote)];
  const { ms, out } = timedShell(`cd ${shellQuote(corpus)} && rg ${args.join(' ')} | wc -c`);
  return { ms, bytes: Number(out.trim()) };
}

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
console.error('indexing (skipped when the index is current) …');
const config = { dataDir, repos: [linuxRepositoryConfig(corpus)], server: { searchTimeBudgetMs: TIME_BUDGET_MS } };
const [indexed] = await runIndex(validateConfig(config, 'bench'));
if (indexed?.status === 'failed') throw new Error(`indexing failed: ${indexed.error}`);
warmPageCache(dataDir);
warmPageCache(corpus);
const daemon = await startDaemon(config);
const pid = daemon.child.pid!;

const format = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const rows: string[] = [];
try {
  for (const q of QUERIES) {
    await trawlOnce(daemon.url, pid, q); // warm-up, both
    ripgrepOnce(corpus, q);
    const trawl: Awaited<ReturnType<typeof trawlOnce>>[] = [];
    const rg: ReturnType<typeof ripgrepOnce>[] = [];
    for (let run = 0; run < RUNS; run++) {
      trawl.push(await trawlOnce(daemon.url, pid, q));
      rg.push(ripgrepOnce(corpus, q));
    }
    const trawlMs = percentile(
      trawl.map((r) => r.ms),
      50,
    );
    const rgMs = percentile(
      rg.map((r) => r.ms),
      50,
    );
    const last = trawl.at(-1)!;
    const ratio = trawlMs / rgMs;
    rows.push(
      `| \`${q.query}\` | ${format(trawlMs)} | ${last.ranges.toLocaleString('en')} | ${last.exhaustive ? 'yes' : 'no'} | ${mib(last.bytes)} | ${mib(Math.max(...trawl.map((r) => r.growth)))} | ${format(rgMs)} | ${mib(rg.at(-1)!.bytes)} | ${ratio.toFixed(2)} |`,
    );
    console.error(rows.at(-1));
  }
} finally {
  await daemon.stop();
  removeScratch();
}

const body = `Every match over HTTP: \`/api/search\` with \`"exhaustive": true\` and \`matches\` at 2^53 − 1, read by curl piped into \`tail -c 4096\` (it holds the stats),
from \`trawl serve\` over the Linux index (two search workers; its time budget raised to ${TIME_BUDGET_MS / 1000} s), beside
\`rg --json\` over the tree piped into \`wc -c\` (process start included), alternating, ${RUNS} runs each after a warm-up, the
median shown. "growth" is the most the daemon's anonymous memory (heap and buffers, not the mapped index) rose during a run,
sampled every 20 ms. Times in milliseconds; ratio = trawl / ripgrep (below 1: trawl faster).

| query | trawl | match ranges | all returned | MiB | growth MiB | rg --json | MiB | ratio |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Targets (issue 58): \`return\` within 1.5× of ripgrep, the daemon's growth at most 100 MiB.`;

console.log(`wrote ${writeReportBlock('every-match', body)}`);
console.log(body);
