import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { partitionOf } from '../../src/cluster/placement.js';
import { trawlAsync } from '../helpers/cli.js';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { githubHost } from '../connections/helpers.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';
import { ownerOf } from './owners.js';

const PARTITIONS = 8;
const REPOSITORIES = 6;

async function status(configFile: string) {
  const run = await trawlAsync(['cluster', 'status', '--json', '--config', configFile]);
  return { exit: run.status, status: run.stdout ? (JSON.parse(run.stdout) as { members: { node: string; serves: number }[] }) : null };
}

/** Every partition served once, by `members` live nodes. */
const settled = (daemon: Daemon, members: number) => async () => {
  const { exit, status: now } = await status(daemon.configFile);
  return exit === 0 && now!.members.length === members && now!.members.reduce((sum, member) => sum + member.serves, 0) === PARTITIONS;
};

t.test("each node fetches only its share of the connections' repositories, and every node searches them all", async (t) => {
  const etcd = await startEtcd(t);
  const root = tempDir(t, 'trawl-cluster-hosts-');
  const connections: Record<string, object> = {};
  for (let i = 0; i < REPOSITORIES; i++) {
    makeRepository(path.join(root, `work${i}`), { 'README.md': `harbor ${i}\n` });
    execFileSync('git', ['clone', '-q', '--bare', path.join(root, `work${i}`), path.join(root, `c${i}.git`)]);
    connections[`c${i}`] = { type: 'git', url: `file://${root}/c${i}.git`, public: true };
  }
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  // removeAfterHours 0: a node removes its mirror of a repository at its first sync after it stopped holding it.
  const base = { repos: [], connections, auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 }, sync: { removeAfterHours: 0 } };
  // Node c lists the connections in the other order: the ids it gives must still be the cluster's.
  const reversed = Object.fromEntries(Object.entries(connections).reverse());
  const node = (name: string) =>
    startDaemon(t, {
      ...base,
      connections: name === 'c' ? reversed : connections,
      cluster: { etcd: etcd.endpoints, keyFile, partitions: PARTITIONS, replicas: 1, node: name },
    });
  const [a, b] = await Promise.all([node('a'), node('b')]);
  await waitFor(settled(a!, 2), 60_000, 'two nodes serving every partition');
  // c joins a cluster whose other members are live: from its first sync on it holds only its own partitions.
  const c = await node('c');
  await waitFor(settled(c, 3), 60_000, 'three nodes serving every partition');

  const names = ((await (await c.fetch('/api/repos?perPage=100')).json()) as { repoName: string }[]).map((repo) => repo.repoName).sort();
  t.equal(names.length, REPOSITORIES, 'c lists every repository, fetched here or not');
  const ownedBy = (node: string) => names.filter((name) => ownerOf(partitionOf(name, PARTITIONS), ['a', 'b', 'c'], PARTITIONS) === node);
  /** The repositories with a mirror on `daemon`'s disk. */
  const mirroredOn = (daemon: Daemon) => {
    const mirrors = path.join(path.dirname(daemon.configFile), 'data', 'mirrors');
    return names.filter((name) => {
      const connection = path.join(mirrors, `c${/(\d+)$/.exec(name)![1]}`);
      return fs.existsSync(connection) && fs.readdirSync(connection).length > 0;
    });
  };
  t.ok(ownedBy('c').length > 0 && ownedBy('c').length < REPOSITORIES, `c owns some repositories, not all (${ownedBy('c').join(', ')})`);
  t.same(mirroredOn(c), ownedBy('c'), 'c fetched exactly the repositories of its partitions');
  // a and b held c's partitions until c served them; their mirrors of those go at their next sync.
  for (const [node, daemon] of [
    ['a', a!],
    ['b', b!],
  ] as const) {
    await waitFor(async () => mirroredOn(daemon).join() === ownedBy(node).join(), 60_000, `${node} keeps only the mirrors of what it holds`);
    t.same(mirroredOn(daemon), ownedBy(node), `${node} removed its mirrors of the repositories it no longer holds`);
  }

  // Grants and scoped tokens, shared by the nodes, name repositories by id: every node gives each the same one.
  const ids = async (daemon: Daemon) =>
    ((await (await daemon.fetch('/api/repos?perPage=100')).json()) as { repoName: string; repoId: number }[])
      .map((repo) => `${repo.repoName} ${repo.repoId}`)
      .sort();
  const idsOfA = await ids(a!);
  t.equal(new Set(idsOfA.map((line) => line.split(' ')[1])).size, REPOSITORIES, 'one id each');
  t.same(await ids(b!), idsOfA, 'b gives the ids a gives');
  t.same(await ids(c), idsOfA, 'and so does c, whose connections come in the other order');

  for (const daemon of [a!, b!, c]) {
    const answer = (await (await daemon.post('/api/search', { query: 'harbor', matches: 100 })).json()) as SearchResponse;
    t.equal(answer.files.length, REPOSITORIES, 'a search on any node finds every repository');
  }
});

