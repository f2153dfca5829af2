/** The layout of a data directory that more than one layer needs. */
import path from 'node:path';

/** Where a data directory keeps the shard files (the manifest, manifest.ts, names them). */
export function shardDirectory(dataDir: string): string {
  return path.join(dataDir, 'shards');
}

/** Where a data directory keeps its durable state: the state log, the audit log, the instance key and the repository ids. */
export function stateDirectory(dataDir: string): string {
  return path.join(dataDir, 'state');
}
