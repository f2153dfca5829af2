import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { AuthStore, stateDirectory } from '../../src/auth/store.js';
import { trawlAsync } from '../helpers/cli.js';
import { bearer, LICENSE_ENV, seedUsers, TEST_LICENSE_KEYS, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { healthyCluster, killMember, restartMember, startEtcd, type EtcdMember } from './etcd.js';

/** Changes the log holds before it is compacted, in these tests. */
const SNAPSHOT_AFTER = 10;

interface StoredKey {
  key: string;
  modRevision: number;
  value: Buffer;
}

/** The keys under `prefix` in etcd, read through its JSON gateway (as an operator's etcdctl would). */
async function etcdKeys(endpoint: string, prefix: string): Promise<StoredKey[]> {
  const start = Buffer.from(prefix);
  const end = Buffer.from(start);
  end[end.length - 1]!++;
  const reply = await fetch(`${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: start.toString('base64'), range_end: end.toString('base64') }),
  });
  const { kvs = [] } = (await reply.json()) as { kvs?: { key: string; mod_revision: string; value?: string }[] };
  return kvs.map((kv) => ({
    key: Buffer.from(kv.key, 'base64').toString(),
    modRevision: Number(kv.mod_revision),
    value: Buffer.from(kv.value ?? '', 'base64'),
  }));
}

/** The snapshot's description (through, id, chunks…), or null before the first compaction. */
async function snapshotMeta(endpoint: string): Promise<{ through: number; id: string; chunks: number; bytes: number } | null> {
  const [meta] = await etcdKeys(endpoint, 'trawl/state/snapshot');
  return meta ? (JSON.parse(meta.value.toString()) as { through: number; id: string; chunks: number; bytes: number }) : null;
}

async function createKey(daemon: Daemon, secret: string, name: string): Promise<{ status: number; id: string; key: string; message?: string }> {
  const reply = await daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: bearer(secret), body: JSON.stringify({ name }) });
  return { status: reply.status, ...((await reply.json()) as { id: string; key: string; message?: string }) };
}

async function readWith(daemon: Daemon, secret: string): Promise<number> {
  return (await daemon.fetch('/api/repos', { headers: bearer(secret) })).status;
}

async function listedKeys(daemon: Daemon, owner: SeededUser): Promise<string[]> {
  const keys = (await (await daemon.fetch('/api/admin/api_keys?userId=*', { headers: bearer(owner.key) })).json()) as { id: string }[];
  return keys.map((key) => key.id).sort();
}

/** Makes `count` keys on `nodes` in turn, each acknowledged. */
async function makeKeys(t: Test, nodes: Daemon[], owner: SeededUser, count: number, label: string) {
  const made: { id: string; key: string }[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await createKey(nodes[i % nodes.length]!, owner.key, `${label} ${i}`);
    if (reply.status !== 201) t.fail(`creating a key answered ${reply.status}: ${reply.message}`);
    made.push({ id: reply.id, key: reply.key });
  }
  return made;
}

/**
 * Makes keys on `nodes` in turn (into `made`) until etcd holds a snapshot past `revision` and no commit it covers:
 * compactions follow the changes, so the test writes until one came.
 */
async function writeUntilCompactedPast(t: Test, endpoint: string, revision: number, nodes: Daemon[], owner: SeededUser, made: { id: string; key: string }[]) {
  for (let i = 0; i < 10 * SNAPSHOT_AFTER; i++) {
    const meta = await snapshotMeta(endpoint);
    if (meta && meta.through > revision && (await etcdKeys(endpoint, 'trawl/state/records/')).every((commit) => commit.modRevision > meta.through)) return meta;
    made.push(...(await makeKeys(t, [nodes[i % nodes.length]!], owner, 1, `key ${made.length}`)));
  }
  throw new Error(`no snapshot past revision ${revision} after ${10 * SNAPSHOT_AFTER} changes`);
}

/** The configuration of a test's nodes, `node(name, etcd endpoints)`: one repository, one cluster key. */
function nodesOf(t: Test) {
  const root = path.join(tempDir(t, 'trawl-snapshot-repo-'), 'r');
  makeRepository(root, { 'main.go': 'package main\n' });
  const keyFile = path.join(tempDir(t, 'trawl-snapshot-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  const base = { repos: [{ name: 'example.com/acme/r', path: root }], index: { ctagsCommand: '' }, server: { workers: 1 }, auth: { anonymousAccess: false } };
  return (name: string, etcd: string[]) => ({
    ...base,
    cluster: { etcd, keyFile, node: name, partitions: 4, replicas: 2, snapshotAfterChanges: SNAPSHOT_AFTER },
  });
}

/** Starts the node that starts the cluster's log, with an owner (and whatever `more` adds) in its state first. */
async function startFirst(t: Test, config: Record<string, unknown>, more?: (store: AuthStore, owner: SeededUser) => Promise<void>) {
  let owner!: SeededUser;
  const daemon = await startDaemon(t, config, {
    env: LICENSE_ENV,
    prepare: async (configFile) => {
      owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']!;
      if (!more) return;
      const { dataDir } = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { dataDir: string };
      const { store } = await AuthStore.open({ directory: stateDirectory(dataDir), trustedLicenseKeys: TEST_LICENSE_KEYS });
      await more(store, owner).finally(() => store.close());
    },
  });
  return { daemon, owner };
}

t.test('the credential log on etcd is compacted into a snapshot, which nodes behind it restore', async (t) => {
  const etcd = await startEtcd(t, 1);
  const [endpoint] = etcd.endpoints as [string];
  const nodeConfig = nodesOf(t);
  const node = (name: string) => nodeConfig(name, etcd.endpoints);
  const { daemon: a, owner } = await startFirst(t, node('a'));
  const b = await startDaemon(t, node('b'), { env: LICENSE_ENV });

  const first: { id: string; key: string }[] = [];
  const meta = await writeUntilCompactedPast(t, endpoint, 0, [a, b], owner, first);
  t.ok(first.length >= SNAPSHOT_AFTER - 1, 'no compaction before the log held its bound of changes');
  t.ok((await etcdKeys(endpoint, 'trawl/state/records/')).length < first.length, 'then the log holds fewer commits than were made');
  t.equal((await etcdKeys(endpoint, 'trawl/state-snapshots/')).length, meta.chunks, "only the snapshot's own chunks are kept");
  const status = await trawlAsync(['cluster', 'status', '--json', '--config', a.configFile]);
  const [logHead] = await etcdKeys(endpoint, 'trawl/state/head');
  t.same(
    (JSON.parse(status.stdout) as { credentialLog: unknown }).credentialLog,
    {
      head: logHead!.modRevision,
      commits: (await etcdKeys(endpoint, 'trawl/state/records/')).length,
      snapshot: { through: meta.through, bytes: meta.bytes },
    },
    'trawl cluster status shows the log: its head, its commits, its snapshot',
  );
  t.match((await trawlAsync(['cluster', 'status', '--config', a.configFile])).stdout, `after its snapshot through revision ${meta.through}`);
  for (const daemon of [a, b]) {
    const statuses = new Set(await Promise.all(first.map((made) => readWith(daemon, made.key))));
    t.same([...statuses], [200], 'every key made before the compaction still works, on both nodes');
  }

  // b stops; keys are made and deleted meanwhile, and the commits it missed are compacted away.
  const [head] = await etcdKeys(endpoint, 'trawl/state/head');
  t.equal(await b.stop(), 0);
  const deleted = first.slice(0, 3);
  for (const made of deleted) t.equal((await a.fetch(`/api/admin/api_keys/${made.id}`, { method: 'DELETE', headers: bearer(owner.key) })).status, 204);
  const second: { id: string; key: string }[] = [];
  await writeUntilCompactedPast(t, endpoint, head!.modRevision, [a], owner, second);

  const b2 = await runDaemon(t, b.configFile, { env: LICENSE_ENV });
  const c = await startDaemon(t, node('c'), { env: LICENSE_ENV });
  const expected = await listedKeys(a, owner);
  for (const [name, daemon] of [['b, restarted from its checkpoint', b2] as const, ['c, a new node', c] as const]) {
    t.same(await listedKeys(daemon, owner), expected, `${name} lists the keys a lists`);
    const live = new Set(await Promise.all([...first.slice(3), ...second].map((made) => readWith(daemon, made.key))));
    t.same([...live], [200], `${name}: every live key works`);
    const revoked = new Set(await Promise.all(deleted.map((made) => readWith(daemon, made.key))));
    t.same([...revoked], [401], `${name}: keys deleted while it was away are refused`);
  }
  await b2.waitForLog(/restored from the log's snapshot/, 'b says it restored the snapshot');
  const made = await createKey(c, owner.key, 'after the restore');
  t.equal(made.status, 201, 'a node that restored the snapshot commits changes');
  t.equal(await readWith(b2, made.key), 200, 'which the others apply');

  // A snapshot whose bytes are damaged is reported, never applied: the node keeps its checkpoint and refuses changes.
  // Only a stays, so that only a compacts: no later snapshot replaces the damaged one.
  const [head2] = await etcdKeys(endpoint, 'trawl/state/head');
  t.equal(await b2.stop(), 0);
  t.equal(await c.stop(), 0);
  const third: { id: string; key: string }[] = [];
  const damagedMeta = await writeUntilCompactedPast(t, endpoint, head2!.modRevision, [a], owner, third);
  const [chunk] = await etcdKeys(endpoint, `trawl/state-snapshots/${damagedMeta.id}/`);
  const flipped = Buffer.from(chunk!.value);
  flipped[flipped.length >> 1]! ^= 0x01;
  const put = await fetch(`${endpoint}/v3/kv/put`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(chunk!.key).toString('base64'), value: flipped.toString('base64') }),
  });
  t.equal(put.status, 200);
  const b3 = await runDaemon(t, b.configFile, { env: LICENSE_ENV });
  await b3.waitForLog(/credential log is damaged/, 'b says the snapshot is damaged');
  t.equal(await readWith(b3, owner.key), 200, 'reads go on with the checkpoint it has');
  t.equal(await readWith(b3, third.at(-1)!.key), 401, 'a key made while it was away is not taken');
  const refused = await createKey(b3, owner.key, 'on a damaged log');
  t.equal(refused.status, 503, 'changes are refused');
  t.match(refused.message, /damaged/, 'saying the log is damaged');
});

/** etcd's revision now (asked again while a member is elected after another was killed). */
async function etcdRevision(endpoint: string): Promise<number> {
  let revision = 0;
  await waitFor(
    async () => {
      const reply = await fetch(`${endpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('-').toString('base64') }) });
      revision = Number(((await reply.json()) as { header?: { revision: string } }).header?.revision ?? 0);
      return revision > 0;
    },
    10_000,
    "etcd's revision",
  );
  return revision;
}

