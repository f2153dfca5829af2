/**
 * The credential log of a cluster (docs/cluster.md, "Credentials"), measured on this machine: three trawl nodes on a
 * three-member etcd. A change's latency and when every node takes it (one writer), a revocation's (the other nodes
 * confirm it), group commit under 32 writers, and the etcd leader, then every etcd member, killed with SIGKILL
 * under writes, RUNS times each: how long writes stall, and whether every acknowledged key still opens a read on
 * every node afterwards; then a trawl node killed with SIGKILL under searches, RUNS times: how long until the other
 * nodes leave it out of the fan-out, and how their searches fared meanwhile. Written to docs/benchmarks.md.
 *
 *   npm run bench:credentials   (apt-get install etcd-server)
 */
import fs from 'node:fs';
import path from 'node:path';
import { AuthStore, stateDirectory } from '../src/auth/store.js';
import { healthyCluster, killMember, leaderOf, restartMember, startEtcd } from '../test/cluster/etcd.js';
import { makeRepository } from '../test/helpers/git.js';
import { formatMs as format, removeScratch, scratch, startDaemon, type Daemon } from './http-harness.js';
import { loadAverage, writeReportBlock } from './report.js';

const WRITES = Number(process.env.TRAWL_BENCH_WRITES ?? 300);
const RUNS = Number(process.env.TRAWL_BENCH_KILL_RUNS ?? 5);
const cleanups: (() => unknown)[] = [];
const teardown = { teardown: (cleanup: () => unknown) => void cleanups.push(cleanup) };

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const summary = (values: number[]) => `${format(percentile(values, 0.5))} / ${format(percentile(values, 0.99))}`;

/** The owner's API key, written into node a's state before it starts the cluster's log. */
async function seedOwner(dataDir: string): Promise<string> {
  const { store } = await AuthStore.open({ directory: stateDirectory(dataDir), trustedLicenseKeys: [] });
  try {
    const owner = await store.addUser({ name: 'owner', email: 'owner@example.com', role: 'owner' });
    return (await store.createApiKey(owner.id, 'bench')).secret;
  } finally {
    await store.close();
  }
}

