import t, { type Test } from 'tap';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { validateConfig, type Config } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import type { FileResult, SearchRequest, SearchResponse } from '../../src/api/types.js';
import { loadCatalog, type Catalog } from '../../src/search/catalog.js';
import type { CallerContention } from '../../src/search/contention.js';
import { SearchPool, type SearchCall, type SearchPoolOptions } from '../../src/search/pool.js';
import type { SearchJson } from '../../src/search/sinks.js';
import { PREFIX_ROOM } from '../../src/search/response/render-slots.js';
import { mergeRenderedFiles } from '../../src/search/response/rendered-files.js';
import { WORKER_NICE_INCREMENT } from '../../src/search/workers.js';
import { waitFor } from '../helpers/daemon.js';
import { threadNiceValues } from '../helpers/threads.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

/** Longer than any test: no check here is about the deadline, and workers that load the TypeScript sources take seconds to start on a busy machine. */
const NO_DEADLINE_MS = 600_000;

/** Searches split between idle workers however few their candidates (task-split.ts): what these tests are about. */
const SPLIT_ALWAYS = { oneTaskBelowBytes: 0 };

/** A pool over `catalog` with `options` (its other options those of every pool here), closed when the test ends. */
function poolOver(t: Test, catalog: Catalog, options: Partial<SearchPoolOptions> & { workers: number }): SearchPool {
  const pool = new SearchPool({ maxQueuedSearches: 10, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://trawl.test', contexts: {}, ...options });
  t.teardown(() => pool.close());
  pool.setCatalog(catalog);
  return pool;
}

/** The names of the tasks `pool` gives its workers from now on, `search` for a search task. */
function taskNames(pool: SearchPool): string[] {
  const workers = (pool as unknown as { workers: { run: (task: unknown, name?: string) => Promise<unknown> } }).workers;
  const run = workers.run.bind(workers);
  const names: string[] = [];
  workers.run = (task, name) => {
    names.push(name ?? 'search');
    return run(task, name);
  };
  return names;
}

/** The search tasks among `names` (taskNames). */
const searchTasks = (names: string[]) => names.filter((name) => name === 'search').length;

/**
 * Two pools of two workers over `config`'s three repositories, once their front ends have mapped the shards: one whose
 * front end runs the searches it may, for a slice no search outlasts (so the pool's decision decides where a search runs,
 * whatever the machine's load), and one whose front end never does.
 */
async function frontEndAndWorkerPools(t: Test, config: Config): Promise<[SearchPool, SearchPool]> {
  const here = poolOver(t, loadCatalog(config), { frontEndSliceMs: NO_DEADLINE_MS, workers: 2 });
  const workers = poolOver(t, loadCatalog(config), { frontEndSliceMs: 0, workers: 2 });
  for (const pool of [here, workers]) await waitFor(async () => pool.shardsMapped === 3, 60_000, 'the front end to map the shards it estimates from');
  return [here, workers];
}

/** A search as the routes run it: planned first, then searched. */
const searched = async (pool: SearchPool, request: SearchRequest, call: SearchCall) => pool.search(await pool.plan(request), request, call);
/** A JSON response's text, its pieces joined. */
const bodyText = (json: SearchJson) => Buffer.concat(json.body).toString();
const searchedJson = async (pool: SearchPool, request: SearchRequest, call: SearchCall) => pool.searchJson(await pool.plan(request), request, call);

/**
 * Indexes three repositories under `root`, example.com/one, two and three (`files` of each name), and
 * starts a pool of two workers on their catalog (setCatalog returns before a shard is mapped); closed when the test ends.
 */
async function twoWorkersOver(t: Test, root: string, files: (name: string) => Record<string, string>) {
  const repos = ['one', 'two', 'three'].map((name) => {
    makeRepository(path.join(root, name), files(name));
    return { name: `example.com/${name}`, path: path.join(root, name), public: true };
  });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos, index: { ctagsProcesses: 1 } }, 'test');
  await runIndex(config);
  const pool = poolOver(t, loadCatalog(config), { ...SPLIT_ALWAYS, workers: 2 });
  return { pool, config };
}

