/**
 * Index build benchmark on the Linux 6.1 corpus: wall time, MB/s of source,
 * peak RSS, index bytes without stored content and total shard bytes relative
 * to the corpus, with and without ctags symbols; written to docs/benchmarks.md.
 *
 *   npm run bench:index
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { corpusSize, ensureLinuxCorpus, warmPageCache } from './corpus.js';
import { writeReportBlock } from './report.js';
import type { Measurement } from './index-build-run.js';

const RUNS = Number(process.env.TRAWL_BENCH_RUNS ?? 2);
const repo = ensureLinuxCorpus();
const corpus = corpusSize(repo);
warmPageCache(repo); // the git objects the indexer reads, and the working tree
const runner = fileURLToPath(new URL('./index-build-run.js', import.meta.url));

const rows: string[] = [];
for (const variant of ['symbols', 'plain'] as const) {
  const runs: Measurement[] = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, [runner, repo, variant], { stdio: ['ignore', 'pipe', 'inherit'] });
    const run = JSON.parse(out.toString()) as Measurement;
    console.error(`${variant} run ${i + 1}: ${run.seconds.toFixed(1)} s, ${run.megabytesPerSecond.toFixed(1)} MB/s, ${run.peakRssMiB.toFixed(0)} MiB peak RSS`);
    runs.push(run);
  }
  const median = (pick: (m: Measurement) => number) => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  };
  const last = runs[runs.length - 1]!;
  rows.push(
    `| trawl, ${variant === 'symbols' ? 'with universal-ctags symbols' : 'no symbols'} | ${median((m) => m.seconds).toFixed(1)} s | ` +
      `${median((m) => m.megabytesPerSecond).toFixed(1)} | ${(median((m) => m.peakRssMiB) / 1024).toFixed(2)} GiB | ` +
      `${(last.indexBytesWithoutContent / corpus.bytes).toFixed(3)}× | ${(last.shardBytes / corpus.bytes).toFixed(2)}× | ` +
      `${((last.shardBytes - last.indexBytesWithoutContent) / 1e6).toFixed(0)} MB | ` +
      `${last.shards} | ${last.documents.toLocaleString('en-US')} | ${last.symbols.toLocaleString('en-US')} |`,
  );
}

const body = `Corpus: Debian \`linux-source-6.1\` as one git commit — ${corpus.files.toLocaleString('en-US')} files, ${(corpus.bytes / 1e6).toFixed(0)} MB.
\`trawl index\` from scratch (one repository, branch HEAD), warm page cache; median of ${RUNS} runs each.
"index / corpus" counts every shard byte except stored file content (trigram keys and postings of contents, paths and blocks;
document records, symbols, paths, the block table, metadata); "shards / corpus" counts everything. Files over
1 MiB (mostly generated register headers) and binaries are not stored, only their paths: hence "stored content" < corpus.

| build | wall | MB/s | peak RSS | index / corpus | shards / corpus | stored content | shards | documents | symbols |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}
| Zoekt, with ctags (notes/peers.md) | 120.6 s | 10.8 | 2.78 GiB | — | 2.12× | | | | |
| Zoekt, no symbols (notes/peers.md) | 64.5 s | 20.1 | 1.64 GiB | — | 2.10× | | | | |

Targets (issue 2): ≥ 15 MB/s with symbols on 2 cores; index without content ≤ 0.5× corpus; peak RSS ≤ 2 GB.`;

console.log(`wrote ${writeReportBlock('index-build', body)}`);
console.log(body);
