import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { SearchResponse } from '../../src/api/types.js';
import { validateConfig } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';

const PARTITIONS = 4;
const KEY = 'k'.repeat(40);

interface Entry {
  shards: string[];
  sha256?: string[];
  documents: number;
}

/** One etcd member, three git repositories, and the config of a node `node` of a cluster holding each partition twice. */
async function setUp(t: Test) {
  const etcd = await startEtcd(t, 1);
  const repos = Array.from({ length: 3 }, (_, i) => {
    const root = path.join(tempDir(t, 'trawl-copy-repo-'), `r${i}`);
    const files: Record<string, string> = {};
    for (let f = 0; f < 5; f++) files[`src/file${f}.go`] = `package r${i}\n\n// copied ${i}.${f}\nfunc Handler${f}() int { return ${i * 10 + f} }\n`;
    makeRepository(root, files);
    return { name: `example.com/acme/r${i}`, path: root, public: true };
  });
  const keyFile = path.join(tempDir(t, 'trawl-copy-key-'), 'cluster.key');
  fs.writeFileSync(keyFile, KEY + '\n', { mode: 0o600 });
  const config = (node: string) => ({
    repos,
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { workers: 1 },
    cluster: { etcd: etcd.endpoints, keyFile, partitions: PARTITIONS, replicas: 2, node },
  });
  return { repos, config };
}

const dataDir = (daemon: Daemon) => path.join(path.dirname(daemon.configFile), 'data');
const manifest = (daemon: Daemon) =>
  (JSON.parse(fs.readFileSync(path.join(dataDir(daemon), 'manifest.json'), 'utf8')) as { repositories: Record<string, Entry> }).repositories;
const shardFile = (daemon: Daemon, file: string) => path.join(dataDir(daemon), 'shards', file);
const sha256Of = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

async function servesAll(daemon: Daemon): Promise<void> {
  await waitFor(
    async () => new RegExp(`^trawl_cluster_partitions_serving ${PARTITIONS}$`, 'm').test(await (await daemon.fetch('/metrics')).text()),
    60_000,
    `${daemon.url} serving every partition`,
  );
}

/** The files and match counts of a search: the same on a node that copied its shards as on the one that built them. */
async function found(daemon: Daemon, query: string) {
  const response = (await (await daemon.post('/api/search', { query, matches: 100 })).json()) as SearchResponse;
  return { files: response.files.map((file) => `${file.repository}/${file.fileName.text}`).sort(), matches: response.stats.actualMatchCount };
}

const peerPost = (daemon: Daemon, route: string, body: unknown, key = KEY) =>
  daemon.fetch(route, { method: 'POST', headers: { 'content-type': 'application/json', 'x-trawl-cluster-key': key }, body: JSON.stringify(body) });

t.test("a node that joins copies its replica's shards, each checked against the sha256 recorded when it was built", async (t) => {
  const { repos, config } = await setUp(t);
  const a = await startDaemon(t, config('a'));
  await servesAll(a);
  const built = manifest(a);
  for (const repo of repos) {
    const entry = built[repo.name]!;
    t.equal(entry.sha256?.length, entry.shards.length, `${repo.name}: a sha256 per shard, recorded as it was built`);
    t.same(
      entry.shards.map((file) => sha256Of(shardFile(a, file))),
      entry.sha256,
      `${repo.name}: the sums are the files'`,
    );
  }

  // What a peer is offered, and what it is refused.
  const offer = (await (await peerPost(a, '/api/cluster/shards', { repository: repos[0]!.name })).json()) as {
    shards: { file: string; bytes: number; sha256: string }[];
  };
  t.same(
    offer.shards.map((shard) => shard.sha256),
    built[repos[0]!.name]!.sha256,
    'the offer carries the recorded sums',
  );
  const bytes = Buffer.from(await (await peerPost(a, '/api/cluster/shard', { file: offer.shards[0]!.file })).arrayBuffer());
  t.equal(bytes.length, offer.shards[0]!.bytes, 'a shard comes whole');
  t.equal(createHash('sha256').update(bytes).digest('hex'), offer.shards[0]!.sha256, 'and as offered');
  t.equal((await peerPost(a, '/api/cluster/shards', { repository: repos[0]!.name }, 'x'.repeat(40))).status, 401, 'a wrong key is refused');
  t.equal((await a.post('/api/cluster/shard', { file: offer.shards[0]!.file })).status, 401, 'no key is refused');
  for (const file of ['../manifest.json', 'shards/../../state/state.log', '']) {
    const reply = await peerPost(a, '/api/cluster/shard', { file });
    t.equal(reply.status, 400, `${JSON.stringify(file)}: not a shard's name`);
    t.match(await reply.json(), { statusCode: 400, errorCode: 'INVALID_REQUEST_BODY', message: /file/ });
  }
  t.equal((await peerPost(a, '/api/cluster/shard', { file: 'other.g1.0.trawl' })).status, 404, 'a file the manifest does not name is not sent');
  t.equal((await peerPost(a, '/api/cluster/shards', { repository: 'example.com/acme/none' })).status, 404, 'a repository not indexed here');

  const b = await startDaemon(t, config('b'));
  await servesAll(b);
  const copied = manifest(b);
  for (const repo of repos) {
    t.same(copied[repo.name]!.sha256, built[repo.name]!.sha256, `${repo.name}: copied, not built (a build differs in its creation time)`);
    t.same(
      copied[repo.name]!.shards.map((file) => sha256Of(shardFile(b, file))),
      built[repo.name]!.sha256,
      `${repo.name}: the files are the sums`,
    );
  }
  await b.waitForLog(/"copiedFrom":"http:\/\/127\.0\.0\.1:\d+".*"msg":"repository indexed"/, 'the copy logged');
  // b serves every partition itself, so it answers from the copied shards alone.
  t.same(await found(b, 'copied'), await found(a, 'copied'), 'the copied shards answer as the built ones');
  t.equal((await found(b, 'copied')).files.length, 15, 'every file found');
});

