/**
 * What a cluster costs and gives (docs/cluster.md), on Go 1.19's source tree with each top-level directory a
 * repository, beside one node in the same run: the added latency of the fan-out (one client's p50) with every
 * result on one other node (one partition) and spread over four nodes (four partitions), and the selective
 * literals' throughput of two replicas against one node, per CPU-second used; the bytes each node holds, placed by
 * bytes and by count; then a replica joining (the Linux tree copied, not built) and the Linux tree four times on four
 * nodes against one node holding it once. One etcd member (Debian's `etcd-server`) is started for the run.
 * Written to docs/benchmarks.md.
 *
 *   npm run bench:cluster   (apt-get install etcd-server wrk golang-1.19-src linux-source-6.1)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { partitionOf } from '../src/cluster/placement.js';
import { readClusterStatus, type ClusterStatus } from '../src/cluster/status.js';
import { validateConfig } from '../src/config/config.js';
import { ensureLinuxCorpus, GO_SOURCE, LINUX_TARBALL, requireGoSource } from './corpus.js';
import {
  formatMs as format,
  processCost,
  removeScratch,
  runWrk,
  scratch,
  searchBody,
  startDaemon,
  threadCpuSeconds,
  wrkScript,
  type Daemon,
} from './http-harness.js';
import { QUERY_CLASSES } from './queries.js';
import { loadAverage, writeReportBlock } from './report.js';
import { startEtcd } from '../test/cluster/etcd.js';

const SECONDS = Number(process.env.TRAWL_BENCH_HTTP_SECONDS ?? 6);
/** The fan-out's p50s are measured in rounds this long, alternating one node and the cluster. */
const ROUNDS = Number(process.env.TRAWL_BENCH_ROUNDS ?? 7);
const ROUND_SECONDS = 3;
/** Rounds per query class of the Linux comparison. */
const LINUX_ROUNDS = 3;
/** Rounds of the throughput, alternating one node and the replicas. */
const THROUGHPUT_ROUNDS = 3;
const QUERIES = ['ReadFull', 'MustCompile', 'QZXJ_IN_NO_FILE_WK'].map((query) => JSON.stringify({ query, matches: 100, isCaseSensitivityEnabled: true }));
/** A large answer: 3,000 results with a line of context, merged from the nodes' files (docs/cluster.md, "Search"). */
const LARGE = JSON.stringify({ query: 'return err', matches: 3000, contextLines: 1, isCaseSensitivityEnabled: true });

requireGoSource();
const repos = fs
  .readdirSync(GO_SOURCE, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({ name: `go.dev/src/${entry.name}`, path: path.join(GO_SOURCE, entry.name), public: true }));
const keyFile = path.join(scratch, 'cluster.key');
fs.writeFileSync(keyFile, `${'k'.repeat(40)}\n`, { mode: 0o600 });

const base = { repos, index: { ctagsCommand: '' }, server: { rescanIntervalSeconds: 0, workers: 1 } };
const started: Daemon[] = [];
async function node(name: string, config: object): Promise<Daemon> {
  const daemon = await startDaemon({ ...base, dataDir: path.join(scratch, name), ...config });
  started.push(daemon);
  return daemon;
}

/** A cluster of `nodes` nodes (`name`-0, …) over `partitions` partitions, `replicas` each, once every partition is served. */
async function cluster(name: string, etcd: string, nodes: number, partitions: number, replicas: number, repositories = repos): Promise<Daemon[]> {
  const settings = { etcd: [etcd], keyFile, partitions, replicas };
  const daemons = await Promise.all(
    Array.from({ length: nodes }, (_, i) => node(`${name}-${i}`, { repos: repositories, cluster: { ...settings, node: `${name}-${i}` } })),
  );
  await served(name, settings, nodes, repositories);
  return daemons;
}

/** A cluster's settings, as every node of it has them (but its name). */
interface ClusterSettings {
  etcd: string[];
  keyFile: string;
  partitions: number;
  replicas: number;
  placementFloorBytes?: number;
}

/**
 * Resolves once the `nodes` nodes of cluster `name` serve every partition as often as they can, each what it owns
 * (placement settled): their members' status.
 */
