/**
 * Exhaustive search benchmark (issue 34), into docs/benchmarks.md: every match of each query of the
 * search benchmark, uncapped, on the Linux 6.1 index, beside ripgrep in the same run. Each query runs
 * in a child process of its own (exhaustive-query.ts; Node's default heap limit), whose anonymous
 * memory (heap, buffers: not the mapped index) is sampled every 20 ms for its peak. A child that runs
 * out of memory or past TIMEOUT_MS is reported as such.
 *
 *   npm run bench:exhaustive
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
import { QUERY_CLASSES, zoektQuery, type BenchQuery } from './queries.js';
import { loadAverage, writeReportBlock } from './report.js';
import { ripgrepOnce } from './ripgrep.js';
import { percentile } from './stats.js';
import { ensureZoektIndex } from './zoekt-index.js';

const RG_RUNS = Number(process.env.TRAWL_BENCH_RG_RUNS ?? 3);
const TIMEOUT_MS = 300_000;
const CHILD = fileURLToPath(new URL('./exhaustive-query.js', import.meta.url));
/** A directory holding `zoekt-index` and `zoekt-exhaustive` (bench/zoekt/), built from a Zoekt checkout: Zoekt then runs beside trawl. */
const ZOEKT_DIR = process.env.TRAWL_BENCH_ZOEKT_DIR;

interface Outcome {
  runs: number[];
  /** Per run, the part spent finding the matches (searchShards); the rest built the response. */
  finding: number[];
  files: number;
  ranges: number;
  exhaustive: boolean;
}

/** The child's answer, or why it has none; and the peak of its anonymous memory in bytes. */
async function runChild(dataDir: string, q: BenchQuery, mode: 'objects' | 'json' | 'daemon'): Promise<{ outcome: Outcome | string; peakAnonymous: number }> {
  const child = spawn(process.execPath, [CHILD, dataDir, JSON.stringify(q), mode, corpus], { stdio: ['ignore', 'pipe', 'pipe'] });
  let peakAnonymous = 0;
  const sample = () => {
    try {
      const kib = /RssAnon:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      if (kib) peakAnonymous = Math.max(peakAnonymous, Number(kib) * 1024);
    } catch {
      // the child has exited
    }
  };
  const sampler = setInterval(sample, 20);
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  clearInterval(sampler);
  clearTimeout(timer);
  if (code === 0) return { outcome: JSON.parse(stdout) as Outcome, peakAnonymous };
  if (/heap out of memory/i.test(stderr)) return { outcome: 'out of heap', peakAnonymous };
  return { outcome: signal === 'SIGKILL' ? `over ${TIMEOUT_MS / 1000} s` : `failed (${signal ?? code})`, peakAnonymous };
}

/** Zoekt's in-process search of every match of `q` (zoekt-exhaustive): the median run and the matches it counts, or why it has none. */
function runZoekt(indexDir: string, q: BenchQuery): { ms: number; matches: number } | string {
  const child = spawnSync(path.join(ZOEKT_DIR!, 'zoekt-exhaustive'), [indexDir, zoektQuery(q)], { encoding: 'utf8', timeout: TIMEOUT_MS, maxBuffer: 1 << 20 });
  if (child.status !== 0) return child.signal === 'SIGTERM' ? `over ${TIMEOUT_MS / 1000} s` : `failed (${child.stderr.trim() || child.signal})`;
  const { runs, matches } = JSON.parse(child.stdout) as { runs: number[]; matches: number };
  return { ms: percentile(runs, 50), matches };
}

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
console.error('indexing (skipped when the index is current) …');
const [indexed] = await runIndex(validateConfig({ dataDir, repos: [linuxRepositoryConfig(corpus)] }, 'bench'));
if (indexed?.status === 'failed') throw new Error(`indexing failed: ${indexed.error}`);
const zoektIndex = ZOEKT_DIR && ensureZoektIndex(path.join(ZOEKT_DIR, 'zoekt-index'), corpus, path.join(benchDirectory(), 'zoekt-linux'));
warmPageCache(dataDir);
warmPageCache(corpus);
if (zoektIndex) warmPageCache(zoektIndex);

