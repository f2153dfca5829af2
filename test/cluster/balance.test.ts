import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { partitionOf } from '../../src/cluster/placement.js';
import { trawlAsync } from '../helpers/cli.js';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';

const PARTITIONS = 4;

interface Status {
  members: { node: string; owns: number; serves: number; bytes: number }[];
}

async function status(daemon: Daemon): Promise<Status | null> {
  const run = await trawlAsync(['cluster', 'status', '--json', '--config', daemon.configFile]);
  return run.status === 0 ? (JSON.parse(run.stdout) as Status) : null;
}

t.test('placement balances the bytes the nodes serve, not the partition counts', async (t) => {
  const etcd = await startEtcd(t, 1);
  const root = tempDir(t, 'trawl-cluster-balance-');
  // One large repository, and a small one in each other partition: the large one's partition outweighs the rest.
  const big = 'example.com/acme/big';
  const repos = [{ name: big, files: 400 }];
  const taken = new Set([partitionOf(big, PARTITIONS)]);
  for (let i = 0; taken.size < PARTITIONS; i++) {
    const name = `example.com/acme/small${i}`;
    if (taken.has(partitionOf(name, PARTITIONS))) continue;
    taken.add(partitionOf(name, PARTITIONS));
    repos.push({ name, files: 1 });
  }
  const configured = repos.map(({ name, files }) => {
    const contents: Record<string, string> = {};
    for (let f = 0; f < files; f++) contents[`src/f${f}.txt`] = `lantern ${f}\n${Array.from({ length: 60 }, (_, k) => `word_${f}_${k}`).join(' ')}\n`;
    const dir = path.join(root, name.replace(/\W/g, '_'));
    makeRepository(dir, contents);
    return { name, path: dir, public: true };
  });
  const keyFile = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, 'k'.repeat(40), { mode: 0o600 });
  // The floor at one byte: these small repositories weigh their bytes, as large ones do under the default floor.
  const node = (name: string) =>
    startDaemon(t, {
      repos: configured,
      auth: { anonymousAccess: true },
      index: { ctagsCommand: '' },
      server: { workers: 1 },
      cluster: { etcd: etcd.endpoints, keyFile, partitions: PARTITIONS, replicas: 1, node: name, placementFloorBytes: 1 },
    });
  const [a, b] = await Promise.all([node('a'), node('b')]);

  // By counts, each node would hold two partitions; by bytes, the large one's holder holds it alone.
  let settled: Status | null = null;
  await waitFor(
    async () => {
      settled = await status(a!);
      const serves = settled?.members.map((member) => member.serves).sort();
      return settled?.members.every((member) => member.owns === member.serves) === true && serves?.join() === '1,3';
    },
    60_000,
    'one node serving the large partition alone, the other the three small ones',
  );
  const [alone, others] = [...settled!.members].sort((x, y) => x.serves - y.serves);
  t.ok(alone!.bytes > others!.bytes, `the node serving one partition serves the most bytes (${alone!.bytes} against ${others!.bytes})`);
  for (const daemon of [a!, b!]) {
    const reply = (await (await daemon.post('/api/search', { query: 'lantern', matches: 1000 })).json()) as SearchResponse;
    t.equal(new Set(reply.files.map((file) => file.repository)).size, repos.length, 'a search on either node finds every repository');
  }
});
