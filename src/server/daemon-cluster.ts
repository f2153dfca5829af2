/** What the daemon does as a node of a cluster (docs/cluster.md): join it, share repository ids, index its share. */
import fs from 'node:fs';
import type { OpenedAuth } from '../auth/open.js';
import { confirmApplied } from '../cluster/confirm-applied.js';
import { ClusterNode } from '../cluster/node.js';
import type { Config, RepositoryConfig } from '../config/config.js';
import { readManifest } from '../index/manifest.js';
import { adoptRepositoryIds, assignRepositoryIds, formerNames } from '../indexer/repository-ids.js';
import type { Logger } from '../obs/logger.js';

/** Watches the cluster (the node joins once it listens) and has revocations confirmed by the other nodes. */
export async function startClusterNode(config: Config, auth: OpenedAuth, logger: Logger, onHeld: () => void): Promise<ClusterNode> {
  const node = await ClusterNode.start({ config: config.cluster!, logger, onHeld });
  auth.store.log.confirmNarrowingWith((revision) => confirmApplied(node, revision, logger));
  return node;
}

/**
 * Gives every repository of `config` the cluster's id (cluster/repository-ids.ts), into `ids` and this node's id
 * file, before the indexer sees a new name: grants and scoped tokens, shared by the nodes, name repositories by id.
 */
export async function shareRepositoryIds(node: ClusterNode, config: Config, ids: Map<string, number>): Promise<void> {
  const names = config.repos.map((repo) => repo.name);
  if (names.every((name) => ids.has(name))) return;
  const manifest = readManifest(config.dataDir);
  const renamed = formerNames(config.repos);
  const local = assignRepositoryIds(config.dataDir, names, manifest, renamed);
  const shared = await node.repositoryIds(names, local, renamed);
  adoptRepositoryIds(config.dataDir, shared, manifest);
  for (const [name, id] of shared) ids.set(name, id);
}

/** What the indexer indexes: in a cluster, the repositories of the partitions this node holds (a connection's once fetched here). */
export function heldConfig(config: Config, cluster: ClusterNode | null): Config {
  const here = (repo: RepositoryConfig) => cluster!.holds(repo.name) && (repo.connection === undefined || fs.existsSync(repo.path));
  return cluster ? { ...config, repos: config.repos.filter(here) } : config;
}

/** The other nodes serving each of `names`: the indexer copies a repository's shards from one of them (indexer/shard-copy.ts). */
export function shardSources(cluster: ClusterNode) {
  return (names: readonly string[]) => ({
    key: cluster.peerKey,
    nodes: Object.fromEntries(names.map((name) => [name, cluster.peersServing(name).map((member) => member.url)])),
  });
}
