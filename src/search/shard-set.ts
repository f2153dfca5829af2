/**
 * The shards of a data directory as the manifest lists them, opened (mapped)
 * for searching. A shard that fails to open is counted, not fatal.
 */
import path from 'node:path';
import { Shard } from '../index/shard-reader.js';
import { readManifest } from '../index/manifest.js';
import { shardDirectory } from '../index/data-directory.js';

export interface ShardSet {
  shards: Shard[];
  /** Shard files that could not be opened (missing, corrupt). */
  failures: { file: string; error: Error }[];
}

/**
 * Opens every shard of the manifest. Checksums of bulk sections are not
 * re-verified here (the indexer wrote and fsynced them); structure and
 * bounds always are.
 */
export function openShardSet(dataDir: string): ShardSet {
  const manifest = readManifest(dataDir);
  const set: ShardSet = { shards: [], failures: [] };
  for (const name of Object.keys(manifest.repositories).sort()) {
    for (const file of manifest.repositories[name]!.shards) {
      const filePath = path.join(shardDirectory(dataDir), file);
      try {
        set.shards.push(Shard.open(filePath, { verify: 'structure' }));
      } catch (error) {
        set.failures.push({ file: filePath, error: error as Error });
      }
    }
  }
  return set;
}
