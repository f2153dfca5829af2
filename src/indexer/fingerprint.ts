/** What in the config and the format shapes a repository's shards: a change to it rebuilds them even when no branch moved. */
import { createHash } from 'node:crypto';
import type { Config, RepositoryConfig } from '../config/config.js';
import { SHARD_FORMAT_VERSION } from '../index/format.js';

/** The fingerprint a manifest entry records (index/manifest.ts). */
export function repositoryFingerprint(config: Config, repo: RepositoryConfig): string {
  return fingerprint(config, repo);
}

/**
 * The same without where the repository is on this node (a connection's mirror is under each node's data
 * directory): two nodes whose place-free fingerprints and commits agree build the same shards.
 */
export function placeFreeFingerprint(config: Config, repo: RepositoryConfig): string {
  const { path: _where, ...placeFree } = repo;
  return fingerprint(config, placeFree);
}

function fingerprint(config: Config, repo: Omit<RepositoryConfig, 'path'>): string {
  const { maxFileBytes, ctagsCommand } = config.index;
  return createHash('sha256')
    .update(JSON.stringify({ format: SHARD_FORMAT_VERSION, repo, maxFileBytes, symbols: ctagsCommand !== '' }))
    .digest('hex')
    .slice(0, 16);
}