t.test('a saturated pool runs searches in the order they were submitted', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) files[`src/file${i}.c`] = `int needle_${i} = ${i};\n`.repeat(200);
  makeRepository(repoDir, files);
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/fifo', path: repoDir, public: true }], index: { ctagsProcesses: 1 } },
    'test',
  );
  const outcomes = await runIndex(config);
  t.equal(outcomes[0]!.status, 'indexed');

  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 100, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));
  const everything = () => true;
  t.equal((await searched(pool, { query: 'needle_7', matches: 10 }, { visible: everything })).stats.fileCount, 1, 'the pool searches the index');

  // One worker, 40 searches at once: all but the first wait in the queue. Piscina's default puts a task
  // that finds the worker busy back at the tail, so later searches overtook earlier ones.
  const finished: number[] = [];
  const searches = Array.from({ length: 40 }, (_, i) =>
    searched(pool, { query: `needle_${i % 50}`, matches: 1000 }, { visible: everything }).then(() => finished.push(i)),
  );
  await Promise.all(searches);
  t.same(
    finished,
    Array.from({ length: 40 }, (_, i) => i),
    'first submitted, first answered',
  );

  // Callers take turns: one with twenty searches queued delays another's by a turn, not by twenty searches.
  const order: string[] = [];
  const search = (caller: string, i: number) =>
    searched(pool, { query: `needle_${i}`, matches: 1000 }, { visible: everything, caller }).then(() => order.push(`${caller}${i}`));
  await Promise.all([...Array.from({ length: 20 }, (_, i) => search('a', i)), search('b', 0), search('b', 1)]);
  const a = order.filter((name) => name.startsWith('a'));
  t.same(
    a,
    Array.from({ length: 20 }, (_, i) => `a${i}`),
    "a caller's searches in the order it submitted them",
  );
  t.ok(
    order.indexOf('b0') < 6 && order.indexOf('b0') < order.indexOf('b1') && order.indexOf('b1') < 8,
    `the other caller's two among the first (${order.slice(0, 8).join(' ')})`,
  );
});

t.test('a caller filling the search queue gives its youngest places to other callers', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, { 'main.c': 'int needle = 1;\n' });
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/queue', path: repoDir, public: true }], index: { ctagsProcesses: 1 } },
    'test',
  );
  await runIndex(config);
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 4, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));
  const request = { query: 'needle', matches: 10 };
  const outcome = (search: Promise<unknown>) =>
    search.then(
      () => 'answered',
      (error: Error) => error.message,
    );

  // Admitted in one turn of the event loop, before a worker answers any: a's four fill the queue, a fifth is refused.
  const a = Array.from({ length: 4 }, () => outcome(searched(pool, request, { visible: () => true, caller: 'a' })));
  const aFifth = outcome(searched(pool, request, { visible: () => true, caller: 'a' }));
  const bParts: unknown[] = [];
  const b = outcome(pool.stream(await pool.plan(request), request, { visible: () => true, caller: 'b' }, (part) => bParts.push(part)));
  t.equal(await aFifth, 'the search queue is full (4 searches in flight)', 'alone, a caller is refused past the limit');
  t.equal(await b, 'answered', "another caller's search is admitted into the full queue");
  t.equal(bParts.length, 1, 'and streams its part');
  t.same(
    await Promise.all(a),
    ['answered', 'answered', 'answered', 'the search queue is full (4 searches in flight): this search gave its place to another caller'],
    "a's youngest gave its place",
  );
  t.equal(pool.searchesInFlight, 0, 'every place given back');

  // A displaced stream sends nothing: c's youngest stream gives its place to d's search.
  const cParts: unknown[] = [];
  const c = [
    ...Array.from({ length: 3 }, () => outcome(searched(pool, request, { visible: () => true, caller: 'c' }))),
    outcome(pool.stream(await pool.plan(request), request, { visible: () => true, caller: 'c' }, (part) => cParts.push(part))),
  ];
  t.equal(await outcome(searched(pool, request, { visible: () => true, caller: 'd' })), 'answered');
  t.match(await c[3], /gave its place/);
  t.same(cParts, [], 'no part of the displaced stream');
  t.same(await Promise.all(c.slice(0, 3)), ['answered', 'answered', 'answered']);
  t.equal(pool.displacedSearches, 2, 'two searches gave their places (counted for /metrics)');
});

