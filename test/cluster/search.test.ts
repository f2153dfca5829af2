import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FileResult, SearchRequest, SearchResponse } from '../../src/api/types.js';
import { partitionOf } from '../../src/cluster/placement.js';
import { trawlAsync } from '../helpers/cli.js';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startEtcd } from './etcd.js';
import { ownerOf } from './owners.js';

const PARTITIONS = 8;

/** `count` public repositories in each of which `router` is in every file, as often as the repository's number says. */
function repositories(t: Test, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const root = path.join(tempDir(t, 'trawl-cluster-repo-'), `r${i}`);
    const files: Record<string, string> = {};
    for (let f = 0; f < 6; f++) files[`src/file${f}.js`] = `// router ${i}.${f}\n${'router.use(handler);\n'.repeat(1 + ((i + f) % 4))}`;
    makeRepository(root, files);
    return { name: `example.com/acme/r${i}`, path: root, public: true };
  });
}

function keyFile(t: Test): string {
  const file = path.join(tempDir(t, 'trawl-cluster-key-'), 'cluster.key');
  fs.writeFileSync(file, 'k'.repeat(40) + '\n', { mode: 0o600 });
  return file;
}

/** What two answers must agree on: each file (repository, path, its match ranges) in order, the count, whether complete. */
function essence(response: SearchResponse) {
  const ranges = (file: FileResult) => [file.fileName.matchRanges.length, ...file.chunks.map((chunk) => chunk.matchRanges.length)];
  return {
    files: response.files.map((file) => `${file.repositoryId} ${file.repository}/${file.fileName.text} ${ranges(file).join(',')} ${file.webUrl}`),
    actualMatchCount: response.stats.actualMatchCount,
    isSearchExhaustive: response.isSearchExhaustive,
  };
}

async function search(daemon: Daemon, body: object): Promise<{ status: number; missing: string | null; response: SearchResponse }> {
  const reply = await daemon.post('/api/search', body);
  return { status: reply.status, missing: reply.headers.get('x-trawl-missing-partitions'), response: (await reply.json()) as SearchResponse };
}

/** The requests `nodes` have sent other nodes (their metrics). */
async function peerRequests(nodes: readonly Daemon[]): Promise<number> {
  let sum = 0;
  for (const node of nodes) {
    for (const [, count] of (await (await node.fetch('/metrics')).text()).matchAll(/^trawl_cluster_peer_requests_total\{[^}]*\} (\d+)$/gm))
      sum += Number(count);
  }
  return sum;
}

/** Every match of `router`. */
const EVERY = { query: 'router', matches: Number.MAX_SAFE_INTEGER, exhaustive: true };

/** What two exhaustive answers must agree on: their files (in any order: parts come as found), the count, whether complete. */
function everyMatch(response: Pick<SearchResponse, 'files' | 'stats' | 'isSearchExhaustive'>) {
  const { files, ...rest } = essence(response as SearchResponse);
  return { ...rest, files: files.sort() };
}

/** The chunks' files and the last event of a stream. */
async function streamedEvents(daemon: Daemon, body: object) {
  const reply = await daemon.post('/api/stream_search', body);
  const events = (await reply.text()).split('\n\n').filter((event) => event.startsWith('data: {'));
  const parsed = events.map((event) => JSON.parse(event.slice(6)) as StreamEvent);
  return { files: parsed.flatMap((event) => event.files ?? []), final: parsed.at(-1)! };
}

interface StreamEvent {
  type: string;
  files?: FileResult[];
  accumulatedStats?: SearchResponse['stats'];
  isSearchExhaustive?: boolean;
}

/** The cluster's status as `trawl cluster status --json` prints it. */
async function status(configFile: string) {
  const run = await trawlAsync(['cluster', 'status', '--json', '--config', configFile]);
  return { exit: run.status, status: run.stdout ? (JSON.parse(run.stdout) as { members: { node: string; serves: number }[]; unserved: string[] }) : null };
}