t.test('a shard damaged on the disk of the node offering it is refused, and the repository built instead', async (t) => {
  const { repos, config } = await setUp(t);
  const a = await startDaemon(t, config('a'));
  await servesAll(a);
  const built = manifest(a);
  const damaged = repos[1]!.name;
  const file = shardFile(a, built[damaged]!.shards[0]!);
  const bytes = fs.readFileSync(file);
  const middle = bytes.length >> 1;
  bytes[middle] = bytes[middle]! ^ 0x20; // one flipped bit, in place: the length is the same
  fs.writeFileSync(file, bytes);

  const b = await startDaemon(t, config('b'));
  await servesAll(b);
  const copied = manifest(b);
  t.notSame(copied[damaged]!.sha256, built[damaged]!.sha256, 'the damaged repository was built, not copied');
  t.same(
    copied[damaged]!.shards.map((name) => sha256Of(shardFile(b, name))),
    copied[damaged]!.sha256,
    'with sums of its own',
  );
  t.equal(copied[damaged]!.documents, built[damaged]!.documents, 'of the same files');
  for (const repo of repos.filter((repo) => repo.name !== damaged)) t.same(copied[repo.name]!.sha256, built[repo.name]!.sha256, `${repo.name}: copied`);
  await b.waitForLog(/"level":40.*does not match the sha256 recorded when it was built.*"msg":"a replica's shards not copied"/, 'the damage reported');
  t.same((await found(b, 'copied')).files.length, 15, 'every file found on the node that refused the damaged shard');
});

t.test('shards indexed before a node joined a cluster get their sums once they pass the full check, and are copied', async (t) => {
  const { repos, config } = await setUp(t);
  // a's index is built as a single node builds it: no cluster, no sums.
  const withoutSums = async (configFile: string) => {
    const { cluster: _, ...single } = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    await runIndex(validateConfig(single, configFile));
  };
  let before: Record<string, Entry> = {};
  const damaged = repos[2]!.name;
  const a = await startDaemon(t, config('a'), {
    prepare: async (configFile) => {
      await withoutSums(configFile);
      const data = path.join(path.dirname(configFile), 'data');
      before = (JSON.parse(fs.readFileSync(path.join(data, 'manifest.json'), 'utf8')) as { repositories: Record<string, Entry> }).repositories;
      // One bit flipped in the last repository's shard: its sections' checksums no longer hold.
      const file = path.join(data, 'shards', before[damaged]!.shards[0]!);
      const bytes = fs.readFileSync(file);
      bytes[bytes.length >> 1]! ^= 0x20;
      fs.writeFileSync(file, bytes);
    },
  });
  await servesAll(a);
  const after = manifest(a);
  for (const repo of repos) {
    t.equal(before[repo.name]!.sha256, undefined, `${repo.name}: indexed without sums`);
    if (repo.name === damaged) t.notSame(after[repo.name]!.shards, before[repo.name]!.shards, `${repo.name}: failed the check, built again`);
    else t.same(after[repo.name]!.shards, before[repo.name]!.shards, `${repo.name}: its shards kept, not built again`);
    t.same(
      after[repo.name]!.sha256,
      after[repo.name]!.shards.map((file) => sha256Of(shardFile(a, file))),
      `${repo.name}: sums recorded, the files'`,
    );
  }

  const b = await startDaemon(t, config('b'));
  await servesAll(b);
  for (const repo of repos) t.same(manifest(b)[repo.name]!.sha256, after[repo.name]!.sha256, `${repo.name}: copied from a`);
  t.same(await found(b, 'copied'), await found(a, 'copied'), 'the copied shards answer as a’s');
});
