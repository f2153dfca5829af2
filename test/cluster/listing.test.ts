import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { partitionOf } from '../../src/cluster/placement.js';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';
import { ownerOf } from './owners.js';

const PARTITIONS = 4;

t.test('a repository another node serves is listed ready where it is held but not indexed', async (t) => {
  const etcd = await startEtcd(t, 1);
  // A repository whose partition b owns among a and b; b cannot index it (its path is not there for b).
  let name = '';
  for (let i = 0; !name; i++)
    if (ownerOf(partitionOf(`example.com/acme/moved${i}`, PARTITIONS), ['a', 'b'], PARTITIONS) === 'b') name = `example.com/acme/moved${i}`;
  const root = path.join(tempDir(t, 'trawl-cluster-listing-'), 'moved');
  makeRepository(root, { 'main.c': 'int lighthouse;\n' });
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  const node = (node: string, repoPath: string) =>
    startDaemon(t, {
      repos: [{ name, path: repoPath, public: true }],
      auth: { anonymousAccess: true },
      index: { ctagsCommand: '' },
      server: { workers: 1 },
      cluster: { etcd: etcd.endpoints, keyFile, partitions: PARTITIONS, replicas: 1, node },
    });
  const a = await node('a', root);
  const b = await node('b', path.join(root, 'not-here'));
  const state = async (daemon: Daemon) => ((await (await daemon.fetch('/api/repos')).json()) as { indexState: string }[])[0]!.indexState;
  // b holds the partition, failed to index it, and does not serve it: a goes on serving it.
  await waitFor(async () => /^trawl_cluster_partitions_held [1-9]/m.test(await (await b.fetch('/metrics')).text()), 30_000, 'b holding partitions');
  // a may be checking the repository again after b joined, listed `indexing` meanwhile as a single node lists it.
  await waitFor(async () => (await state(a)) === 'ready', 30_000, 'a to list it ready once its index pass is over');
  t.equal(await state(a), 'ready', 'a lists it ready: it serves it');
  t.equal(await state(b), 'ready', 'b lists it ready too: a serves it');
  const found = (await (await b.post('/api/search', { query: 'lighthouse', matches: 10 })).json()) as SearchResponse;
  t.equal(found.files.length, 1, "and a search on b finds it, in a's shards");
});
