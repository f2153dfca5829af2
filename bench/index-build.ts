/**
 * Index build benchmark on the Linux 6.1 corpus: wall time, MB/s of source,
 * peak RSS, index bytes without stored content and total shard bytes relative
 * to the corpus, with and without ctags symbols; written to docs/benchmarks.md.
 * With TRAWL_BENCH_ZOEKT_INDEX naming a zoekt-index binary, or TRAWL_BENCH_ZOEKT_DIR the directory of
 * Zoekt's binaries (docs/benchmarks.md, "Peers", says how to build them), Zoekt indexes the same tree in
 * the same run, alternating with trawl.
 *
 *   npm run bench:index
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpusSize, ensureLinuxCorpus, warmPageCache } from './corpus.js';
import { writeReportBlock } from './report.js';
import type { Measurement } from './index-build-run.js';
import { zoektIndexRun, type ZoektMeasurement } from './zoekt-index.js';

const RUNS = Number(process.env.TRAWL_BENCH_RUNS ?? 2);
const repo = ensureLinuxCorpus();
const corpus = corpusSize(repo);
warmPageCache(repo); // the git objects the indexer reads, and the working tree
const runner = fileURLToPath(new URL('./index-build-run.js', import.meta.url));
const zoektDir = process.env.TRAWL_BENCH_ZOEKT_DIR;
const zoektIndex = process.env.TRAWL_BENCH_ZOEKT_INDEX ?? (zoektDir && path.join(zoektDir, 'zoekt-index'));

function median<T>(runs: readonly T[], pick: (run: T) => number): number {
  const sorted = runs.map(pick).sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
}

const rows: string[] = [];
const zoektRows: string[] = [];
const ratios: string[] = [];
for (const variant of ['symbols', 'plain'] as const) {
  const label = variant === 'symbols' ? 'with universal-ctags symbols' : 'no symbols';
  const runs: Measurement[] = [];
  const zoektRuns: ZoektMeasurement[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, [runner, repo, variant], { stdio: ['ignore', 'pipe', 'inherit'] });
    const run = JSON.parse(out.toString()) as Measurement;
    console.error(`${variant} run ${i + 1}: ${run.seconds.toFixed(1)} s, ${run.megabytesPerSecond.toFixed(1)} MB/s, ${run.peakRssMiB.toFixed(0)} MiB peak RSS`);
    runs.push(run);
    if (!zoektIndex) continue;
    const zoekt = zoektIndexRun(zoektIndex, repo, variant === 'symbols');
    console.error(`Zoekt ${variant} run ${i + 1}: ${zoekt.seconds.toFixed(1)} s, ${zoekt.peakRssMiB.toFixed(0)} MiB peak RSS`);
    zoektRuns.push(zoekt);
  }
  const last = runs[runs.length - 1]!;
  const seconds = median(runs, (m) => m.seconds);
  rows.push(
    `| trawl, ${label} | ${seconds.toFixed(1)} s | ` +
      `${median(runs, (m) => m.megabytesPerSecond).toFixed(1)} | ${(median(runs, (m) => m.peakRssMiB) / 1024).toFixed(2)} GiB | ` +
      `${(last.indexBytesWithoutContent / corpus.bytes).toFixed(3)}× | ${(last.shardBytes / corpus.bytes).toFixed(2)}× | ` +
      `${((last.shardBytes - last.indexBytesWithoutContent) / 1e6).toFixed(0)} MB | ` +
      `${last.shards} | ${last.documents.toLocaleString('en-US')} | ${last.symbols.toLocaleString('en-US')} |`,
  );
  if (zoektRuns.length === 0) continue;
  const zoektSeconds = median(zoektRuns, (m) => m.seconds);
  const zoektLast = zoektRuns[zoektRuns.length - 1]!;
  zoektRows.push(
    `| Zoekt, ${label} | ${zoektSeconds.toFixed(1)} s | ${(corpus.bytes / 1e6 / zoektSeconds).toFixed(1)} | ` +
      `${(median(zoektRuns, (m) => m.peakRssMiB) / 1024).toFixed(2)} GiB | — | ${(zoektLast.shardBytes / corpus.bytes).toFixed(2)}× | | ${zoektLast.shards} | | |`,
  );
  ratios.push(`${label}: trawl's wall ${(seconds / zoektSeconds).toFixed(2)}× Zoekt's`);
}
const zoektNote = zoektRows.length
  ? `\nZoekt (\`zoekt-index\` of google/zoekt f7d54fa over the working tree, its defaults: 4 shards in parallel, files up to 2 MiB)
ran in the same run, alternating with trawl; ${ratios.join('; ')}.`
  : '\nZoekt was not run (neither TRAWL_BENCH_ZOEKT_INDEX nor TRAWL_BENCH_ZOEKT_DIR set).';

const body = `Corpus: Debian \`linux-source-6.1\` as one git commit — ${corpus.files.toLocaleString('en-US')} files, ${(corpus.bytes / 1e6).toFixed(0)} MB.
\`trawl index\` from scratch (one repository, branch HEAD), warm page cache; median of ${RUNS} runs each.
"index / corpus" counts every shard byte except stored file content (trigram keys and postings of contents, paths and blocks;
document records, symbols, paths, the block table, metadata); "shards / corpus" counts everything. Files over
1 MiB (mostly generated register headers) and binaries are not stored, only their paths: hence "stored content" < corpus.${zoektNote}

| build | wall | MB/s | peak RSS | index / corpus | shards / corpus | stored content | shards | documents | symbols |
|---|---|---|---|---|---|---|---|---|---|
${[...rows, ...zoektRows].join('\n')}

Targets: ≥ 25 MB/s with symbols on 2 cores (issue 34; Zoekt's 7.7 on the day it was set); index without content ≤ 0.5× corpus; peak RSS ≤ 2 GB (issue 2).`;

console.log(`wrote ${writeReportBlock('index-build', body)}`);
console.log(body);
