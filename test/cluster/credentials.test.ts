import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { healthyCluster, killMember, leaderOf, restartMember, startEtcd, type EtcdCluster } from './etcd.js';

function keyFile(t: Test): string {
  const file = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(file, 'k'.repeat(40) + '\n', { mode: 0o600 });
  return file;
}

/** Three nodes on one etcd, the owner (with a key) written into node a's state before it starts the cluster's log. */
async function credentialCluster(t: Test, etcd: EtcdCluster) {
  const root = path.join(tempDir(t, 'trawl-cluster-repo-'), 'r');
  makeRepository(root, { 'main.go': 'package main\n' });
  const base = {
    repos: [{ name: 'example.com/acme/r', path: root }],
    index: { ctagsCommand: '' },
    server: { workers: 1 },
    auth: { anonymousAccess: false },
  };
  const cluster = { etcd: etcd.endpoints, keyFile: keyFile(t), partitions: 4, replicas: 2 };
  let owner: SeededUser | undefined;
  const a = await startDaemon(
    t,
    { ...base, cluster: { ...cluster, node: 'a' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => void (owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']),
    },
  );
  const [b, c] = await Promise.all(['b', 'c'].map((node) => startDaemon(t, { ...base, cluster: { ...cluster, node } }, { env: LICENSE_ENV })));
  return { nodes: [a, b!, c!], owner: owner! };
}

/** The status of an authenticated read with `secret`. */
async function readWith(daemon: Daemon, secret: string): Promise<number> {
  return (await daemon.fetch('/api/repos', { headers: bearer(secret) })).status;
}

async function createKey(daemon: Daemon, secret: string, name: string): Promise<{ status: number; body: { id?: string; key?: string; message?: string } }> {
  const reply = await daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: bearer(secret), body: JSON.stringify({ name }) });
  return { status: reply.status, body: (await reply.json()) as { id?: string; key?: string; message?: string } };
}

async function owners(daemon: Daemon, secret: string): Promise<number> {
  const users = (await (await daemon.fetch('/api/ee/users', { headers: bearer(secret) })).json()) as { role: string }[];
  return users.filter((user) => user.role.toLowerCase() === 'owner').length;
}

/**
 * Writes keys on every node, round robin, until `stop` resolves: the keys etcd acknowledged (201), and the changes
 * refused meanwhile (503, while etcd could not confirm them).
 */
async function writeKeysUntil(nodes: Daemon[], secret: string, stop: Promise<void>) {
  const acknowledged: { id: string; key: string }[] = [];
  const refused: string[] = [];
  let stopped = false;
  void stop.then(() => (stopped = true));
  await Promise.all(
    nodes.map(async (node, n) => {
      for (let i = 0; !stopped; i++) {
        const { status, body } = await createKey(node, secret, `load ${n}.${i}`);
        if (status === 201) acknowledged.push({ id: body.id!, key: body.key! });
        else if (status === 503) refused.push(body.message!);
        else throw new Error(`creating a key answered ${status}: ${JSON.stringify(body)}`);
      }
    }),
  );
  return { acknowledged, refused };
}

const LISTED_WITHIN_MS = 10_000;

/**
 * Every acknowledged key opens a read on every node, and every node lists it within LISTED_WITHIN_MS: a node
 * whose watch resumes after etcd was down applies the writes it missed a moment later.
 */
async function checkNoneLost(t: Test, nodes: Daemon[], owner: SeededUser, acknowledged: { id: string; key: string }[]) {
  for (const [i, node] of nodes.entries()) {
    const unlisted = async () => {
      const listed = new Set(
        ((await (await node.fetch('/api/admin/api_keys?userId=*', { headers: bearer(owner.key) })).json()) as { id: string }[]).map((key) => key.id),
      );
      return acknowledged.filter((key) => !listed.has(key.id));
    };
    let missing = await unlisted();
    for (const deadline = Date.now() + LISTED_WITHIN_MS; missing.length > 0 && Date.now() < deadline; missing = await unlisted()) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.same(missing, [], `node ${'abc'[i]} lists every acknowledged key`);
    const statuses = new Set(await Promise.all(acknowledged.map((key) => readWith(node, key.key))));
    t.same([...statuses], acknowledged.length > 0 ? [200] : [], `every acknowledged key opens a read on node ${'abc'[i]}`);
  }
}

