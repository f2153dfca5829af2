/**
 * trawl's daemon beside Zoekt's webserver (google/zoekt f7d54fa, built from a checkout: docs/benchmarks.md,
 * "Peers") in the same run, alternating: start to first answered search and idle RSS on the Linux 6.1 corpus and
 * on Go 1.19's source tree; on Linux, one client's p50 latency per query class (the floor, a literal in no file,
 * included), with the selective literals' throughput from 64 clients. trawl answers `POST /api/search` with `matches: 100`, Zoekt
 * `GET /search?num=50` (its first page, as its web UI asks). Written to docs/benchmarks.md.
 *
 *   TRAWL_BENCH_ZOEKT_DIR=<dir with zoekt-index and zoekt-webserver> npm run bench:peers   (apt-get install wrk golang-1.19-src)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, GO_SOURCE, linuxRepositoryConfig, requireGoSource, warmPageCache } from './corpus.js';
import { formatMs as format, freePort, median, removeScratch, runWrk, searchBody, startDaemon, terminated, wrkGetScript, wrkScript } from './http-harness.js';
import { QUERY_CLASSES, zoektQuery, type BenchQuery } from './queries.js';
import { loadAverage, writeReportBlock } from './report.js';
import { ensureZoektIndex } from './zoekt-index.js';

const ZOEKT_DIR = process.env.TRAWL_BENCH_ZOEKT_DIR;
if (!ZOEKT_DIR) {
  console.error('TRAWL_BENCH_ZOEKT_DIR is unset: build Zoekt as docs/benchmarks.md ("Peers") says, and name the directory of its binaries');
  process.exit(2);
}
const SECONDS = Number(process.env.TRAWL_BENCH_HTTP_SECONDS ?? 6);
const START_RUNS = 3;
/** Seconds after start at which idle RSS is read. */
const IDLE_SECONDS = 45;
const ZOEKT_RESULTS = 50;
const FLOOR = { name: 'literal in no file (the floor)', queries: [{ query: 'QZXJ_IN_NO_FILE_WK', caseSensitive: true, rg: null }] };
const PROBE = QUERY_CLASSES[0]!.queries[0]!;