async function membersSeenBy(daemon: Daemon, owner: SeededUser): Promise<number> {
  const metrics = await (await daemon.fetch('/metrics', { headers: bearer(owner.key) })).text();
  return Number(/^trawl_cluster_members (\d+)$/m.exec(metrics)?.[1]);
}

t.test("a node whose watches fall behind etcd's compacted history lists again: the members, and the log's snapshot while it serves", async (t) => {
  const etcd = await startEtcd(t, 3);
  const [x, y, z] = etcd.members as [EtcdMember, EtcdMember, EtcdMember];
  const nodeConfig = nodesOf(t);
  // b reaches etcd only through x; a and c through y and z.
  const node = (name: string, members: EtcdMember[]) =>
    nodeConfig(
      name,
      members.map((member) => member.clientUrl),
    );
  const { daemon: a, owner } = await startFirst(t, node('a', [y, z]));
  const b = await startDaemon(t, node('b', [x]), { env: LICENSE_ENV });
  const early = await makeKeys(t, [a], owner, 1, 'early');
  await waitFor(async () => (await readWith(b, early[0]!.key)) === 200, 5_000, 'b takes the first key');
  t.equal(await membersSeenBy(b, owner), 2, 'b sees a and itself');

  // While b cannot reach etcd: a key deleted, the log compacted past it, a third node joins, etcd's history compacted.
  await killMember(x);
  const cutOffAt = await etcdRevision(y.clientUrl);
  t.equal((await a.fetch(`/api/admin/api_keys/${early[0]!.id}`, { method: 'DELETE', headers: bearer(owner.key) })).status, 204);
  const later: { id: string; key: string }[] = [];
  await writeUntilCompactedPast(t, y.clientUrl, cutOffAt, [a], owner, later);
  await startDaemon(t, node('c', [y, z]), { env: LICENSE_ENV });
  const compaction = await fetch(`${y.clientUrl}/v3/kv/compaction`, {
    method: 'POST',
    body: JSON.stringify({ revision: String(await etcdRevision(y.clientUrl)), physical: true }),
  });
  t.equal(compaction.status, 200, "etcd's history compacted");
  restartMember(x);
  await healthyCluster(etcd.members);

  await b.waitForLog(/restored from the log's snapshot/, 'b restores the snapshot', 30_000);
  t.equal(await readWith(b, early[0]!.key), 401, 'the key deleted while b was cut off is refused on b');
  const live = new Set(await Promise.all(later.map((made) => readWith(b, made.key))));
  t.same([...live], [200], 'the keys made meanwhile work on b');
  await waitFor(async () => (await membersSeenBy(b, owner)) === 3, 30_000, 'b sees the node that joined while it was cut off');
});

t.test("a node whose state is over one commit's limit starts the cluster's log with it, as a snapshot", async (t) => {
  const etcd = await startEtcd(t, 1);
  const [endpoint] = etcd.endpoints as [string];
  const nodeConfig = nodesOf(t);
  const secrets: string[] = [];
  // About 1.4 MB of records: over the 1 MiB that etcd takes in one request.
  const { daemon: a, owner } = await startFirst(t, nodeConfig('a', etcd.endpoints), async (store, owner) => {
    const made = await Promise.all(Array.from({ length: 7000 }, (_, i) => store.createApiKey(owner.id, `bulk ${i}`)));
    secrets.push(...made.map((key) => key.secret));
  });
  const meta = await snapshotMeta(endpoint);
  t.ok(meta && meta.chunks >= 2, "the first node's state went to etcd as a snapshot of several chunks");
  t.same(await etcdKeys(endpoint, 'trawl/state/records/'), [], 'not as a commit');
  const b = await startDaemon(t, nodeConfig('b', etcd.endpoints), { env: LICENSE_ENV });
  await b.waitForLog(/restored from the log's snapshot/, 'b restores it');
  const sample = secrets.filter((_, i) => i % 350 === 0).concat(owner.key);
  for (const daemon of [a, b]) {
    const statuses = new Set(await Promise.all(sample.map((secret) => readWith(daemon, secret))));
    t.same([...statuses], [200], 'the keys of the first node work on every node');
  }
  t.equal((await listedKeys(b, owner)).length, secrets.length + 1, 'b lists every one');
});
