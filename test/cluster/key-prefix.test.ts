import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { openEtcd } from '../../src/cluster/etcd.js';
import { bearer, seedUsers, type SeededUser } from '../helpers/auth.js';
import { trawlAsync } from '../helpers/cli.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';

t.test('two clusters with their own key prefixes share one etcd and see nothing of each other', async (t) => {
  const etcd = await startEtcd(t, 1);
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  const team = (name: string) => {
    const root = path.join(tempDir(t, 'trawl-cluster-repo-'), name);
    makeRepository(root, { 'main.go': `package main // harbor_${name}\n` });
    return {
      repos: [{ name: `example.com/${name}/r`, path: root, public: true }],
      index: { ctagsCommand: '' },
      server: { workers: 1 },
      auth: { anonymousAccess: name === 'y' },
      // The same node name in both: only the prefix keeps them apart.
      cluster: { etcd: etcd.endpoints, keyFile, partitions: 4, replicas: 1, node: 'a', keyPrefix: `team-${name}/` },
    };
  };
  let owner: SeededUser | undefined;
  const x = await startDaemon(t, team('x'), {
    prepare: async (configFile) => void (owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']),
  });
  const y = await startDaemon(t, team('y'));

  const members = async (daemon: Daemon) => {
    const run = await trawlAsync(['cluster', 'status', '--json', '--config', daemon.configFile]);
    return (JSON.parse(run.stdout) as { members: { node: string; url: string }[] }).members.map((member) => member.url);
  };
  t.same(await members(x), [x.url], "x's status lists x's node a alone");
  t.same(await members(y), [y.url], "y's status lists y's node a alone");

  const found = async (daemon: Daemon, headers: Record<string, string> = {}) => {
    const reply = await daemon.fetch('/api/search', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ query: 'harbor', matches: 100 }),
    });
    return ((await reply.json()) as SearchResponse).files.map((file) => file.repository);
  };
  t.same(await found(x, bearer(owner!.key)), ['example.com/x/r'], 'a search on x finds x’s repository only');
  t.same(await found(y), ['example.com/y/r'], 'a search on y finds y’s repository only');
  t.equal((await x.fetch('/api/repos', { headers: bearer(owner!.key) })).status, 200, "x's owner's key works on x");
  t.equal((await y.fetch('/api/ee/users', { headers: bearer(owner!.key) })).status, 401, "but not on y: y's credential log is its own");

  const everything = await openEtcd({ etcd: etcd.endpoints, keyPrefix: '' });
  t.teardown(() => everything.close());
  const keys = await everything.getAll().keys();
  t.ok(keys.length > 0, 'the clusters keep keys in etcd');
  t.same(
    keys.filter((key) => !key.startsWith('team-x/') && !key.startsWith('team-y/')),
    [],
    'every key is under one of the prefixes',
  );
});