t.test('three nodes share one credential log on etcd', async (t) => {
  const etcd = await startEtcd(t);
  const { nodes, owner } = await credentialCluster(t, etcd);
  const [a, b, c] = nodes as [Daemon, Daemon, Daemon];

  for (const node of nodes) t.equal(await readWith(node, owner.key), 200, "the owner's key, written before node a started the log, works everywhere");

  const made = await createKey(b, owner.key, 'made on b');
  t.equal(made.status, 201);
  t.equal(await readWith(c, made.body.key!), 200, 'a key made on b works on c at the next request');
  const del = await c.fetch(`/api/admin/api_keys/${made.body.id}`, { method: 'DELETE', headers: bearer(owner.key) });
  t.equal(del.status, 204);
  t.equal(await readWith(a, made.body.key!), 401, 'deleted on c, refused on a at the next request');
  t.equal(await readWith(b, made.body.key!), 401, 'and on b');

  // Each node keeps its audit trail; any node answers from all of them.
  const trail = (await (await a.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner.key) })).json()) as {
    action: string;
    targetId: string;
    metadata: { name?: string };
  }[];
  t.ok(
    trail.some((entry) => entry.action === 'apikey.created' && entry.metadata.name === 'made on b'),
    "node a's audit answer holds the key made on b",
  );
  t.ok(
    trail.some((entry) => entry.action === 'apikey.deleted' && entry.targetId === made.body.id),
    'and its deletion on c',
  );

  // Decisions on the state are compare-and-swap: of three nodes adding one email at once, one adds it.
  const adds = await Promise.all(
    nodes.map((node) =>
      node.fetch('/api/ee/users', {
        method: 'POST',
        headers: bearer(owner.key),
        body: JSON.stringify({ name: 'Dee', email: 'dee@example.com', role: 'MEMBER' }),
      }),
    ),
  );
  t.same(adds.map((reply) => reply.status).sort(), [201, 400, 400], 'one email, one member');
  const second = (await (
    await a.fetch('/api/ee/users', {
      method: 'POST',
      headers: bearer(owner.key),
      body: JSON.stringify({ name: 'Ola', email: 'ola@example.com', role: 'OWNER' }),
    })
  ).json()) as { id: string };
  const secondKey = (
    (await (
      await a.fetch('/api/admin/api_keys', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ name: 'ola', userId: second.id }) })
    ).json()) as { key: string }
  ).key;
  // Two owners each demote themselves at once, on two nodes: never none left.
  const demotions = await Promise.all([
    a.fetch('/api/ee/user/role', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ userId: owner.id, role: 'MEMBER' }) }),
    b.fetch('/api/ee/user/role', { method: 'POST', headers: bearer(secondKey), body: JSON.stringify({ userId: second.id, role: 'MEMBER' }) }),
  ]);
  t.equal(demotions.filter((reply) => reply.status === 200).length, 1, 'one demotion is taken, the other refused');
  const stillOwner = demotions[0]!.status === 200 ? secondKey : owner.key;
  for (const node of nodes) t.equal(await owners(node, stillOwner), 1, 'one owner on every node');
  const ownerKey = stillOwner;

  // A node restarted reads its checkpoint and what it missed.
  await b.stop();
  const whileDown = await createKey(a, ownerKey, 'made while b was down');
  t.equal(whileDown.status, 201);
  const b2 = await runDaemon(t, b.configFile, { env: LICENSE_ENV });
  t.equal(await readWith(b2, whileDown.body.key!), 200, 'a key made while b was down works on b after its restart');
  t.equal(await readWith(b2, made.body.key!), 401, 'and a key deleted before stays deleted');
  const live = [a, b2, c];

  // A paused node: changes on the others go on (a revocation waits for it a bounded time), and once it resumes it
  // has every acknowledged change, the revocation included.
  const doomed = await createKey(a, ownerKey, 'deleted while b is paused');
  b2.process.kill('SIGSTOP');
  const paused = await writeKeysUntil([a, c], ownerKey, new Promise((resolve) => setTimeout(resolve, 1000)));
  t.equal(
    (await c.fetch(`/api/admin/api_keys/${doomed.body.id}`, { method: 'DELETE', headers: bearer(ownerKey) })).status,
    204,
    'a revocation is acknowledged',
  );
  b2.process.kill('SIGCONT');
  t.equal(await readWith(b2, doomed.body.key!), 401, 'the node paused meanwhile refuses the revoked key');
  await checkNoneLost(t, live, { ...owner, key: ownerKey }, paused.acknowledged);

  // The etcd leader killed under writes on every node: every acknowledged key is kept, and writes go on.
  for (let round = 0; round < 2; round++) {
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const writing = writeKeysUntil(live, ownerKey, stopped);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const leader = await leaderOf(etcd);
    await killMember(leader);
    const killedAt = Date.now();
    // Writes resume on the two members left.
    await waitFor(async () => (await createKey(a, ownerKey, 'after the kill')).status === 201, 20_000, 'a write after the leader was killed');
    t.comment(`round ${round}: a write was acknowledged ${Date.now() - killedAt} ms after the etcd leader was killed`);
    restartMember(leader);
    await healthyCluster(etcd.members);
    stop();
    const { acknowledged, refused } = await writing;
    t.ok(acknowledged.length > 0, `round ${round}: keys were acknowledged (${acknowledged.length}; ${refused.length} refused with 503)`);
    t.ok(
      refused.every((message) => /etcd/.test(message)),
      'a refused change says etcd did not confirm it',
    );
    await checkNoneLost(t, live, { ...owner, key: ownerKey }, acknowledged);
  }

  // Every etcd member killed at once: reads go on with what each node has, changes are refused, then resume.
  const before = await createKey(c, ownerKey, 'before the outage');
  await Promise.all(etcd.members.map((member) => killMember(member)));
  for (const node of live) t.equal(await readWith(node, before.body.key!), 200, 'reads go on while etcd is down');
  const refused = await createKey(a, ownerKey, 'during the outage');
  t.equal(refused.status, 503, 'a change is refused while etcd is down');
  t.match(refused.body.message, /etcd/, 'and the refusal names etcd');
  for (const member of etcd.members) restartMember(member);
  await healthyCluster(etcd.members);
  let after!: Awaited<ReturnType<typeof createKey>>;
  await waitFor(async () => (after = await createKey(b2, ownerKey, 'after the outage')).status === 201, 30_000, 'a write once etcd is back');
  await checkNoneLost(t, live, { ...owner, key: ownerKey }, [
    { id: before.body.id!, key: before.body.key! },
    { id: after.body.id!, key: after.body.key! },
  ]);

  // A commit whose bytes are damaged in etcd is reported, not skipped: changes are refused from then on, reads go on.
  const damaged = { key: Buffer.from('trawl/state/records/damaged').toString('base64'), value: Buffer.from('not a record').toString('base64') };
  const put = await fetch(`${etcd.endpoints[0]}/v3/kv/put`, { method: 'POST', body: JSON.stringify(damaged) });
  t.equal(put.status, 200);
  await waitFor(async () => (await createKey(c, ownerKey, 'after the damage')).status === 503, 10_000, 'changes refused after the damage');
  const reply = await createKey(c, ownerKey, 'after the damage');
  t.match(reply.body.message, /damaged/, 'the refusal says the log is damaged');
  t.equal(await readWith(c, ownerKey), 200, 'reads go on');
});

t.test('a node whose own users are not the cluster’s does not join', async (t) => {
  const etcd = await startEtcd(t, 1);
  const { nodes } = await credentialCluster(t, etcd);
  t.equal(nodes.length, 3);
  const root = tempDir(t, 'trawl-foreign-');
  const configFile = path.join(root, 'trawl.json');
  const keyFileName = path.join(root, 'cluster.key');
  fs.writeFileSync(keyFileName, 'k'.repeat(40), { mode: 0o600 });
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      dataDir: path.join(root, 'data'),
      repos: [],
      listen: { host: '127.0.0.1', port: 0 },
      cluster: { etcd: etcd.endpoints, keyFile: keyFileName, node: 'd', partitions: 4 },
    }),
  );
  await seedUsers(configFile, [{ email: 'someone@example.com', role: 'owner' }]);
  await t.rejects(runDaemon(t, configFile, { env: LICENSE_ENV }), /not this cluster's[\s\S]*move the state directory away/, 'refused at start, saying why');
});