t.test("a search gives its worker up to another caller's at the end of its slice, and its parts make the same response", async (t) => {
  const root = tempDir(t);
  const repos = ['one', 'two', 'three'].map((name) => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`src/${name}${i}.c`] = `int needle_${name}_${i} = ${i};\n`.repeat(i + 1);
    makeRepository(path.join(root, name), files);
    return { name: `example.com/${name}`, path: path.join(root, name), public: true };
  });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos, index: { ctagsProcesses: 1 } }, 'test');
  await runIndex(config);
  // A slice of 0 ms: while another caller has tasks, a task gives its worker up after one document.
  const pool = new SearchPool({
    workers: 1,
    maxQueuedSearches: 10,
    timeBudgetMs: NO_DEADLINE_MS,
    publicUrl: 'http://127.0.0.1:1',
    contexts: {},
    taskSliceMs: 0,
  });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));
  let tasks = 0;
  const { workers } = pool as unknown as { workers: { run: (...args: unknown[]) => Promise<unknown>; contention: CallerContention } };
  const run = workers.run.bind(workers);
  workers.run = (...args) => {
    if (args[1] === undefined) tasks++;
    return run(...args);
  };
  const request = { query: 'needle_', matches: 1000 };
  const query = await pool.plan(request);
  const call = { visible: () => true, caller: 'a' };
  const comparable = ({ stats, ...rest }: SearchResponse) => ({
    ...rest,
    counts: [stats.fileCount, stats.totalMatchCount, stats.actualMatchCount, stats.filesConsidered, stats.shardFilesConsidered, stats.crashes],
  });
  const fromJson = (json: SearchJson) => comparable(JSON.parse(bodyText(json)) as SearchResponse);

  const aloneJson = fromJson(await pool.searchJson(query, request, call));
  const alone = comparable(await pool.search(query, request, call));
  t.equal(tasks, 2, 'alone, a search is one task');
  t.equal(alone.counts[0], 36, 'every file found');

  // Another caller's task with the workers, as the workers see it (its search would race this one's).
  workers.contention.add('b');
  t.teardown(() => workers.contention.remove('b'));
  tasks = 0;
  t.same(fromJson(await pool.searchJson(query, request, call)), aloneJson, 'the parts rendered by a worker are the whole response');
  t.ok(tasks > 10, `the search ran as ${tasks} tasks`);
  t.equal(pool.yieldedTasks, tasks - 1, 'each but the last gave its worker up (counted for /metrics)');
  t.same(comparable(await pool.search(query, request, call)), alone, 'the parts built here too');
  const parts: number[] = [];
  const summary = await pool.stream(query, request, call, (part) => parts.push(part.stats.fileCount));
  t.ok(parts.length > 10, 'a stream sends each part as it comes');
  t.equal(summary.accumulatedStats.fileCount, 36, 'the parts hold every file once');
  t.equal(summary.accumulatedStats.shardFilesConsidered, 3, 'and count each shard once');
});