t.test('three nodes answer every search as one node over the same repositories, and go on when one is killed', async (t) => {
  const etcd = await startEtcd(t);
  // One private repository: anonymous callers see the rest, and peers are told which (the others: every one).
  const repos = repositories(t, 12).map((repo, i) => (i === 11 ? { ...repo, public: false } : repo));
  // One public URL for all, as behind one address: the links in the answers name it, whichever node built them.
  const base = { repos, publicUrl: 'http://trawl.test', auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } };
  const cluster = { etcd: etcd.endpoints, keyFile: keyFile(t), partitions: PARTITIONS, replicas: 2 };
  const single = await startDaemon(t, base);
  const nodes = await Promise.all(['a', 'b', 'c'].map((node) => startDaemon(t, { ...base, cluster: { ...cluster, node } })));
  // Every partition served by both its replicas: the nodes have indexed what they own and handed the rest on.
  await waitFor(
    async () => {
      const { exit, status: now } = await status(nodes[0]!.configFile);
      return exit === 0 && now !== null && now.members.length === 3 && now.members.reduce((sum, member) => sum + member.serves, 0) === PARTITIONS * 2;
    },
    60_000,
    'every partition served by two nodes',
  );
  const { status: settled } = await status(nodes[0]!.configFile);
  t.ok(
    settled!.members.every((member) => member.serves > 0 && member.serves < PARTITIONS),
    'each node serves some partitions, none all of them',
  );

  // Every node lists every repository, with the ids one node gives them, ready wherever it is held.
  const listing = async (daemon: Daemon) =>
    ((await (await daemon.fetch('/api/repos?perPage=100')).json()) as { repoName: string; repoId: number; indexState: string }[]).map(
      (repo) => `${repo.repoName} ${repo.repoId} ${repo.indexState}`,
    );
  const expectedListing = await listing(single);
  for (const daemon of nodes) t.same(await listing(daemon), expectedListing, 'the repository list');

  // Answers too big to decode cheaply, merged from the nodes' files (cluster/peer-files.ts), cut in the middle of a file.
  const cutFromFiles: SearchRequest[] = [
    { query: 'router', matches: 101, contextLines: 5 },
    { query: 'handler', matches: 41, whole: true },
  ];
  const requests: SearchRequest[] = [
    { query: 'router', matches: 3, contextLines: 1 },
    { query: 'router', matches: 17, contextLines: 0 },
    { query: 'router', matches: 10_000 },
    { query: 'router repo:r1', matches: 50 },
    { query: 'type:file router', matches: 5 },
    { query: 'handler', matches: 1000, ranked: true },
    ...cutFromFiles,
  ];
  for (const request of requests) {
    const expected = await search(single, request);
    if (cutFromFiles.includes(request)) t.equal(expected.response.isSearchExhaustive, false, `${JSON.stringify(request)} is cut at \`matches\``);
    for (const [i, node] of nodes.entries()) {
      const got = await search(node, request);
      t.equal(got.status, 200);
      t.equal(got.missing, null, 'no partition is missing');
      t.same(essence(got.response), essence(expected.response), `${JSON.stringify(request)} from node ${'abc'[i]}`);
      if (request.ranked)
        t.ok(
          got.response.files.every((file) => typeof file.score === 'number'),
          'a ranked search keeps its scores',
        );
      else
        t.ok(
          got.response.files.every((file) => file.score === undefined),
          'scores only when asked for',
        );
    }
  }

  // A search of one repository asks only for its partition: of the three nodes, the one not serving it asks one peer.
  const before = await peerRequests(nodes);
  const scoped = { query: 'repo:^example\\.com/acme/r1$ router', matches: 50 };
  // The node not serving it passes the peer's answer on as it came: every member of every file as one node's.
  for (const request of [scoped, { ...scoped, ranked: true }]) {
    const expected = (await search(single, request)).response;
    for (const node of nodes) {
      const got = (await search(node, request)).response;
      t.same(got.files, expected.files, `${JSON.stringify(request)}: the files, chunks and scores of one node`);
      t.same(essence(got), essence(expected));
    }
  }
  t.equal((await peerRequests(nodes)) - before, 2, 'one request between the nodes a search');

  // The symbol routes search every partition too.
  const references = { symbolName: 'handler' };
  const expectedReferences = await (await single.post('/api/find_references', references)).json();
  t.same(
    await (await nodes[2]!.post('/api/find_references', references)).json(),
    expectedReferences,
    'find_references across the cluster, ids and links alike',
  );

  // A Sourcebot client's stream across the cluster: the same files, as one part.
  const streamed = await streamedEvents(nodes[1]!, { query: 'router', matches: 17 });
  t.same(
    streamed.files.map((file) => `${file.repository}/${file.fileName.text}`),
    (await search(single, { query: 'router', matches: 17 })).response.files.map((file) => `${file.repository}/${file.fileName.text}`),
  );
  t.equal(streamed.final.type, 'final');

  // Every match: the files one node finds, in parts from the nodes serving them (in no set order), as JSON and streamed.
  const expectedEvery = everyMatch((await search(single, EVERY)).response);
  for (const [i, node] of nodes.entries()) t.same(everyMatch((await search(node, EVERY)).response), expectedEvery, `exhaustive from node ${'abc'[i]}`);
  // With whole files a part holds 16 ranges: the peers' answers come in many parts.
  const wholeFiles = { ...EVERY, whole: true };
  t.same(everyMatch((await search(nodes[0]!, wholeFiles)).response), everyMatch((await search(single, wholeFiles)).response), 'exhaustive in many parts');
  const everyStreamed = await streamedEvents(nodes[2]!, EVERY);
  t.same(
    everyMatch({ files: everyStreamed.files, stats: everyStreamed.final.accumulatedStats!, isSearchExhaustive: everyStreamed.final.isSearchExhaustive! }),
    expectedEvery,
    'an exhaustive stream',
  );

  // Node c pauses (SIGSTOP): what a asks of it is asked of c's partitions' other replica after a moment.
  nodes[2]!.process.kill('SIGSTOP');
  try {
    for (const request of requests.slice(0, 2)) {
      t.same(
        essence((await search(nodes[0]!, request)).response),
        essence((await search(single, request)).response),
        `${JSON.stringify(request)} with c paused`,
      );
    }
    t.same(everyMatch((await search(nodes[0]!, EVERY)).response), expectedEvery, 'exhaustive with c paused');
    const metrics = await (await nodes[0]!.fetch('/metrics')).text();
    t.match(metrics, /trawl_cluster_peer_requests_total\{node="c",outcome="hedged"\} [1-9]/, 'the requests to the paused node were hedged');
  } finally {
    nodes[2]!.process.kill('SIGCONT');
  }
  await waitFor(
    async () => {
      const { status: now } = await status(nodes[0]!.configFile);
      return now !== null && now.members.length === 3 && now.members.reduce((sum, member) => sum + member.serves, 0) === PARTITIONS * 2;
    },
    60_000,
    'node c back, every partition served twice again',
  );

  // Node a dies: its partitions each have another replica, asked at once, before its lease runs out.
  nodes[0]!.process.kill('SIGKILL');
  await nodes[0]!.exited;
  for (const request of requests) {
    const expected = await search(single, request);
    const got = await search(nodes[1]!, request);
    t.same(essence(got.response), essence(expected.response), `${JSON.stringify(request)} with node a dead`);
  }
  t.same(everyMatch((await search(nodes[1]!, EVERY)).response), expectedEvery, 'exhaustive with node a dead');
  await waitFor(async () => (await status(nodes[1]!.configFile)).status?.members.length === 2, 10_000, 'node a out of the members');
});

