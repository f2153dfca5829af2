/**
 * What the daemon can search right now: the configured repositories joined
 * with one manifest generation (their shard files, sizes and index state).
 * Replaced as a whole when the indexer publishes a new generation.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config, RepositoryConfig } from '../config/config.js';
import { readManifest, type RepositoryEntry } from '../index/manifest.js';
import { shardDirectory } from '../index/data-directory.js';

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

/** The repository named `name` in `catalog`, if it is configured. */
export function listedRepository(catalog: Catalog, name: string): CatalogRepository | undefined {
  return catalog.repositories.find((repo) => repo.config.name === name);
}

export function loadCatalog(config: Config): Catalog {
  const manifest = readManifest(config.dataDir);
  const directory = shardDirectory(config.dataDir);
  const repositories = config.repos.map((repo) => {
    const entry = manifest.repositories[repo.name];
    const shards = (entry?.shards ?? []).map((file) => {
      const shardPath = path.join(directory, file);
      return { path: shardPath, bytes: fileSize(shardPath) };
    });
    return entry ? { config: repo, entry, shards } : { config: repo, shards };
  });
  return { generation: manifest.generation, repositories };
}

/** Every shard file of `catalog`, repository by repository. */
export function shardFiles(catalog: Catalog): string[] {
  return catalog.repositories.flatMap((repo) => repo.shards.map((shard) => shard.path));
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // a missing shard is reported by the search that tries to open it
  }
}

/**
 * Splits shard files into at most `groups` task groups of about equal size
 * (each shard to the group with the fewest bytes so far, largest shards
 * first), each group keeping the shards' order. One task per worker and
 * search: every task costs messages and copies on the front end's thread,
 * which is the bottleneck under load, while a worker searching several shards
 * in a row loses nothing.
 */
export function groupShards(shards: readonly ShardFile[], groups: number): string[][] {
  const count = Math.max(1, Math.min(groups, shards.length));
  const bytes = new Array<number>(count).fill(0);
  const groupOf = new Map<ShardFile, number>();
  for (const shard of [...shards].sort((a, b) => b.bytes - a.bytes)) {
    const lightest = bytes.indexOf(Math.min(...bytes));
    groupOf.set(shard, lightest);
    bytes[lightest]! += shard.bytes;
  }
  const result: string[][] = Array.from({ length: count }, () => []);
  for (const shard of shards) result[groupOf.get(shard)!]!.push(shard.path);
  return result.filter((group) => group.length > 0);
}