t.test('search workers run at a lower priority than the front end', async (t) => {
  const before = threadNiceValues();
  const pool = new SearchPool({ workers: 2, maxQueuedSearches: 10, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  t.ok(await pool.ping(10_000), 'a worker answers');
  const lowered = () => [...threadNiceValues()].filter(([tid, nice]) => !before.has(tid) && nice === before.get(process.pid)! + WORKER_NICE_INCREMENT).length;
  await waitFor(async () => lowered() >= 2, 10_000, 'both workers to start'); // each renices itself as it starts
  t.equal(lowered(), 2, 'one thread per worker is reniced');
  t.equal(threadNiceValues().get(process.pid), before.get(process.pid), "the front end's thread keeps its priority");
});

t.test("a new generation's shards are mapped in the background, by the front end and by every worker", async (t) => {
  const root = tempDir(t);
  const { pool, config } = await twoWorkersOver(t, root, (name) => ({ 'main.c': `int ${name} = 1;\n` }));
  t.equal(pool.shardsMapped, 0, 'setCatalog returns before mapping a shard');
  await waitFor(async () => pool.shardsMapped === 3 && pool.workerShardsMapped === 3, 10_000, 'the three shards to be mapped by the front end and each worker');
  t.equal(pool.shardsMapped, 3);
  t.equal(pool.workerShardsMapped, 3, 'each worker mapped all three before any search');

  // A commit to one repository replaces its shard file: each worker maps the new one before a search needs it.
  const before = loadCatalog(config);
  makeRepository(path.join(root, 'two'), { 'main.c': 'int two = 2;\n' });
  await runIndex(config);
  const after = loadCatalog(config);
  t.not(after.repositories[1]!.shards[0]!.path, before.repositories[1]!.shards[0]!.path, 'a new shard file');
  pool.setCatalog(after);
  // The replaced file stays on disk (so searches still holding it finish) until the next index pass removes it.
  await waitFor(async () => pool.workerShardsMapped === 4, 10_000, "every worker to map the new generation's new shard");
  t.equal(pool.workerShardsMapped, 4, 'each worker mapped the new shard beside the three it had');
  t.equal((await searched(pool, { query: 'two = 2', matches: 10 }, { visible: () => true })).stats.fileCount, 1, 'the new generation is searched');

  // A worker that dies is replaced by Piscina; the replacement maps the current shards before any search.
  const { piscina } = (pool as unknown as { workers: { piscina: { threads: Worker[] } } }).workers;
  const [doomed, survivor] = piscina.threads.map((worker) => worker.threadId);
  await piscina.threads[0]!.terminate();
  await waitFor(async () => piscina.threads.length === 2 && !piscina.threads.some((worker) => worker.threadId === doomed), 10_000, 'a replacement worker');
  t.ok(
    piscina.threads.some((worker) => worker.threadId === survivor),
    'the other worker stays',
  );
  // It maps only the current generation's three (the other still holds the replaced one too).
  await waitFor(async () => pool.workerShardsMapped === 3, 10_000, 'the replacement to map the current shards');
  t.equal(pool.workerShardsMapped, 3, 'the replacement mapped the three current shards without a search');
});

t.test('a search answered as JSON is the search, whether its worker or the front end builds it', async (t) => {
  const root = tempDir(t);
  const repos = ['alpha', 'beta'].map((name) => {
    const dir = path.join(root, name);
    makeRepository(dir, {
      'src/main.c': `#include <stdio.h>\nint ${name}_count = 0;\nint main(void) {\n  printf("hello ${name}\\n");\n  return ${name}_count;\n}\n`,
      'src/util.h': `/* ${name} helpers: hello */\nint ${name}_helper(int hello);\n`,
      'README.md': `# ${name}\nSay hello.\n`,
    });
    return { name: `example.com/${name}`, path: dir, public: true };
  });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos, index: { ctagsProcesses: 1 } }, 'test');
  await runIndex(config);
  const catalog = loadCatalog(config);
  t.equal(catalog.repositories.flatMap((repo) => repo.shards).length, 2, 'two shards');
  // One worker: each search is one task, built by the worker, into a render slot or (slots too small for
  // any response) as bytes of its own. Two workers and one search at a time: two tasks, each rendering its
  // files when they are many (whole files here), merged by the front end, else built by the front end, as
  // the objects always are.
  const setups = [
    { workers: 1, label: '1 worker' },
    { workers: 1, renderSlotBytes: PREFIX_ROOM + 16, label: '1 worker, response over its slot' },
    { workers: 2, label: '2 workers' },
    { workers: 2, renderSlotBytes: PREFIX_ROOM + 16, label: '2 workers, response over its slot' },
  ];
  const pools = setups.map(({ workers, renderSlotBytes }) => poolOver(t, catalog, { ...SPLIT_ALWAYS, workers, renderSlotBytes }));
  let renderTasks = 0;
  for (const pool of pools) {
    const workers = (pool as unknown as { workers: { run: (task: unknown, name?: string) => Promise<unknown> } }).workers;
    const run = workers.run.bind(workers);
    workers.run = (task, name) => {
      if (name === 'renderMerged') renderTasks++;
      return run(task, name);
    };
  }
  const everything = () => true;
  const timing = new Set(['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch']);
  const withoutTimings = (response: { stats: object }) => ({
    ...response,
    stats: Object.fromEntries(Object.entries(response.stats).filter(([key]) => !timing.has(key))),
  });
  const uncapped = [
    { query: 'hello', matches: 100, contextLines: 1 },
    { query: 'hel+o\\b', isRegexEnabled: true, matches: 100, whole: true },
    { query: 'hello type:file', matches: 100 },
    { query: 'hello', matches: 100, whole: true },
    { query: 'nothing_matches_this', matches: 10 },
  ];
  // The two tasks of a capped search race (the first to find enough stops the other), so its counters
  // vary from run to run: it is compared with one worker only.
  const capped = { query: 'hello', matches: 3 };
  const cases = [...uncapped.flatMap((request) => pools.map((pool, index) => ({ request, pool, index }))), { request: capped, pool: pools[0]!, index: 0 }];
  for (const { request, pool, index } of cases) {
    const object = await searched(pool, request, { visible: everything });
    const json = await searchedJson(pool, request, { visible: everything });
    const parsed = JSON.parse(bodyText(json)) as typeof object;
    json.release();
    t.same(Object.keys(parsed), ['stats', 'files', 'repositoryInfo', 'isSearchExhaustive'], `${request.query}, ${setups[index]!.label}: members in order`);
    t.same(withoutTimings(parsed), withoutTimings(object), `${request.query}, ${setups[index]!.label}: the same response`);
    t.same(parsed.stats, json.stats, 'the stats returned are those written');
    t.ok(Number.isInteger(parsed.stats.wait) && parsed.stats.wait >= 0 && parsed.stats.duration > 0, 'timed (a search may wait no time at all)');
    // Whole files make each group of a split search render its own: merged here as views of the groups' bytes.
    if (setups[index]!.workers > 1 && 'whole' in request && request.whole === true) {
      t.ok(
        json.body.length > 3 && json.body.every((piece) => !(piece.buffer instanceof SharedArrayBuffer)),
        `${setups[index]!.label}: the groups' files, in pieces`,
      );
    } else {
      t.equal(json.body.length, 1, 'in one piece');
      t.equal(
        json.body[0]!.buffer instanceof SharedArrayBuffer,
        setups[index]!.workers === 1 && !setups[index]!.renderSlotBytes,
        `${setups[index]!.label}: in a render slot or not`,
      );
    }
  }
  // Cut at `matches` with whole files, on two workers: each group renders its files, the front end cuts them
  // (the file cut in the middle drafted again), no render task.
  const cutWhole = await searchedJson(pools[2]!, { query: 'hello', matches: 3, whole: true }, { visible: everything });
  const cutResponse = JSON.parse(bodyText(cutWhole)) as SearchResponse;
  cutWhole.release();
  t.same(
    [cutResponse.stats.actualMatchCount, cutResponse.isSearchExhaustive, cutResponse.stats.flushReason],
    [3, false, 'FLUSH_REASON_MAX_SIZE'],
    'cut at `matches`',
  );
  t.equal(
    cutResponse.files.reduce((sum, file) => sum + file.fileName.matchRanges.length + file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0), 0),
    3,
    'three ranges returned',
  );
  t.equal(renderTasks, 0, 'no response was rendered by a task of its own: the tasks that found the files rendered them');
  const visibleAlpha = await searchedJson(pools[0]!, { query: 'hello', matches: 100 }, { visible: (repo) => repo.name === 'example.com/alpha' });
  t.same(
    [...new Set((JSON.parse(bodyText(visibleAlpha)) as { files: { repository: string }[] }).files.map((file) => file.repository))],
    ['example.com/alpha'],
    'only visible repositories',
  );
  visibleAlpha.release();

  // Two searches in flight at most: two slots. A response not yet released keeps its slot (built by the worker, never here).
  const twoSlots = poolOver(t, catalog, { workers: 1, maxQueuedSearches: 2, frontEndSliceMs: 0 });
  const held = await Promise.all(['hello', 'alpha_count'].map((query) => searchedJson(twoSlots, { query, matches: 100 }, { visible: everything })));
  const heldText = held.map((json) => bodyText(json));
  const third = await searchedJson(twoSlots, { query: 'helper', matches: 100, contextLines: 2 }, { visible: everything });
  t.notOk(third.body[0]!.buffer instanceof SharedArrayBuffer, 'with both slots held, a response travels as bytes of its own');
  t.same(
    held.map((json) => bodyText(json)),
    heldText,
    'the held responses are intact',
  );
  t.same(
    heldText.map((text) => (JSON.parse(text) as { stats: { fileCount: number } }).stats.fileCount),
    [6, 1],
    'each held response is its own search',
  );
  held[0]!.release();
  held[0]!.release(); // idempotent: the slot is not freed twice
  const reused = await Promise.all(['README', 'beta_helper'].map((query) => searchedJson(twoSlots, { query, matches: 100 }, { visible: everything })));
  t.same(
    reused.map((json) => json.body[0]!.buffer instanceof SharedArrayBuffer),
    [true, false],
    'a released slot is taken again, once',
  );
  t.equal(bodyText(held[1]!), heldText[1], 'the response still held is intact');
});