async function served(name: string, settings: ClusterSettings, nodes: number, repositories: typeof repos): Promise<ClusterStatus['members']> {
  const config = validateConfig({ repos: repositories, cluster: { ...settings, node: 'status' } }, 'bench');
  const copies = settings.partitions * Math.min(settings.replicas, nodes);
  for (;;) {
    const status = await readClusterStatus(config.cluster!, config.repos);
    const mine = status.members.filter((member) => member.node.startsWith(`${name}-`));
    const settled = mine.every((member) => member.owns === member.serves);
    if (mine.length === nodes && settled && mine.reduce((sum, member) => sum + member.serves, 0) === copies) return mine;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * A replica joining: the Linux tree's shards built by the first node of a cluster of two replicas, then copied from it
 * by the second (docs/cluster.md, "Indexing"); each node's time from its start to serving, and the CPU it used.
 */
async function replicaJoins(etcd: string): Promise<string> {
  const repositories = [{ name: 'kernel.org/linux', path: ensureLinuxCorpus(), public: true }];
  const settings = { etcd: [etcd], keyFile, partitions: 1, replicas: 2 };
  const joins = async (i: number) => {
    const started = performance.now();
    const daemon = await node(`join-${i}`, { repos: repositories, cluster: { ...settings, node: `join-${i}` } });
    await served('join', settings, i + 1, repositories);
    return { daemon, seconds: (performance.now() - started) / 1000, cpuSeconds: processCost(daemon.child.pid!).cpuSeconds };
  };
  console.error('indexing Linux: one node builds it, a replica copies it …');
  const built = await joins(0);
  const copied = await joins(1);
  for (const { daemon } of [built, copied]) await stop(daemon);
  const cost = (run: typeof built) => `${run.seconds.toFixed(1)} s (${run.cpuSeconds.toFixed(1)} CPU-s)`;
  return `- A replica joins (the Linux 6.1 tree, one repository, no symbols; start to serving): the first node built its shards in ${cost(built)}, the second copied them from it, each file checked against its sha256, in ${cost(copied)}: ${(built.seconds / copied.seconds).toFixed(1)}× sooner.`;
}

/**
 * Placement by bytes against by count: Go's repositories over 16 partitions on four nodes, one replica each, the
 * bytes each node serves once every partition is served (by count: a floor no partition reaches).
 */
async function placementBalance(etcd: string): Promise<string> {
  const partitions = 16;
  const spread = async (name: string, placementFloorBytes: number) => {
    const settings = { etcd: [etcd], keyFile, partitions, replicas: 1, placementFloorBytes };
    const started = performance.now();
    const daemons = await Promise.all(Array.from({ length: 4 }, (_, i) => node(`${name}-${i}`, { cluster: { ...settings, node: `${name}-${i}` } })));
    const bytes = (await served(name, settings, 4, repos)).map((member) => member.bytes);
    const seconds = (performance.now() - started) / 1000;
    for (const daemon of daemons) await stop(daemon);
    const mean = bytes.reduce((sum, size) => sum + size, 0) / bytes.length;
    return `the fullest node ${(Math.max(...bytes) / mean).toFixed(2)}× the mean, the emptiest ${(Math.min(...bytes) / mean).toFixed(2)}× (${bytes.map((size) => (size / 1e6).toFixed(1)).join(', ')} MB), settled ${seconds.toFixed(1)} s after the start`;
  };
  const byCount = await spread('count', 2 ** 50);
  const byBytes = await spread('bytes', 1 << 20);
  return `- Placement (Go's ${repos.length} repositories, ${partitions} partitions, four nodes, one replica): by count, ${byCount}; by bytes (\`placementFloorBytes\` 1 MiB), ${byBytes}.`;
}

async function stop(daemon: Daemon): Promise<void> {
  started.splice(started.indexOf(daemon), 1);
  await daemon.stop();
}

/** The daemon of cluster `name` that serves the fewest partitions. */
async function leastServing(etcd: string, name: string, partitions: number, daemons: Daemon[]): Promise<Daemon> {
  const config = validateConfig({ repos, cluster: { etcd: [etcd], keyFile, partitions, replicas: 1, node: 'status' } }, 'bench');
  const { members } = await readClusterStatus(config.cluster!, config.repos);
  const serves = (i: number) => members.find((member) => member.node === `${name}-${i}`)!.serves;
  return daemons.reduce((best, daemon, i) => (serves(i) < serves(daemons.indexOf(best)) ? daemon : best));
}

const GO_SCRIPT = wrkScript('cluster', '/api/search', QUERIES);

/** The CPU time all threads of `daemons` have used, in seconds. */
const cpuSeconds = (daemons: Daemon[]) =>
  daemons.reduce((sum, daemon) => sum + Object.values(threadCpuSeconds(daemon.child.pid!)).reduce((a, b) => a + b, 0), 0);

/** One client's p50 asking `daemons[0]`, and the CPU milliseconds all of `daemons` spent per request meanwhile. */
async function oneClient(daemons: Daemon[], seconds: number, script: string) {
  await runWrk(daemons[0]!.url, script, 2, 1); // warm
  const before = cpuSeconds(daemons);
  const run = await runWrk(daemons[0]!.url, script, 1, seconds);
  return { p50: run.p50, cpuMs: ((cpuSeconds(daemons) - before) * 1000) / (run.rps * seconds) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * One client's p50 on `single` and on the cluster of `nodes` (asking the first), in alternating rounds: the medians,
 * the median of the rounds' differences, and the CPU per request of one node and of the whole cluster (medians).
 */
async function addedLatency(single: Daemon, nodes: Daemon[], script = GO_SCRIPT, rounds = ROUNDS) {
  const alone: { p50: number; cpuMs: number }[] = [];
  const fanned: { p50: number; cpuMs: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    alone.push(await oneClient([single], ROUND_SECONDS, script));
    fanned.push(await oneClient(nodes, ROUND_SECONDS, script));
  }
  return {
    alone: median(alone.map((run) => run.p50)),
    fanned: median(fanned.map((run) => run.p50)),
    added: median(fanned.map((run, i) => run.p50 - alone[i]!.p50)),
    cpuAlone: median(alone.map((run) => run.cpuMs)),
    cpuFanned: median(fanned.map((run) => run.cpuMs)),
  };
}

interface Throughput {
  rps: number;
  perCpuSecond: number;
}

/** Selective literals from 16 clients: requests/s, and requests per CPU-second of the daemons. */
async function throughput(daemons: Daemon[]): Promise<Throughput> {
  const script = wrkScript('cluster', '/api/search', QUERIES.slice(0, 2));
  await runWrk(daemons[0]!.url, script, 4, 1);
  const before = cpuSeconds(daemons);
  // Each daemon gets its share of the clients, as behind a load balancer.
  const runs = await Promise.all(daemons.map((daemon) => runWrk(daemon.url, script, 16 / daemons.length, SECONDS)));
  const rps = runs.reduce((sum, run) => sum + run.rps, 0);
  return { rps, perCpuSecond: (rps * SECONDS) / (cpuSeconds(daemons) - before) };
}

/**
 * The Linux tree four times (four repositories of one working tree, one to a partition) on four nodes, one
 * partition each, against one node holding it once: each query class's p50 from one client, in alternating rounds.
 */
async function linuxFourTimes(etcd: string): Promise<string> {
  const corpus = ensureLinuxCorpus();
  const names: string[] = [];
  const partitionsTaken = new Set<number>();
  for (let i = 0; names.length < 4; i++) {
    const candidate = `kernel.org/linux-${i}`;
    if (partitionsTaken.has(partitionOf(candidate, 4))) continue;
    partitionsTaken.add(partitionOf(candidate, 4));
    names.push(candidate);
  }
  const copies = names.map((repository) => ({ name: repository, path: corpus, public: true }));
  console.error('indexing Linux: one node once, four nodes a copy each …');
  const single = await node('linux-single', { repos: copies.slice(0, 1) });
  const daemons = await cluster('linux', etcd, 4, 4, 1, copies); // one partition a node: placement bounds each node's share
  const rows: string[] = [];
  for (const { name: queryClass, queries } of QUERY_CLASSES) {
    const script = wrkScript('linux', '/api/search', queries.map(searchBody));
    const { alone, fanned, cpuAlone, cpuFanned } = await addedLatency(single, daemons, script, LINUX_ROUNDS);
    rows.push(`| ${queryClass} | ${format(alone)} | ${format(fanned)} | ${(fanned / alone).toFixed(2)}× | ${format(cpuAlone)} | ${format(cpuFanned)} |`);
    console.error(rows.at(-1));
  }
  for (const daemon of [single, ...daemons]) await stop(daemon);
  return `The Linux 6.1 tree four times (${names.length} repositories of one working tree, no symbols), one to a partition, on four nodes serving one
partition each, against one node holding the tree once; each node one search worker. Each query class of the search-latency table,
\`matches: 100\`, one client, ${LINUX_ROUNDS} rounds of ${ROUND_SECONDS} s alternating, medians. CPU: every thread of the daemons (from /proc), over the
requests answered; the four nodes share this machine's ${os.availableParallelism()} cores. Target: within 2× of one node's p50.

| Linux, one client, p50 ms | one node, 1× | four nodes, 4× | ratio | CPU ms a request, one node | four nodes |
|---|---|---|---|---|---|
${rows.join('\n')}`;
}

const loadAtStart = loadAverage();
const stopEtcd: (() => unknown)[] = [];
const etcdUrl = (await startEtcd({ teardown: (stop) => void stopEtcd.push(stop) }, 1)).endpoints[0]!;
let body: string;
try {
  console.error('indexing: one node, then each cluster in turn …');
  const single = await node('single', {});
  const rows: string[] = [];
  // One cluster at a time: they share the etcd member, and a node sees every member registered there.
  for (const [name, nodes, partitions] of [
    ['1 partition, on another node', 2, 1],
    ['4 partitions on 4 nodes', 4, 4],
  ] as const) {
    const daemons = await cluster(`p${partitions}`, etcdUrl, nodes, partitions, 1);
    // The node asked serves no partition, or one of four: every result, or three quarters, come from the others.
    const asked = await leastServing(etcdUrl, `p${partitions}`, partitions, daemons);
    const ordered = [asked, ...daemons.filter((daemon) => daemon !== asked)];
    const { alone, fanned, added } = await addedLatency(single, ordered);
    rows.push(`| ${name} | ${format(alone)} | ${format(fanned)} | +${format(added)} |`);
    console.error(rows.at(-1));
    if (partitions > 1) {
      const large = await addedLatency(single, ordered, wrkScript('cluster-large', '/api/search', [LARGE]));
      rows.push(`| ${name}, 3,000 results with context | ${format(large.alone)} | ${format(large.fanned)} | +${format(large.added)} |`);
      console.error(rows.at(-1));
    }
    for (const daemon of daemons) await stop(daemon);
  }
  const replicas = await cluster('two', etcdUrl, 2, 4, 2);
  const rounds = { one: [] as Throughput[], two: [] as Throughput[] };
  for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
    rounds.one.push(await throughput([single]));
    rounds.two.push(await throughput(replicas));
  }
  const medians = (runs: Throughput[]) => ({ rps: median(runs.map((run) => run.rps)), perCpuSecond: median(runs.map((run) => run.perCpuSecond)) });
  const one = medians(rounds.one);
  const two = medians(rounds.two);
  for (const daemon of [single, ...replicas]) await stop(daemon);
  const placement = await placementBalance(etcdUrl);
  const linux = fs.existsSync(LINUX_TARBALL)
    ? `${await replicaJoins(etcdUrl)}\n\n${await linuxFourTimes(etcdUrl)}`
    : `\nThe Linux rows need ${LINUX_TARBALL} (apt-get install linux-source-6.1).`;
  body = `One node against clusters of nodes on this machine, in the same run: Go 1.19's \`src\`, each of its ${repos.length} top-level
directories a repository, every node with one search worker, one etcd member. Queries: \`ReadFull\`, \`MustCompile\` and a literal in no
file, \`matches: 100\` (the large answer: \`return err\`, \`matches: 3000\`, \`contextLines: 1\`), one client (\`wrk\`): ${ROUNDS} rounds of ${ROUND_SECONDS} s alternating one node and the cluster, the medians (added: of the
rounds' differences). Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverage()}.

| fan-out, one client, p50 ms | one node | cluster | added |
|---|---|---|---|
${rows.join('\n')}

- Selective literals, 16 clients spread over the nodes (${SECONDS} s, ${THROUGHPUT_ROUNDS} rounds alternating, medians): one node ${one.rps.toFixed(0)} requests/s (${one.perCpuSecond.toFixed(0)} per CPU-second), two replicas ${two.rps.toFixed(0)} (${two.perCpuSecond.toFixed(0)} per CPU-second): ${(two.rps / one.rps).toFixed(2)}× the requests, ${(two.perCpuSecond / one.perCpuSecond).toFixed(2)}× per CPU-second, on ${os.availableParallelism()} cores shared by all.
${placement}
${linux}`;
} finally {
  await Promise.all(started.map((daemon) => daemon.stop()));
  for (const stop of stopEtcd) await stop();
  removeScratch();
}
console.log(`wrote ${writeReportBlock('cluster', body)}`);
console.log(body);