t.test('a repository its host renames keeps its id on every node, and so its grants', async (t) => {
  const token = 'ghs_fixture_token_0123456789';
  const etcd = await startEtcd(t, 1);
  const { fixture, host } = await githubHost(t, token, [
    { id: 701, owner: 'acme', name: 'api', files: { 'api.go': 'package api // trawl_api_marker\n' } },
    { id: 702, owner: 'acme', name: 'web', files: { 'web.ts': 'export const trawl_web_marker = 1;\n' } },
  ]);
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  const env = { GHE_TOKEN: token };
  const config = (node: string) => ({
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { workers: 1 },
    connections: { ghe: { type: 'github', url: host.origin, orgs: ['acme'], token: { env: 'GHE_TOKEN' }, publicRepos: ['*/acme/*'] } },
    cluster: { etcd: etcd.endpoints, keyFile, partitions: 4, replicas: 2, node },
  });
  const listing = async (daemon: Daemon) =>
    ((await (await daemon.fetch('/api/repos')).json()) as { repoName: string; repoId: number; indexState: string }[]).map(
      (repo) => `${repo.repoName.replace(/^[^/]+\//, '')} ${repo.repoId} ${repo.indexState}`,
    );
  const nodes = [await startDaemon(t, config('a'), { env }), await startDaemon(t, config('b'), { env })];
  for (const daemon of nodes)
    await waitFor(
      async () => (await listing(daemon)).every((line) => line.endsWith(' ready')) && (await listing(daemon)).length === 2,
      60_000,
      'both repositories ready',
    );
  // Names and ids: a node may show a repository pending again meanwhile (its holders change as the other joins).
  const before = await listing(nodes[0]!);
  const withoutState = (lines: string[]) => lines.map((line) => line.split(' ').slice(0, 2).join(' '));
  t.same(withoutState(await listing(nodes[1]!)), withoutState(before), 'one id each, the same on both nodes');
  const apiId = Number(before.find((line) => line.startsWith('acme/api '))!.split(' ')[1]);

  // The host renames acme/api (same id); each node lists it again on SIGHUP.
  fixture.state.repos[0]!.name = 'api-v2';
  fs.renameSync(path.join(host.root, 'acme', 'api.git'), path.join(host.root, 'acme', 'api-v2.git'));
  for (const daemon of nodes) daemon.process.kill('SIGHUP');
  for (const daemon of nodes) {
    await waitFor(async () => (await listing(daemon)).some((line) => line.startsWith('acme/api-v2 ')), 60_000, 'the rename listed');
    const after = await listing(daemon);
    t.same(
      withoutState(after),
      [`acme/api-v2 ${apiId}`, withoutState(before).find((line) => line.startsWith('acme/web '))],
      'the renamed repository keeps its id; the other its own',
    );
  }
});