t.test('a split search renders its files in the groups that found them, but for the few files a group left to the front end', async (t) => {
  const root = tempDir(t);
  // 'one' holds more lines of results than the front end builds; 'two' and 'three' few each.
  const lines: Record<string, number> = { one: 1500, two: 300, three: 300 };
  const { config } = await twoWorkersOver(t, root, (name) => ({ 'src/a.c': 'int needle;\n'.repeat(lines[name]!) }));
  const catalog = loadCatalog(config);
  const single = poolOver(t, catalog, { workers: 1, frontEndSliceMs: 0 });
  const answer = async (from: SearchPool, request: SearchRequest) => {
    const json = await searchedJson(from, request, { visible: () => true });
    const { files, repositoryInfo, isSearchExhaustive, stats } = JSON.parse(bodyText(json)) as SearchResponse;
    json.release();
    // A cut search's other counters depend on where its groups stopped (each at `matches` of its own).
    return { files, repositoryInfo, isSearchExhaustive, actualMatchCount: stats.actualMatchCount, flushReason: stats.flushReason };
  };
  // Three groups, one repository each. 'two' and 'three' would make 900 lines as three groups' answer: they leave
  // their files to the front end, which builds them and merges them with the files 'one' rendered. With a line of
  // context on either side, 2,700 lines: each renders its own (each alone is under the front end's 1,000).
  // Two groups: whichever way the repositories are grouped, any group that leaves its files holds 300 ranges.
  for (const { workers, contextLines } of [
    { workers: 3, contextLines: 0 },
    { workers: 3, contextLines: 1 },
    { workers: 2, contextLines: 0 },
  ]) {
    const pool = poolOver(t, catalog, { ...SPLIT_ALWAYS, workers });
    const names = taskNames(pool);
    // Cut in a file (wherever the ranking puts it), and not cut at all.
    for (const matches of [1200, 1700, 2000, 5000]) {
      const request = { query: 'needle', matches, contextLines };
      const label = `${workers} groups, ${contextLines} lines of context, matches ${matches}`;
      const split = await answer(pool, request);
      const alone = await answer(single, request);
      t.same(split, alone, `${label}: the same response as one task finds and builds`);
      t.equal(split.actualMatchCount, Math.min(matches, 2100), `${label}: cut at matches`);
      // The same parts for a cluster's front end to merge with other nodes' (cluster/merge.ts).
      const { parts, redraft } = await pool.searchFiles(await pool.plan(request), request, { visible: () => true });
      const merged = mergeRenderedFiles(parts, request, redraft)!;
      t.same(JSON.parse(Buffer.concat(merged.files).toString()), alone.files, `${label}: the same files as parts to merge`);
    }
    t.equal(searchTasks(names), 8 * workers, `${workers} tasks a search`);
    t.notOk(names.includes('renderMerged'), `${workers} groups, ${contextLines} lines of context: no response rendered by a task of its own`);
  }
});

