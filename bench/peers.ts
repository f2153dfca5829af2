/**
 * trawl's daemon beside Zoekt's webserver (google/zoekt f7d54fa, built from a checkout: docs/benchmarks.md,
 * "Peers") on the Linux 6.1 corpus, in the same run, alternating: start to first answered search, idle RSS,
 * and one client's p50 latency per query class (the floor, a literal in no file, included), with the selective
 * literals' throughput from 64 clients. trawl answers `POST /api/search` with `matches: 100`, Zoekt
 * `GET /search?num=50` (its first page, as its web UI asks). Written to docs/benchmarks.md.
 *
 *   TRAWL_BENCH_ZOEKT_DIR=<dir with zoekt-index and zoekt-webserver> npm run bench:peers   (apt-get install wrk)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
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

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
const trawlConfig = { dataDir, repos: [linuxRepositoryConfig(corpus)], server: { rescanIntervalSeconds: 0 } };
console.error('indexing (skipped when the index is current) …');
await runIndex(validateConfig(trawlConfig, 'bench'));
const zoektIndex = ensureZoektIndex(path.join(ZOEKT_DIR, 'zoekt-index'), corpus, path.join(benchDirectory(), 'zoekt-linux'));
warmPageCache(dataDir);
warmPageCache(zoektIndex);

const zoektUrl = (q: BenchQuery) => `/search?${new URLSearchParams({ q: zoektQuery(q), num: String(ZOEKT_RESULTS) })}`;

/** trawl's daemon once it has answered a search with files (it answers before health is `ok`, which waits for the first index pass). */
async function startTrawl(): Promise<Running> {
  const daemon = await startDaemon(trawlConfig, {}, [], false);
  for (;;) {
    const answer = await fetch(`${daemon.url}/api/search`, { method: 'POST', body: searchBody(PROBE) });
    if (answer.ok && ((await answer.json()) as { files: unknown[] }).files.length > 0) return daemon;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startZoekt(): Promise<Running> {
  const port = await freePort();
  const child = spawn(path.join(ZOEKT_DIR!, 'zoekt-webserver'), ['-index', zoektIndex, '-listen', `127.0.0.1:${port}`], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`zoekt-webserver exited with ${code}`))));
  for (;;) {
    const answered = await Promise.race([
      fetch(`${url}${zoektUrl(PROBE)}`).then(
        (response) => response.text(),
        () => '',
      ),
      exited,
    ]);
    if (answered.includes(PROBE.query)) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  exited.catch(() => {}); // stopped on purpose from here on
  return { url, child, stop: () => terminated(child) };
}

const rssMiB = (pid: number) => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

const loadAtStart = loadAverage();
const trawlStart = { seconds: [] as number[], idleMiB: NaN };
const zoektStart = { seconds: [] as number[], idleMiB: NaN };
// Alternating: each peer's runs interleave with the other's, so both share the machine's load.
for (let round = 0; round < START_RUNS; round++) {
  for (const [start, into, name] of [
    [startTrawl, trawlStart, 'trawl'],
    [startZoekt, zoektStart, 'Zoekt'],
  ] as const) {
    const started = performance.now();
    const peer = await start();
    into.seconds.push((performance.now() - started) / 1000);
    if (round === START_RUNS - 1) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
      into.idleMiB = rssMiB(peer.child.pid!);
    }
    await peer.stop();
    console.error(`${name} start ${round + 1}: first search after ${into.seconds.at(-1)!.toFixed(2)} s`);
  }
}

const trawl = await startTrawl();
const zoekt = await startZoekt();
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

const seconds = (values: number[]) => `${median(values).toFixed(2)} (${values.map((value) => value.toFixed(2)).join(', ')})`;
const body = `trawl's daemon (\`trawl serve\`, ${os.availableParallelism()} search workers) and Zoekt's \`zoekt-webserver\` (google/zoekt f7d54fa,
its index of the same tree built with symbols), both on Debian's Linux 6.1 tree, warm page cache, in the same run, alternating,
driven by \`wrk\` on the same machine. trawl answers \`POST /api/search\` with \`matches: 100\`, Zoekt \`GET /search?num=${ZOEKT_RESULTS}\`
(the first page its web UI asks for, HTML). Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverage()}.

| one client, p50 ms | trawl | Zoekt | trawl ÷ Zoekt |
|---|---|---|---|
${rows.join('\n')}

- Start to first answered search, seconds (median of ${START_RUNS}, each run): trawl ${seconds(trawlStart.seconds)}, Zoekt ${seconds(zoektStart.seconds)}.
- RSS ${IDLE_SECONDS} s after start, idle, after the first search (the index pages a search touched are counted too): trawl ${trawlStart.idleMiB.toFixed(0)} MiB, Zoekt ${zoektStart.idleMiB.toFixed(0)} MiB.
- Selective literals from 64 clients: trawl ${throughput}.`;
console.log(`wrote ${writeReportBlock('peers', body)}`);
console.log(body);
