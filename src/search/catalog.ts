/**
 * What the daemon can search right now: the configured repositories joined
 * with one manifest generation (their shard files, sizes and index state).
 * Replaced as a whole when the indexer publishes a new generation.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config, RepositoryConfig } from '../config/config.js';
import { readManifest, type RepositoryEntry } from '../indexer/manifest.js';
import { SHARD_DIRECTORY } from '../indexer/run-index.js';

export interface ShardFile {
  path: string;
  bytes: number;
}

export interface CatalogRepository {
  config: RepositoryConfig;
  /** The manifest entry; absent until the repository was indexed once. */
  entry?: RepositoryEntry;
  shards: ShardFile[];
}

export interface Catalog {
  generation: number;
  /** In configuration order. */
  repositories: CatalogRepository[];
}

export function loadCatalog(config: Config): Catalog {
  const manifest = readManifest(config.dataDir);
  const shardDirectory = path.join(config.dataDir, SHARD_DIRECTORY);
  const repositories = config.repos.map((repo) => {
    const entry = manifest.repositories[repo.name];
    const shards = (entry?.shards ?? []).map((file) => {
      const shardPath = path.join(shardDirectory, file);
      return { path: shardPath, bytes: fileSize(shardPath) };
    });
    return entry ? { config: repo, entry, shards } : { config: repo, shards };
  });
  return { generation: manifest.generation, repositories };
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // a missing shard is reported by the search that tries to open it
  }
}

/**
 * Splits shard files into task groups of about `targetBytes` each, in order:
 * a large shard is a group of its own, small ones share one, so many small
 * repositories do not cost a task each.
 */
export function groupShards(shards: readonly ShardFile[], targetBytes: number): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const shard of shards) {
    if (current.length > 0 && bytes + shard.bytes > targetBytes) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(shard.path);
    bytes += shard.bytes;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