t.test('an idle pool runs a search with few candidates on the front end or as one task, and answers it as a split one', async (t) => {
  const root = tempDir(t);
  const { pool: split, config } = await twoWorkersOver(t, root, (name) => ({ 'src/a.c': `int needle_${name};\n`, 'src/b.c': 'int common;\n' }));
  const [here, oneTask] = await frontEndAndWorkerPools(t, config);
  const names = [here, oneTask, split].map(taskNames);
  for (const query of ['needle_two', 'content:common or needle_one', 'no_such_needle']) {
    const request = { query, matches: 100 };
    const answers = await Promise.all([here, oneTask, split].map((pool) => searched(pool, request, { visible: () => true })));
    t.same(answers[0]!.files, answers[2]!.files, `${query}: the same files on the front end`);
    t.same(answers[1]!.files, answers[2]!.files, `${query}: the same files as one task`);
    t.same(answers[0]!.stats.shardFilesConsidered, answers[2]!.stats.shardFilesConsidered, `${query}: the same shards considered`);
  }
  t.same(names.map(searchTasks), [0, 3, 6], 'none on the front end, one task each where idle workers would have split them in two');
  const regex = { query: 'needle_\\w+', isRegexEnabled: true, matches: 100 };
  await searched(here, regex, { visible: () => true });
  t.equal(searchTasks(names[0]!), 2, 'a regex over content is split');
});

t.test("a worker takes the rest of a search the front end's slice did not finish", async (t) => {
  const root = tempDir(t);
  // 3 files × 24 lines: an exhaustive stream of whole files hands its parts on every 16 ranges (search-run.ts).
  const { config } = await twoWorkersOver(t, root, (name) => ({ 'src/a.c': `int needle_${name};\n`.repeat(24) }));
  // The part's bound, not the slice's time, ends the front end's share.
  const [here, oneTask] = await frontEndAndWorkerPools(t, config);
  const names = [here, oneTask].map(taskNames);
  const request = { query: 'needle', matches: 1000, exhaustive: true, whole: true };
  const streamed = async (from: SearchPool) => {
    const files: FileResult[] = [];
    await from.stream(await from.plan(request), request, { visible: () => true }, (part) =>
      files.push(...(JSON.parse(Buffer.from(part.files).toString()) as FileResult[])),
    );
    return files.map((file) => [file.repository, file.fileName.text, file.chunks.length]).sort();
  };
  const [resumed, whole] = [await streamed(here), await streamed(oneTask)];
  t.same(resumed, whole, 'the same files and chunks');
  t.equal(resumed.length, 3);
  const [fromHere, fromWorkers] = names.map(searchTasks);
  t.ok(fromWorkers! > 1, `parts handed on: ${fromWorkers} tasks`);
  t.equal(fromHere, fromWorkers! - 1, 'the front end found the first part, the workers the rest');
});

