import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { partitionOf } from '../../src/cluster/placement.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { healthyCluster, killMember, restartMember, startEtcd } from './etcd.js';

const PARTITIONS = 4;
const EVERY = { query: 'harbor', matches: 1000 };

function repository(t: Test, i: number) {
  const root = path.join(tempDir(t, 'trawl-cluster-repo-'), `r${i}`);
  makeRepository(root, { [`src/r${i}.go`]: `package r${i}\n\n// harbor ${i}\n` });
  return { name: `example.com/acme/r${i}`, path: root, public: true };
}

async function search(daemon: Daemon, secret: string): Promise<{ status: number; missing: number[]; response: SearchResponse }> {
  const reply = await daemon.fetch('/api/search', { method: 'POST', headers: bearer(secret), body: JSON.stringify(EVERY) });
  const missing = reply.headers.get('x-trawl-missing-partitions');
  return { status: reply.status, missing: missing ? missing.split(',').map(Number) : [], response: (await reply.json()) as SearchResponse };
}

const fileNames = (files: SearchResponse['files']) => files.map((file) => `${file.repositoryId} ${file.repository}/${file.fileName.text}`).sort();

async function createKey(daemon: Daemon, secret: string, name: string): Promise<{ status: number; body: { key?: string; message?: string } }> {
  const reply = await daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: bearer(secret), body: JSON.stringify({ name }) });
  return { status: reply.status, body: (await reply.json()) as { key?: string; message?: string } };
}

async function listed(daemon: Daemon, secret: string): Promise<string[]> {
  return ((await (await daemon.fetch('/api/repos', { headers: bearer(secret) })).json()) as { repoName: string }[]).map((repo) => repo.repoName).sort();
}

/** `file`'s config with `repos`. */
function withRepos(file: string, repos: unknown[]): void {
  fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), repos }));
}

t.test('a node that knew its cluster starts while etcd is down, serves what it holds, and joins once etcd answers', async (t) => {
  const etcd = await startEtcd(t, 1);
  const repos = Array.from({ length: 6 }, (_, i) => repository(t, i));
  const later = repository(t, 6);
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40) + '\n', { mode: 0o600 });
  const base = { repos, index: { ctagsCommand: '' }, server: { workers: 1 } };
  const cluster = { etcd: etcd.endpoints, keyFile, partitions: PARTITIONS, replicas: 1 };
  let owner!: SeededUser;
  const a = await startDaemon(
    t,
    { ...base, cluster: { ...cluster, node: 'a' } },
    {
      env: LICENSE_ENV,
      prepare: async (file) => void (owner = (await seedUsers(file, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']!),
    },
  );
  const b = await startDaemon(t, { ...base, cluster: { ...cluster, node: 'b' } }, { env: LICENSE_ENV });
  let whole!: SearchResponse;
  await waitFor(
    async () => {
      const { missing, response } = await search(b, owner.key);
      whole = response;
      return missing.length === 0 && response.files.length === repos.length;
    },
    30_000,
    'both nodes serving their partitions',
  );
  const made = await createKey(a, owner.key, 'made before the outage');
  t.equal(made.status, 201);
  await waitFor(async () => (await b.fetch('/api/repos', { headers: bearer(made.body.key!) })).status === 200, 5000, 'the key known on b');

  // b stops, etcd goes, and b starts again with a repository it never had an id for.
  await b.stop();
  await killMember(etcd.members[0]!);
  withRepos(b.configFile, [...repos, later]);
  const alone = await runDaemon(t, b.configFile, { env: LICENSE_ENV });
  await alone.waitForLog(/etcd cannot be reached/, 'the start without etcd logged');

  t.equal((await alone.fetch('/api/repos', { headers: bearer(made.body.key!) })).status, 200, 'a key it knew opens a read');
  const refused = await createKey(alone, owner.key, 'during the outage');
  t.equal(refused.status, 503, 'a credential change is refused');
  t.match(refused.body.message, /etcd/, 'naming etcd');
  t.notOk((await listed(alone, owner.key)).includes(later.name), 'a repository without the cluster’s id is not listed');

  const offline = await search(alone, owner.key);
  t.equal(offline.status, 200);
  t.ok(offline.missing.length > 0 && offline.missing.length < PARTITIONS, `the partitions of the other node are missing (${offline.missing.join(',')})`);
  t.equal(offline.response.isSearchExhaustive, false, 'and the answer says it is partial');
  const held = (name: string) => !offline.missing.includes(partitionOf(name, PARTITIONS));
  t.same(
    fileNames(offline.response.files),
    fileNames(whole.files.filter((file) => held(file.repository))),
    'it answers every file of the partitions it held, as before',
  );

  // A node that never knew the cluster does not start without etcd.
  const stranger = path.join(tempDir(t, 'trawl-stranger-'), 'trawl.json');
  fs.writeFileSync(
    stranger,
    JSON.stringify({ dataDir: path.join(path.dirname(stranger), 'data'), repos, listen: { host: '127.0.0.1', port: 0 }, cluster: { ...cluster, node: 'c' } }),
  );
  await t.rejects(runDaemon(t, stranger), /cannot join through etcd/, 'a node that never joined refuses to start, saying why');

  // etcd comes back: b follows the log, joins, and the new repository gets its id on every node.
  restartMember(etcd.members[0]!);
  await healthyCluster(etcd.members);
  await waitFor(async () => (await createKey(alone, owner.key, 'after the outage')).status === 201, 30_000, 'a change accepted on b once etcd answers');
  withRepos(a.configFile, [...repos, later]);
  a.process.kill('SIGHUP');
  await waitFor(
    async () => {
      const { missing, response } = await search(alone, owner.key);
      return missing.length === 0 && response.isSearchExhaustive && response.files.length === repos.length + 1;
    },
    30_000,
    'b answering every repository, the new one too',
  );
  t.ok((await listed(alone, owner.key)).includes(later.name), 'the new repository is listed once it has its id');
  const ids = new Map((await search(a, owner.key)).response.files.map((file) => [file.repository, file.repositoryId]));
  const files = (await search(alone, owner.key)).response.files;
  t.same(
    files.map((file) => [file.repository, file.repositoryId]),
    files.map((file) => [file.repository, ids.get(file.repository)]),
    'both nodes give every repository one id',
  );
});