t.test('nodes that serve every partition (replicas of all of it) answer alone, asking no other', async (t) => {
  const etcd = await startEtcd(t);
  const repos = repositories(t, 6);
  const base = { repos, publicUrl: 'http://trawl.test', auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } };
  const cluster = { etcd: etcd.endpoints, keyFile: keyFile(t), partitions: PARTITIONS, replicas: 2 };
  const single = await startDaemon(t, base);
  const nodes = await Promise.all(['a', 'b'].map((node) => startDaemon(t, { ...base, cluster: { ...cluster, node } })));
  await waitFor(
    async () => {
      const { exit, status: now } = await status(nodes[0]!.configFile);
      return exit === 0 && now !== null && now.members.length === 2 && now.members.every((member) => member.serves === PARTITIONS);
    },
    60_000,
    'both nodes serve every partition',
  );
  for (const request of [
    { query: 'router', matches: 17, contextLines: 1 },
    { query: 'handler', matches: 10_000 },
  ]) {
    const expected = essence((await search(single, request)).response);
    for (const node of nodes) t.same(essence((await search(node, request)).response), expected, `${JSON.stringify(request)}: one node's answer`);
  }
  t.equal(await peerRequests(nodes), 0, 'no node asked another');
});

t.test('a partition no live node serves: a partial answer that says so, or 503 with cluster.strict', async (t) => {
  const etcd = await startEtcd(t);
  const repos = repositories(t, 6);
  // One replica each. The partition of r0 belongs to b while b lives; a and c cannot index r0 (its path is not there
  // for them), so once b is gone no node serves that partition.
  const names = ['a', 'b', 'c'];
  const r0 = partitionOf(repos[0]!.name, PARTITIONS);
  const owner = ownerOf(r0, names, PARTITIONS);
  const [first, second] = names.filter((name) => name !== owner);
  const cluster = { etcd: etcd.endpoints, keyFile: keyFile(t), partitions: PARTITIONS, replicas: 1 };
  const base = { auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } };
  const elsewhere = repos.map((repo, i) => (i === 0 ? { ...repo, path: path.join(repo.path, 'not-here') } : repo));
  const holder = await startDaemon(t, { ...base, repos, cluster: { ...cluster, node: owner } });
  const lenient = await startDaemon(t, { ...base, repos: elsewhere, cluster: { ...cluster, node: first } });
  const strict = await startDaemon(t, { ...base, repos: elsewhere, cluster: { ...cluster, node: second, strict: true } });
  const request = { query: 'router', matches: 10_000 };
  await waitFor(async () => (await search(lenient, request)).response.isSearchExhaustive, 60_000, 'every partition served');
  t.ok(
    (await search(lenient, request)).response.files.some((file) => file.repository === repos[0]!.name),
    'r0 is found while its holder lives',
  );

  // The peer endpoint is the nodes' alone.
  t.equal((await holder.post('/api/cluster/search', { request, partitions: [r0], repositories: [repos[0]!.name] })).status, 401, 'no cluster key: 401');
  const wrongKey = await holder.fetch('/api/cluster/search', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-trawl-cluster-key': 'x'.repeat(40) },
    body: JSON.stringify({ request, partitions: [r0], repositories: [repos[0]!.name] }),
  });
  t.equal(wrongKey.status, 401, 'a wrong cluster key: 401');
  t.equal(((await wrongKey.json()) as { errorCode: string }).errorCode, 'NOT_AUTHENTICATED');

  // Reads of r0 from a node without a copy are answered by its holder, as they are there.
  const source = `/api/source?repo=${encodeURIComponent(repos[0]!.name)}&path=src/file1.js`;
  const here = await holder.fetch(source);
  const forwarded = await lenient.fetch(source);
  t.equal(forwarded.status, 200, 'a read forwarded to the node serving the repository');
  t.same(await forwarded.json(), await here.json());
  const tree = await lenient.post('/api/tree', { repoName: repos[0]!.name, revisionName: 'HEAD', paths: ['src'] });
  t.equal(tree.status, 200);
  t.match(JSON.stringify(await tree.json()), /file5\.js/);
  // MCP's file tools read through the same routes: forwarded the same way.
  const client = new Client({ name: 'trawl-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${lenient.url}/api/mcp`)));
  t.teardown(() => client.close());
  const read = (await client.callTool({ name: 'read_file', arguments: { repo: repos[0]!.name, path: 'src/file1.js' } })) as {
    content: { text: string }[];
    isError?: boolean;
  };
  t.notOk(read.isError, 'read_file of a repository held by another node');
  t.match(read.content[0]!.text, /^src\/file1\.js \(JavaScript, \d+ lines\)\n1: \/\/ router 0\.1\n/, 'answers the file, as its holder has it');
  const branches = (await client.callTool({ name: 'list_branches', arguments: { repo: repos[0]!.name } })) as {
    content: { text: string }[];
    isError?: boolean;
  };
  t.notOk(branches.isError, 'list_branches of a repository held by another node');
  t.match(branches.content[0]!.text, /^1 branches, newest first\n(main|master) {2}\S+ {2}\[isDefault, isIndexed\]\n$/, 'as its holder has them');
  // A forwarded listing keeps its page headers.
  const commits = `/api/commits?repo=${encodeURIComponent(repos[0]!.name)}&perPage=1`;
  const listedHere = await holder.fetch(commits);
  const listedThere = await lenient.fetch(commits);
  t.equal(listedThere.headers.get('x-total-count'), listedHere.headers.get('x-total-count'), 'X-Total-Count of a forwarded read');
  t.same(await listedThere.json(), await listedHere.json());
  const asPeer = await holder.fetch(source, { headers: { 'x-trawl-cluster-key': 'x'.repeat(40) } });
  t.equal(asPeer.status, 401, 'a read presenting a wrong cluster key is refused');

  holder.process.kill('SIGKILL');
  await holder.exited;
  t.equal((await lenient.fetch(source)).status, 503, 'no node left to read r0: 503');
  await waitFor(async () => (await search(lenient, request)).missing === String(r0), 15_000, `partition ${r0} reported missing`);
  const partial = await search(lenient, request);
  t.equal(partial.status, 200);
  t.equal(partial.response.isSearchExhaustive, false, 'the answer says it is not complete');
  t.ok(partial.response.stats.crashes >= 1, 'the missing partition is counted as a crash');
  t.notOk(
    partial.response.files.some((file) => file.repository === repos[0]!.name),
    'nothing of the missing partition',
  );
  t.ok(partial.response.files.length > 0, 'the rest is answered');
  const partialEvery = await search(lenient, EVERY);
  t.equal(partialEvery.status, 200, 'an exhaustive search without a partition');
  t.equal(partialEvery.response.isSearchExhaustive, false, 'says it is not complete');
  t.ok(partialEvery.response.stats.crashes >= 1, 'and counts the missing partition');
  t.same(everyMatch(partialEvery.response).files, everyMatch(partial.response).files, 'the same files as the capped search');
  t.equal((await strict.post('/api/search', EVERY)).status, 503, 'cluster.strict refuses it before its first byte');
  const refused = await strict.post('/api/search', request);
  t.equal(refused.status, 503, 'cluster.strict refuses a partial answer');
  t.match(((await refused.json()) as { message: string }).message, new RegExp(`partitions ${r0}\\b`));
  const { exit, status: now } = await status(lenient.configFile);
  t.equal(exit, 1, '`trawl cluster status` exits 1 while a repository is not served');
  t.same(
    now!.unserved,
    [repos[0]!.name].concat(
      repos
        .slice(1)
        .filter((repo) => partitionOf(repo.name, PARTITIONS) === r0)
        .map((repo) => repo.name),
    ),
  );
});

