/**
 * One measured index build of the Linux corpus, in its own process so peak
 * RSS is its own. Prints one JSON Measurement on stdout.
 *   node dist/bench/index-build-run.js CORPUS_REPO CORPUS_BYTES symbols|plain
 */
import { shardDirectory } from '../src/index/data-directory.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validateConfig } from '../src/config/config.js';
import { runIndex } from '../src/indexer/run-index.js';
import { readManifest } from '../src/index/manifest.js';
import { Shard } from '../src/index/shard-reader.js';
import { Section } from '../src/index/format.js';

export interface Measurement {
  variant: string;
  seconds: number;
  sourceBytes: number;
  megabytesPerSecond: number;
  peakRssMiB: number;
  shards: number;
  documents: number;
  symbols: number;
  indexBytesWithoutContent: number;
  shardBytes: number;
}

const [repo, variant] = process.argv.slice(2);
if (!repo || (variant !== 'symbols' && variant !== 'plain')) {
  console.error('usage: index-build-run.js CORPUS_REPO symbols|plain');
  process.exit(2);
}
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-index-'));
try {
  const config = validateConfig(
    { dataDir, repos: [{ name: 'kernel.org/linux', path: repo }], index: { ctagsCommand: variant === 'symbols' ? 'ctags' : '' } },
    'bench',
  );
  const started = performance.now();
  const [outcome] = await runIndex(config);
  const seconds = (performance.now() - started) / 1000;
  if (outcome?.status !== 'indexed') throw new Error(`indexing failed: ${JSON.stringify(outcome)}`);
  const entry = readManifest(dataDir).repositories['kernel.org/linux']!;
  let shardBytes = 0;
  let contentBytes = 0;
  let symbols = 0;
  for (const file of entry.shards) {
    const shard = Shard.open(path.join(shardDirectory(dataDir), file), { verify: 'structure' });
    shardBytes += shard.bytes.length;
    contentBytes += shard.sectionLength(Section.contents);
    symbols += shard.sectionLength(Section.symbols) / 20;
  }
  const measurement: Measurement = {
    variant,
    seconds,
    sourceBytes: outcome.sourceBytes,
    megabytesPerSecond: outcome.sourceBytes / 1e6 / seconds,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    shards: entry.shards.length,
    documents: outcome.documents,
    symbols,
    indexBytesWithoutContent: shardBytes - contentBytes,
    shardBytes,
  };
  console.log(JSON.stringify(measurement));
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