interface Running {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A corpus both peers start on: trawl's config, Zoekt's index of it, and the search whose first answer ends a start. */
interface StartCorpus {
  name: string;
  /** Its row's name in the report. */
  label: string;
  trawlConfig: object;
  zoektIndex: string;
  probe: BenchQuery;
}

const zoektBinary = (name: string) => path.join(ZOEKT_DIR!, name);
/** Indexes `repo` for both peers (each skipped when its index is current) and warms both indexes' pages. */
async function startCorpus(name: string, label: string, repo: { name: string; path: string; public: boolean }, probe: BenchQuery): Promise<StartCorpus> {
  const dataDir = path.join(benchDirectory(), `data-${name}`);
  const trawlConfig = { dataDir, repos: [repo], server: { rescanIntervalSeconds: 0 } };
  console.error(`indexing ${repo.path} (skipped when the index is current) …`);
  await runIndex(validateConfig(trawlConfig, 'bench'));
  const zoektIndex = ensureZoektIndex(zoektBinary('zoekt-index'), repo.path, path.join(benchDirectory(), `zoekt-${name}`));
  warmPageCache(dataDir);
  warmPageCache(zoektIndex);
  return { name, label: `${label} (\`${probe.query}\`)`, trawlConfig, zoektIndex, probe };
}

requireGoSource();
const linux = await startCorpus('linux', 'Linux 6.1', linuxRepositoryConfig(ensureLinuxCorpus()), PROBE);
const go = await startCorpus(
  'go',
  "Go 1.19's `src`",
  { name: 'go.dev/src', path: GO_SOURCE, public: true },
  { query: 'ReadFull', caseSensitive: true, rg: null },
);

const zoektUrl = (q: BenchQuery) => `/search?${new URLSearchParams({ q: zoektQuery(q), num: String(ZOEKT_RESULTS) })}`;

/** trawl's daemon once it has answered a search with files (it answers before health is `ok`, which waits for the first index pass). */
async function startTrawl({ trawlConfig, probe }: StartCorpus): Promise<Running> {
  const daemon = await startDaemon(trawlConfig, {}, [], false);
  for (;;) {
    const answer = await fetch(`${daemon.url}/api/search`, { method: 'POST', body: searchBody(probe) });
    if (answer.ok && ((await answer.json()) as { files: unknown[] }).files.length > 0) return daemon;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startZoekt({ zoektIndex, probe }: StartCorpus): Promise<Running> {
  const port = await freePort();
  const child = spawn(zoektBinary('zoekt-webserver'), ['-index', zoektIndex, '-listen', `127.0.0.1:${port}`], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`zoekt-webserver exited with ${code}`))));
  for (;;) {
    const answered = await Promise.race([
      fetch(`${url}${zoektUrl(probe)}`).then(
        (response) => response.text(),
        () => '',
      ),
      exited,
    ]);
    // Its page echoes the query even when it finds nothing: a start ends at an answer with results, as trawl's does.
    if (/Found [1-9]/.test(answered)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  exited.catch(() => {}); // stopped on purpose from here on
  return { url, child, stop: () => terminated(child) };
}

const rssMiB = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

interface Starts {
  seconds: number[];
  idleMiB: number;
}

/** Each peer started START_RUNS times on `corpus`, alternating, so both share the machine's load; RSS read idle after the last. */
async function measureStarts(corpus: StartCorpus): Promise<{ trawl: Starts; zoekt: Starts }> {
  const measured = { trawl: { seconds: [] as number[], idleMiB: NaN }, zoekt: { seconds: [] as number[], idleMiB: NaN } };
  for (let round = 0; round < START_RUNS; round++) {
    for (const [start, into, name] of [
      [startTrawl, measured.trawl, 'trawl'],
      [startZoekt, measured.zoekt, 'Zoekt'],
    ] as const) {
      const started = performance.now();
      const peer = await start(corpus);
      into.seconds.push((performance.now() - started) / 1000);
      if (round === START_RUNS - 1) {
        await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
        into.idleMiB = rssMiB(peer.child.pid!);
      }
      await peer.stop();
      console.error(`${corpus.name}: ${name} start ${round + 1}: first search after ${into.seconds.at(-1)!.toFixed(2)} s`);
    }
  }
  return measured;
}

const seconds = (values: number[]) => `${median(values).toFixed(2)} (${values.map((value) => value.toFixed(2)).join(', ')})`;
const ratio = (ours: number, theirs: number) => (ours / theirs).toFixed(2);
const loadAtStart = loadAverage();
const startRows: string[] = [];
for (const corpus of [linux, go]) {
  const { trawl, zoekt } = await measureStarts(corpus);
  startRows.push(
    `| ${corpus.label} | ${seconds(trawl.seconds)} | ${seconds(zoekt.seconds)} | ${ratio(median(trawl.seconds), median(zoekt.seconds))} | ${trawl.idleMiB.toFixed(0)} | ${zoekt.idleMiB.toFixed(0)} | ${ratio(trawl.idleMiB, zoekt.idleMiB)} |`,
  );
}

const trawl = await startTrawl(linux);
const zoekt = await startZoekt(linux);
const rows: string[] = [];
let throughput = '';
try {
  for (const { name, queries } of [...QUERY_CLASSES, FLOOR]) {
    const trawlScript = wrkScript('trawl', '/api/search', queries.map(searchBody));
    const zoektScript = wrkGetScript('zoekt', queries.map(zoektUrl));
    await runWrk(trawl.url, trawlScript, 4, 1); // warm
    await runWrk(zoekt.url, zoektScript, 4, 1);
    const ours = await runWrk(trawl.url, trawlScript, 1, SECONDS);
    const theirs = await runWrk(zoekt.url, zoektScript, 1, SECONDS);
    const failed = ours.failed + theirs.failed > 0 ? ` (failed: ${ours.failed} / ${theirs.failed})` : '';
    rows.push(`| ${name} | ${format(ours.p50)} | ${format(theirs.p50)} | ${(ours.p50 / theirs.p50).toFixed(2)}${failed} |`);
    console.error(rows.at(-1));
  }
  const selective = QUERY_CLASSES[0]!.queries;
  const ours = await runWrk(trawl.url, wrkScript('trawl', '/api/search', selective.map(searchBody)), 64, SECONDS);
  const theirs = await runWrk(zoekt.url, wrkGetScript('zoekt', selective.map(zoektUrl)), 64, SECONDS);
  throughput = `${ours.rps.toFixed(0)} against ${theirs.rps.toFixed(0)} requests/s (${(ours.rps / theirs.rps).toFixed(1)}×), p99 ${format(ours.p99)} against ${format(theirs.p99)} ms`;
} finally {
  await trawl.stop();
  await zoekt.stop();
  removeScratch();
}

const body = `trawl's daemon (\`trawl serve\`, ${os.availableParallelism()} search workers) and Zoekt's \`zoekt-webserver\` (google/zoekt f7d54fa,
its index of the same tree built with symbols), both on Debian's Linux 6.1 tree, warm page cache, in the same run, alternating,
driven by \`wrk\` on the same machine. trawl answers \`POST /api/search\` with \`matches: 100\`, Zoekt \`GET /search?num=${ZOEKT_RESULTS}\`
(the first page its web UI asks for, HTML). A start: from the process's spawn to its first answer holding a file (median of ${START_RUNS}, alternating, each run in brackets); idle RSS: ${IDLE_SECONDS} s after the last start, after that one search (the index pages it touched are counted too); Go's tree is one repository of each, indexed with symbols. Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverage()}.

| one client, p50 ms | trawl | Zoekt | trawl ÷ Zoekt |
|---|---|---|---|
${rows.join('\n')}

| start on each corpus | trawl, s | Zoekt, s | trawl ÷ Zoekt | idle RSS, trawl MiB | Zoekt MiB | trawl ÷ Zoekt |
|---|---|---|---|---|---|---|
${startRows.join('\n')}

- Selective literals from 64 clients: trawl ${throughput}.`;
console.log(`wrote ${writeReportBlock('peers', body)}`);
console.log(body);