t.test('reads forwarded by another node count against their callers there, not against that node here', async (t) => {
  const etcd = await startEtcd(t, 1);
  const repos = repositories(t, 1);
  const cluster = { etcd: etcd.endpoints, keyFile: keyFile(t), partitions: PARTITIONS, replicas: 1 };
  const base = { auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 1 } };
  const owner = ownerOf(partitionOf(repos[0]!.name, PARTITIONS), ['a', 'b'], PARTITIONS);
  const other = owner === 'a' ? 'b' : 'a';
  // The holder allows one request a second (two in a burst) from any one caller; the other node has no limit.
  const holder = await startDaemon(t, { ...base, repos, cluster: { ...cluster, node: owner }, server: { workers: 1, rateLimitPerSecond: 1 } });
  const elsewhere = [{ ...repos[0]!, path: path.join(repos[0]!.path, 'not-here') }];
  const front = await startDaemon(t, { ...base, repos: elsewhere, cluster: { ...cluster, node: other } });
  const source = `/api/source?repo=${encodeURIComponent(repos[0]!.name)}&path=src/file1.js`;
  await waitFor(async () => (await front.fetch(source)).status === 200, 60_000, 'the holder serving the repository');
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await front.fetch(source)).status);
  t.same(statuses, [200, 200, 200, 200, 200, 200], 'six reads in a row, all forwarded and answered');
  const direct = [];
  for (let i = 0; i < 6; i++) direct.push((await holder.fetch(source)).status);
  t.ok(direct.includes(429), "the holder's own callers are still limited");
});