const headers = (secret: string) => ({ Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' });

async function createKey(node: Daemon, owner: string): Promise<{ status: number; id: string; key: string }> {
  const reply = await fetch(`${node.url}/api/admin/api_keys`, { method: 'POST', headers: headers(owner), body: '{"name":"bench"}' });
  const body = (await reply.json()) as { id: string; key: string };
  return { status: reply.status, ...body };
}

const opens = async (node: Daemon, secret: string) => (await fetch(`${node.url}/api/repos`, { headers: headers(secret) })).status === 200;

/** Writes on `nodes` (one writer each) until `stop()`: the keys acknowledged, and the longest time between two acknowledgements. */
function writeLoop(nodes: Daemon[], owner: string) {
  const acknowledged: { key: string }[] = [];
  let stopped = false;
  let last = performance.now();
  let longestGap = 0;
  const done = Promise.all(
    nodes.map(async (node) => {
      while (!stopped) {
        const made = await createKey(node, owner).catch(() => null);
        if (made?.status !== 201) continue;
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
        acknowledged.push(made);
      }
    }),
  );
  return {
    async stop() {
      stopped = true;
      await done;
      return { acknowledged, longestGap };
    },
  };
}

/** The live members `node` sees (its trawl_cluster_members metric). */
async function membersSeen(node: Daemon, owner: string): Promise<number> {
  const metrics = await (await fetch(`${node.url}/metrics`, { headers: headers(owner) })).text();
  return Number(/^trawl_cluster_members (\d+)$/m.exec(metrics)?.[1]);
}

/** Searches `node` one after another until `stop()`: the slowest, and those not answered in full (not 200, or a partition missing). */
function searchLoop(node: Daemon, owner: string) {
  let stopped = false;
  let slowest = 0;
  let partial = 0;
  const done = (async () => {
    while (!stopped) {
      const started = performance.now();
      const reply = await fetch(`${node.url}/api/search`, { method: 'POST', headers: headers(owner), body: '{"query":"package","matches":10}' });
      const answer = (await reply.json()) as { stats?: { crashes: number } };
      slowest = Math.max(slowest, performance.now() - started);
      if (reply.status !== 200 || answer.stats!.crashes > 0) partial++;
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { slowest, partial };
    },
  };
}

/** How many acknowledged keys do not open a read on some node. */
async function lost(nodes: Daemon[], keys: { key: string }[]): Promise<number> {
  let missing = 0;
  for (const { key } of keys) if (!(await Promise.all(nodes.map((node) => opens(node, key)))).every(Boolean)) missing++;
  return missing;
}

const loadAtStart = loadAverage();
let body: string;
try {
  const etcd = await startEtcd(teardown, 3);
  const root = path.join(scratch, 'repo');
  makeRepository(root, { 'main.go': 'package main\n' });
  const keyFile = path.join(scratch, 'cluster.key');
  fs.writeFileSync(keyFile, `${'k'.repeat(40)}\n`, { mode: 0o600 });
  const base = { repos: [{ name: 'example.com/r', path: root }], index: { ctagsCommand: '' }, server: { workers: 1 }, auth: { anonymousAccess: false } };
  const cluster = { etcd: etcd.endpoints, keyFile, partitions: 4, replicas: 2 };
  const owner = await seedOwner(path.join(scratch, 'a'));
  const nodes: Daemon[] = [];
  for (const name of ['a', 'b', 'c']) {
    const node = await startDaemon({ ...base, dataDir: path.join(scratch, name), cluster: { ...cluster, node: name } });
    cleanups.push(() => node.stop());
    nodes.push(node);
  }
  const [a, b, c] = nodes as [Daemon, Daemon, Daemon];

  console.error(`${WRITES} changes, one writer …`);
  const writes: number[] = [];
  const visible: number[] = [];
  const revocations: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const started = performance.now();
    const made = await createKey(a, owner);
    const acknowledged = performance.now();
    // A node that has not applied the key yet waits for it (up to 100 ms) before it answers.
    const everywhere = await Promise.all([opens(b, made.key), opens(c, made.key)]);
    if (!everywhere.every(Boolean)) throw new Error('a key acknowledged on a was refused on b or c');
    visible.push(performance.now() - acknowledged);
    writes.push(acknowledged - started);
    if (i % 5 === 0) {
      const revoking = performance.now();
      await fetch(`${a.url}/api/admin/api_keys/${made.id}`, { method: 'DELETE', headers: headers(owner) });
      revocations.push(performance.now() - revoking);
    }
  }

  console.error('32 writers …');
  const concurrent: number[] = [];
  const groupStarted = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await createKey(a, owner);
        concurrent.push(performance.now() - started);
      }
    }),
  );
  const perSecond = (concurrent.length * 1000) / (performance.now() - groupStarted);

  const kills: { what: string; stalls: number[]; acknowledged: number; lost: number }[] = [];
  for (const what of ['the etcd leader', 'every etcd member'] as const) {
    const row = { what, stalls: [] as number[], acknowledged: 0, lost: 0 };
    for (let run = 0; run < RUNS; run++) {
      console.error(`${what} killed, run ${run + 1} of ${RUNS} …`);
      const loop = writeLoop(nodes, owner);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const victims = what === 'the etcd leader' ? [await leaderOf(etcd)] : etcd.members;
      await Promise.all(victims.map((member) => killMember(member)));
      if (what === 'every etcd member') for (const member of victims) restartMember(member);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      if (what === 'the etcd leader') for (const member of victims) restartMember(member);
      await healthyCluster(etcd.members);
      const { acknowledged, longestGap } = await loop.stop();
      row.stalls.push(longestGap);
      row.acknowledged += acknowledged.length;
      row.lost += await lost(nodes, acknowledged);
    }
    kills.push(row);
  }

  const nodeKills = { outOfFanOut: [] as number[], slowest: [] as number[], partial: 0 };
  for (let run = 0; run < RUNS; run++) {
    console.error(`a trawl node killed, run ${run + 1} of ${RUNS} …`);
    const searching = [searchLoop(a, owner), searchLoop(b, owner)];
    await new Promise((resolve) => setTimeout(resolve, 500));
    const killed = performance.now();
    nodes[2]!.child.kill('SIGKILL');
    while ((await Promise.all([a, b].map((node) => membersSeen(node, owner)))).some((members) => members > 2))
      await new Promise((resolve) => setTimeout(resolve, 20));
    nodeKills.outOfFanOut.push(performance.now() - killed);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const { slowest, partial } of await Promise.all(searching.map((loop) => loop.stop()))) {
      nodeKills.slowest.push(slowest);
      nodeKills.partial += partial;
    }
    await nodes[2]!.stop();
    nodes[2] = await startDaemon({ ...base, dataDir: path.join(scratch, 'c'), cluster: { ...cluster, node: 'c' } });
    cleanups.push(() => nodes[2]!.stop());
    while ((await Promise.all([a, b].map((node) => membersSeen(node, owner)))).some((members) => members < 3))
      await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const kill = (row: (typeof kills)[number]) =>
    `${row.stalls.length} runs: longest stall median ${format(percentile(row.stalls, 0.5))} ms (max ${format(Math.max(...row.stalls))}); ${row.lost} of ${row.acknowledged} acknowledged keys lost`;
  body = `Three nodes (one search worker each) on a three-member etcd, all on this machine (loopback, one disk); ${WRITES} changes from one
writer, then 32 writers, then SIGKILL under writes on all three nodes (the stall: the longest time between two acknowledged writes; every
member killed is started again at once); then, ${RUNS} times, one trawl node killed with SIGKILL while the other two answer searches one after another (out
of the fan-out: until both count it gone from their members). Load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadAverage()}.

| credential log | result |
|---|---|
| a key made (POST, acknowledged), p50 / p99 | ${summary(writes)} ms |
| … taken by both other nodes, from its acknowledgement | ${summary(visible)} ms |
| a key deleted (the other nodes confirm it first) | ${summary(revocations)} ms |
| 32 writers on one node | ${perSecond.toFixed(0)} keys/s, ${summary(concurrent)} ms |
${kills.map((row) => `| ${row.what} killed | ${kill(row)} |`).join('\n')}
| a trawl node killed, searches on the other two | ${RUNS} runs: out of both nodes' fan-out after median ${format(percentile(nodeKills.outOfFanOut, 0.5))} ms (max ${format(Math.max(...nodeKills.outOfFanOut))}); slowest search ${format(Math.max(...nodeKills.slowest))} ms; ${nodeKills.partial} answered in part or not at all |`;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
  removeScratch();
}
console.log(`wrote ${writeReportBlock('cluster-credentials', body)}`);
console.log(body);