t.test('a streamed search hands over each group as a part within `matches`, and sums their stats', async (t) => {
  const root = tempDir(t);
  const { pool } = await twoWorkersOver(t, root, (name) =>
    Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`src/${name}${i}.c`, `int needle_${name}_${i};\n`.repeat(5)])),
  );
  const everything = () => true;
  const streamed = async (request: SearchRequest, visible: SearchCall['visible'] = everything) => {
    const parts: SearchResponse[] = [];
    const summary = await pool.stream(await pool.plan(request), request, { visible }, (part) =>
      parts.push({ ...part, files: JSON.parse(Buffer.from(part.files).toString()) as FileResult[] }),
    );
    const sum = (count: (part: SearchResponse) => number) => parts.reduce((total, part) => total + count(part), 0);
    return { parts, summary, sum };
  };
  // 3 repositories × 4 files × 5 lines: 60 ranges; two workers idle, so the search runs as two groups.
  const all = await streamed({ query: 'needle', matches: 1000 });
  t.ok(all.parts.length >= 2, `one part per group that found something: ${all.parts.length}`);
  t.same(
    [all.summary.accumulatedStats.actualMatchCount, all.summary.accumulatedStats.totalMatchCount, all.summary.accumulatedStats.fileCount],
    [60, 60, 12],
    'every match, counted once',
  );
  t.equal(
    all.sum((part) => part.stats.actualMatchCount),
    60,
    'the summary sums the parts',
  );
  t.same([all.summary.isSearchExhaustive, all.summary.accumulatedStats.flushReason], [true, 'FLUSH_REASON_FINAL_FLUSH']);
  const whole = await searched(pool, { query: 'needle', matches: 1000 }, { visible: everything });
  t.same(
    new Set(all.parts.flatMap((part) => part.files.map((file) => file.fileName.text))),
    new Set(whole.files.map((file) => file.fileName.text)),
    'the parts hold the files of the whole response',
  );
  // At least 20 ranges × (1 + 2 × 30) lines of results per group, or whole files: parts a worker builds, the same files as the whole response's.
  for (const big of [
    { query: 'needle', matches: 1000, contextLines: 30 },
    { query: 'needle', matches: 1000, whole: true },
  ]) {
    const byWorker = await streamed(big);
    const expected = await searched(pool, big, { visible: everything });
    const byName = (files: FileResult[]) => Object.fromEntries(files.map((file) => [file.fileName.text, file]));
    t.same(byName(byWorker.parts.flatMap((part) => part.files)), byName(expected.files), `${JSON.stringify(big)}: the parts' files are the response's`);
    t.same([byWorker.summary.accumulatedStats.actualMatchCount, byWorker.summary.isSearchExhaustive], [60, true]);
  }
  t.equal(pool.failedTasks, 0, 'no part fell back to the front end');

  const cut = await streamed({ query: 'needle', matches: 7 });
  t.ok(cut.sum((part) => part.stats.actualMatchCount) <= 7, 'the parts hold at most `matches` ranges in all');
  t.equal(
    cut.summary.accumulatedStats.actualMatchCount,
    cut.sum((part) => part.stats.actualMatchCount),
    'and the summary says how many',
  );
  t.same([cut.summary.isSearchExhaustive, cut.summary.accumulatedStats.flushReason], [false, 'FLUSH_REASON_MAX_SIZE'], 'a cut stream says so');
  const files = await streamed({ query: 'type:file needle', matches: 2 });
  t.ok(files.sum((part) => part.files.length) <= 2, 'type:file counts files');
  t.equal(files.summary.isSearchExhaustive, false, 'and is cut past them');
  // Two visible shards, two groups, one file found in each: whichever completes first spends `matches`,
  // and the other's file, counted and not returned, makes the stream not exhaustive.
  const spent = await streamed({ query: 'type:file needle_(one|two)_0;', isRegexEnabled: true, matches: 1 }, (repo) => repo.name !== 'example.com/three');
  t.same([spent.parts.length, spent.parts[0]?.files.length, spent.parts[0]?.isSearchExhaustive], [1, 1, true], 'one part with one file, complete in itself');
  t.same([spent.summary.isSearchExhaustive, spent.summary.accumulatedStats.flushReason], [false, 'FLUSH_REASON_MAX_SIZE'], 'the stream is cut');
});

t.test('a stream part whose worker dies before it is built is built by the front end, the same part', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`src/f${i}.c`, `int needle_${i};\n`.repeat(5)])));
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/one', path: repoDir, public: true }], index: { ctagsProcesses: 1 } },
    'test',
  );
  await runIndex(config);
  // One worker: the stream is one group, searched before its part is built, so killing the worker then costs the part only.
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 10, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://trawl.test', contexts: {} });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));
  const workers = (pool as unknown as { workers: { run: (task: unknown, name?: string) => Promise<unknown>; piscina: { threads: Worker[] } } }).workers;
  const run = workers.run.bind(workers);
  let killing = false;
  let renderParts = 0;
  workers.run = (task, name) => {
    if (name === 'renderPart') {
      renderParts++;
      // The worker is told to end before the part is posted to it: it never runs the part.
      if (killing) for (const thread of workers.piscina.threads) void thread.terminate();
    }
    return run(task, name);
  };
  // 20 ranges × (1 + 2 × 30) lines of results: a part a worker builds.
  const request = { query: 'needle', matches: 1000, contextLines: 30 };
  const streamed = async () => {
    const files: FileResult[] = [];
    const summary = await pool.stream(await pool.plan(request), request, { visible: () => true }, (part) =>
      files.push(...(JSON.parse(Buffer.from(part.files).toString()) as FileResult[])),
    );
    return { files: Object.fromEntries(files.map((file) => [file.fileName.text, file])), summary };
  };
  const byWorker = await streamed();
  t.equal(renderParts, 1, 'the part is built by the worker');
  t.equal(pool.failedTasks, 0);
  killing = true;
  const afterDeath = await streamed();
  t.equal(renderParts, 2, 'its worker was ended as the part was handed to it');
  t.equal(pool.failedTasks, 1, 'the failed part is counted');
  t.same(afterDeath.files, byWorker.files, 'and built by the front end: the same files');
  t.same([afterDeath.summary.accumulatedStats.actualMatchCount, afterDeath.summary.isSearchExhaustive], [20, true]);
  killing = false;
  t.equal(
    (await searched(pool, { query: 'needle', matches: 1000 }, { visible: () => true })).stats.actualMatchCount,
    20,
    'a replacement worker serves the next search',
  );
});