const loadAtStart = loadAverage();
const format = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const rows: string[] = [];
for (const { name, queries } of QUERY_CLASSES) {
  for (const q of queries) {
    const { outcome, peakAnonymous } = await runChild(dataDir, q, 'objects');
    const json = await runChild(dataDir, q, 'json');
    const jsonCell = typeof json.outcome === 'string' ? json.outcome : format(percentile(json.outcome.runs, 50));
    const daemon = (await runChild(dataDir, q, 'daemon')).outcome;
    const daemonCell = typeof daemon === 'string' ? daemon : `${format(percentile(daemon.runs, 50))} (${format(percentile(daemon.finding, 50))})`;
    const zoekt = zoektIndex ? runZoekt(zoektIndex, q) : 'not run';
    const zoektCells =
      typeof zoekt === 'string'
        ? [zoekt, '']
        : [
            `${format(zoekt.ms)} (${zoekt.matches.toLocaleString('en')})`,
            typeof daemon === 'string' ? '' : `${(percentile(daemon.runs, 50) / zoekt.ms).toFixed(2)}`,
          ];
    ripgrepOnce(corpus, q);
    const rg = percentile(
      Array.from({ length: RG_RUNS }, () => ripgrepOnce(corpus, q)),
      50,
    );
    const cells =
      typeof outcome === 'string'
        ? [outcome, '', jsonCell, daemonCell, '', '', '', `${mib(peakAnonymous)} / ${mib(json.peakAnonymous)}`, format(rg), '', ...zoektCells]
        : (() => {
            const trawl = percentile(outcome.runs, 50);
            const ratio = rg / trawl;
            const files = outcome.files.toLocaleString('en');
            return [
              format(trawl),
              format(percentile(outcome.finding, 50)),
              jsonCell,
              daemonCell,
              outcome.ranges.toLocaleString('en'),
              files,
              outcome.exhaustive ? 'yes' : 'no',
              `${mib(peakAnonymous)} / ${mib(json.peakAnonymous)}`,
              format(rg),
              `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(2)}×`,
              ...zoektCells,
            ];
          })();
    rows.push(`| ${name} | \`${q.query}\` | ${cells.join(' | ')} |`);
    console.error(rows.at(-1));
  }
}

const body = `Every match, no cap: each query of the search-latency table run in process with \`matches\` above any count the
corpus holds (a fresh process per query, Node's default heap limit; 3 runs after warm-up runs, as a daemon answering such queries
is warm: for 1 s, at most 500 and at least one; 1 run when it takes over 10 s;
the median shown; "finding" is the part of it spent finding the matches, the rest builds the response's
objects; "as JSON" is the same search, in a process of its own, answered as the bytes of /api/search's JSON
as a search worker renders them; "daemon" is that answer from the daemon's search pool, ${os.availableParallelism()} workers on the one
search, with the longest wait for a search task in brackets: finding, and rendering its files when they are many), beside ripgrep's \`rg -c\` (exhaustive, process start included,
${RG_RUNS} runs after one warm-up; it runs a thread per core too).
"peak anon" is the highest anonymous memory of the trawl process (heap and buffers, not the mapped index),
sampled every 20 ms. "match ranges" are those found; "files" those returned, and "all returned" says whether the
response holds every file (it is cut at 64 MiB of content). Times in milliseconds; ratio = ripgrep / trawl (above 1:
trawl faster). ${
  zoektIndex
    ? `"Zoekt" is Zoekt's in-process searcher (bench/zoekt/zoekt-exhaustive.go, its match limits lifted) over its own index of the same tree with
symbols, run as trawl's are, with the matches it counts in brackets; "daemon ÷ Zoekt" is above 1 where trawl's daemon is slower.`
    : 'Zoekt was not run (TRAWL_BENCH_ZOEKT_DIR unset).'
} Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverage()}.

| class | query | trawl | finding | as JSON | daemon (longest task) | match ranges | files | all returned | peak anon MiB (objects / JSON) | ripgrep | ratio | Zoekt | daemon ÷ Zoekt |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Targets (issue 34): every query at or below ripgrep's time (the common word at ≤ 0.7× ripgrep's, the regex
without a literal at ≤ 1×), and memory per search bounded whatever \`matches\` is.`;

console.log(`wrote ${writeReportBlock('search-exhaustive', body)}`);
console.log(body);
