/**
 * Search latency benchmark on the Linux 6.1 corpus, warm cache, in process:
 * a fixed query set in classes, p50/p99 per class for trawl (the engine
 * behind /api/search, `matches` = 100, as an API client asks) and for
 * ripgrep on the same queries in the same run (process start included,
 * exhaustive, as `rg -c`), with the ratio per class; written to
 * docs/benchmarks.md.
 *
 *   npm run bench:search
 */
import path from 'node:path';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { openShardSet } from '../src/search/shard-set.js';
import { search } from '../src/search/in-process.js';
import { benchDirectory, ensureLinuxCorpus, linuxRepositoryConfig, warmPageCache } from './corpus.js';
import { QUERY_CLASSES, searchRequest, type BenchQuery } from './queries.js';
import { writeReportBlock } from './report.js';
import { ripgrepOnce } from './ripgrep.js';
import { percentile } from './stats.js';

const TRAWL_RUNS = Number(process.env.TRAWL_BENCH_SEARCH_RUNS ?? 30);
const RG_RUNS = Number(process.env.TRAWL_BENCH_RG_RUNS ?? 3);
const MATCHES = 100;

const corpus = ensureLinuxCorpus();
const dataDir = path.join(benchDirectory(), 'data-linux');
console.error('indexing (skipped when the index is current) …');
const [outcome] = await runIndex(validateConfig({ dataDir, repos: [linuxRepositoryConfig(corpus)] }, 'bench'));
if (outcome?.status === 'failed') throw new Error(`indexing failed: ${outcome.error}`);
warmPageCache(dataDir); // trawl's side
warmPageCache(corpus); // ripgrep's
const opened = performance.now();
const { shards, failures } = openShardSet(dataDir);
if (failures.length > 0) throw new Error(`shards failed to open: ${failures.map((f) => f.error.message).join('; ')}`);
const openMs = performance.now() - opened;
const heapBefore = process.memoryUsage();

function trawlOnce(q: BenchQuery): { ms: number; files: number; exhaustive: boolean } {
  const started = performance.now();
  const response = search(searchRequest(q, MATCHES), shards, { publicUrl: 'http://127.0.0.1:6070', contexts: {}, timeBudgetMs: 10_000 });
  return { ms: performance.now() - started, files: response.files.length, exhaustive: response.isSearchExhaustive };
}

const format = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));
const rows: string[] = [];
const details: string[] = [];
for (const { name, queries } of QUERY_CLASSES) {
  const trawl: number[] = [];
  const rg: number[] = [];
  for (const q of queries) {
    trawlOnce(q); // warm: first use of the query's shard pages and compiled patterns
    const runs = Array.from({ length: TRAWL_RUNS }, () => trawlOnce(q));
    trawl.push(...runs.map((run) => run.ms));
    ripgrepOnce(corpus, q);
    const rgRuns = Array.from({ length: RG_RUNS }, () => ripgrepOnce(corpus, q));
    rg.push(...rgRuns);
    const last = runs[runs.length - 1]!;
    details.push(
      `| \`${q.query}\` | ${format(
        percentile(
          runs.map((r) => r.ms),
          50,
        ),
      )} | ${format(percentile(rgRuns, 50))} | ${last.files} | ${last.exhaustive ? 'yes' : 'no'} |`,
    );
    console.error(
      `${name}: ${q.query} trawl p50 ${format(
        percentile(
          runs.map((r) => r.ms),
          50,
        ),
      )} ms, rg p50 ${format(percentile(rgRuns, 50))} ms`,
    );
  }
  const ratio = percentile(rg, 50) / percentile(trawl, 50);
  rows.push(
    `| ${name} | ${format(percentile(trawl, 50))} | ${format(percentile(trawl, 99))} | ${format(percentile(rg, 50))} | ${format(percentile(rg, 99))} | ${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1)}× |`,
  );
}
const heapAfter = process.memoryUsage();
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

const body = `Corpus: the Linux 6.1 index of the index-build benchmark (${shards.length} shards). Warm page cache,
one process, queries one at a time. trawl: the engine behind \`/api/search\` with \`matches: ${MATCHES}\` (it stops
after ${MATCHES + 1} match ranges, as an API client's request does), ${TRAWL_RUNS} runs per query after one warm-up.
ripgrep: \`rg -c\` over the same tree (\`--no-ignore --hidden\`), exhaustive, process start included,
${RG_RUNS} runs per query after one warm-up; for path queries, \`rg --files\` filtered by the same regex.
Times in milliseconds; p50/p99 over all runs of the class; ratio = ripgrep p50 / trawl p50.

| class | trawl p50 | trawl p99 | ripgrep p50 | ripgrep p99 | ratio |
|---|---|---|---|---|---|
${rows.join('\n')}

Opening the ${shards.length} shards (map + structural validation): ${format(openMs)} ms. JavaScript heap
${mib(heapBefore.heapUsed)} MiB before the queries and ${mib(heapAfter.heapUsed)} MiB after (external
${mib(heapAfter.external)} MiB): the corpus is mapped, never copied onto the heap.

Targets (issue 3): selective literal p50 ≤ 5 ms and ≥ 100× faster than ripgrep; regex with a literal
p50 ≤ 30 ms; no class slower than ripgrep.`;

console.log(`wrote ${writeReportBlock('search-latency', body)}`);
console.log(body);
// Per query, for the one reading the run: the report keeps the classes (the exhaustive table has every query).
console.log(`\n| query | trawl p50 ms | ripgrep p50 ms | files returned | exhaustive |\n|---|---|---|---|---|\n${details.join('\n')}`);