t.test('a streamed type:repo search returns a repository once, whichever groups hold its shards', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'big');
  makeRepository(repoDir, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `needle ${i} `.repeat(6000).slice(0, 60 * 1024)])));
  const config = validateConfig(
    {
      dataDir: path.join(root, 'data'),
      repos: [{ name: 'example.com/big', path: repoDir, public: true }],
      index: { maxShardContentBytes: 1 << 20, ctagsCommand: '' },
    },
    'test',
  );
  await runIndex(config);
  const catalog = loadCatalog(config);
  t.ok(catalog.repositories[0]!.shards.length >= 2, `the repository is split into ${catalog.repositories[0]!.shards.length} shards`);
  const pool = poolOver(t, catalog, { ...SPLIT_ALWAYS, workers: 2 });
  const request = { query: 'type:repo needle', matches: 10 };
  const returned: string[] = [];
  const summary = await pool.stream(await pool.plan(request), request, { visible: () => true }, (part) =>
    returned.push(...(JSON.parse(Buffer.from(part.files).toString()) as FileResult[]).map((file) => file.repository)),
  );
  t.same(returned, ['example.com/big'], 'one result for the repository');
  t.equal(summary.isSearchExhaustive, true);
});

t.test("a type:repo search answers its repository's first matching file in index order, split between workers or not", async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'big');
  // Only the first file of the first shard holds "needle" inside a word (a low score); files of later shards hold it as a word.
  const filler = (line: string) => `${line}\n`.repeat(4000);
  const files = Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, filler(i === 0 ? 'xneedlex' : i < 20 ? 'haystack' : 'a needle here')]),
  );
  makeRepository(repoDir, files);
  const config = validateConfig(
    {
      dataDir: path.join(root, 'data'),
      repos: [{ name: 'example.com/big', path: repoDir, public: true }],
      index: { maxShardContentBytes: 1 << 20, ctagsCommand: '' },
    },
    'test',
  );
  await runIndex(config);
  const catalog = loadCatalog(config);
  t.ok(catalog.repositories[0]!.shards.length >= 2, `the repository is split into ${catalog.repositories[0]!.shards.length} shards`);
  const answers = [];
  for (const workers of [1, 2]) {
    const pool = poolOver(t, catalog, { ...SPLIT_ALWAYS, workers });
    // The first shard's group answers last, as it may: a stream must not show the repository by a later shard's file.
    const firstShard = catalog.repositories[0]!.shards[0]!.path;
    const { workers: threads } = pool as unknown as { workers: { run: (task: { shardFiles?: string[] }, ...rest: unknown[]) => Promise<unknown> } };
    const run = threads.run.bind(threads);
    threads.run = async (task, ...rest) => {
      const answer = await run(task, ...rest);
      if (workers === 2 && task.shardFiles?.[0] === firstShard) await new Promise((resolve) => setTimeout(resolve, 100));
      return answer;
    };
    const request = { query: 'type:repo needle', matches: 10 };
    const { files: found, stats } = await searched(pool, request, { visible: () => true });
    const streamed: string[] = [];
    const summary = await pool.stream(await pool.plan(request), request, { visible: () => true }, (part) =>
      streamed.push(...(JSON.parse(Buffer.from(part.files).toString()) as FileResult[]).map((file) => file.fileName.text)),
    );
    answers.push({
      files: found.map((file) => file.fileName.text),
      fileCount: stats.fileCount,
      totalMatchCount: stats.totalMatchCount,
      streamed,
      streamedFileCount: summary.accumulatedStats.fileCount,
    });
  }
  t.same([answers[0]!.files, answers[0]!.fileCount, answers[0]!.streamed], [['f00.txt'], 1, ['f00.txt']], 'one worker: the first file, searched or streamed');
  t.same(answers[1], answers[0], 'two workers, each searching some of the shards: the same answer, searched or streamed');
});

t.test('a closing pool answers the searches it runs and refuses new ones', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  // ≈ 6 MB of matching lines: a search for 100,000 of them is likely still running when close begins.
  makeRepository(
    repoDir,
    Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`text/file${i}.txt`, 'the quick brown fox jumps over the lazy dog 0123456789\n'.repeat(4500)])),
  );
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/closing', path: repoDir, public: true }], index: { ctagsProcesses: 1 } },
    'test',
  );
  await runIndex(config);
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 10, timeBudgetMs: NO_DEADLINE_MS, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  pool.setCatalog(loadCatalog(config));
  const everything = () => true;
  const running = searched(pool, { query: 'lazy dog', matches: 100_000 }, { visible: everything });
  await new Promise((resolve) => setImmediate(resolve)); // its task is with the worker
  const closed = pool.close();
  // Asked while the pool closes: refused, never sent to a worker that is about to go.
  await t.rejects(searched(pool, { query: 'fox', matches: 1 }, { visible: everything }), { name: 'SearchPoolClosingError' });
  await t.rejects(pool.plan({ query: 'fox.*dog', matches: 1, isRegexEnabled: true }), { name: 'SearchPoolClosingError' });
  const answered = await running;
  t.equal(answered.stats.crashes, 0, 'the search in flight was answered by its worker, not failed with it');
  await closed;
  t.equal(pool.failedTasks, 0);
});
