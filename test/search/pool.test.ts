import t from 'tap';
import path from 'node:path';
import { validateConfig } from '../../src/config/config.js';
import { runIndex } from '../../src/indexer/run-index.js';
import { loadCatalog } from '../../src/search/catalog.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

// The built pool: its workers load dist/src/worker/search-worker.js, as in the daemon.
const { SearchPool } = (await import(new URL('../../dist/src/search/pool.js', import.meta.url).href)) as typeof import('../../src/search/pool.js');

t.test('a saturated pool runs searches in the order they were submitted', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) files[`src/file${i}.c`] = `int needle_${i} = ${i};\n`.repeat(200);
  makeRepository(repoDir, files);
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/fifo', path: repoDir, public: true }], index: { ctagsProcesses: 1 } }, 'test');
  const outcomes = await runIndex(config);
  t.equal(outcomes[0]!.status, 'indexed');

  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 100, timeBudgetMs: 10_000, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  pool.setCatalog(loadCatalog(config));
  const everything = () => true;
  t.equal((await pool.search({ query: 'needle_7', matches: 10 }, { visible: everything })).stats.fileCount, 1, 'the pool searches the index');

  // One worker, 40 searches at once: all but the first wait in the queue. Piscina's default puts a task
  // that finds the worker busy back at the tail, so later searches overtook earlier ones.
  const finished: number[] = [];
  const searches = Array.from({ length: 40 }, (_, i) => pool.search({ query: `needle_${i % 50}`, matches: 1000 }, { visible: everything }).then(() => finished.push(i)));
  await Promise.all(searches);
  t.same(
    finished,
    Array.from({ length: 40 }, (_, i) => i),
    'first submitted, first answered',
  );
});
