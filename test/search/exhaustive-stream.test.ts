import t from 'tap';
import path from 'node:path';
import { validateConfig } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import type { SearchRequest } from '../../src/api/types.js';
import { loadCatalog } from '../../src/search/catalog.js';
import { SearchPool } from '../../src/search/pool.js';
import type { StreamPart, StreamSummary } from '../../src/search/sinks.js';
import { waitFor } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

t.test("an exhaustive stream's next part waits for its reader, and the parts hold every match once", async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  // 30 files of 50 matching lines: with 100 lines of context a part holds a few dozen ranges, so 1,500 make many parts.
  makeRepository(repoDir, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`src/file${i}.txt`, 'needle here\n'.repeat(50)])));
  const config = validateConfig(
    { dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/paced', path: repoDir, public: true }], index: { ctagsProcesses: 1 } },
    'test',
  );
  await runIndex(config);
  // One worker: the search is one shard group, whose tasks run one after the other.
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 10, timeBudgetMs: 600_000, publicUrl: 'http://trawl.test', contexts: {} });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));

  const request: SearchRequest = { query: 'needle', matches: 1e9, contextLines: 100, exhaustive: true };
  const parts: StreamPart[] = [];
  const waiting: (() => void)[] = [];
  let summary: StreamSummary | undefined;
  const streamed = pool
    .stream(await pool.plan(request), request, { visible: () => true, ready: () => new Promise<void>((resolve) => waiting.push(resolve)) }, (part) =>
      parts.push(part),
    )
    .then((result) => (summary = result));
  let pauses = 0;
  while (summary === undefined) {
    await waitFor(async () => summary !== undefined || waiting.length > 0, 60_000, 'the search to wait for its reader or end');
    if (summary !== undefined) break;
    pauses++;
    // The search waits: one part per task so far, and nothing more until the reader is ready.
    t.equal(parts.length, pauses, `pause ${pauses}: the parts of the tasks run so far, one each`);
    waiting.shift()!();
  }
  await streamed;
  t.ok(pauses > 2, `the reader was waited for between parts (${pauses} times)`);
  t.equal(parts.length, pauses + 1, 'each task one part');
  const ranges = parts.map((part) => part.stats.actualMatchCount);
  t.equal(
    ranges.reduce((sum, n) => sum + n, 0),
    1500,
    'every match range',
  );
  t.ok(Math.max(...ranges) < 1500 / 2, 'each part a bounded share of them');
  const paths = parts.flatMap((part) => (JSON.parse(Buffer.from(part.files).toString()) as { fileName: { text: string } }[]).map((file) => file.fileName.text));
  t.equal(new Set(paths).size, 30, 'every file');
  t.equal(paths.length, 30, 'each in one part');
  t.equal(summary!.isSearchExhaustive, true);
  t.equal(summary!.accumulatedStats.actualMatchCount, 1500);
});
