/** What the daemon does as a node of a cluster (docs/cluster.md): join it, share repository ids, index its share. */
import fs from 'node:fs';
import type { OpenedAuth } from '../auth/open.js';
import { confirmApplied } from '../cluster/confirm-applied.js';
import { readLastKnown, rememberCluster } from '../cluster/last-known.js';
import { ClusterNode } from '../cluster/node.js';
import type { Config, RepositoryConfig } from '../config/config.js';
import { readManifest } from '../index/manifest.js';
import { adoptRepositoryIds, assignRepositoryIds, formerNames } from '../indexer/repository-ids.js';
import type { Logger } from '../obs/logger.js';

/**
 * Watches the cluster (the node joins once it listens) and has revocations confirmed by the other nodes. The partitions
 * held are remembered (cluster/last-known.ts): a node that cannot reach etcd as it starts holds those.
 */
export async function startClusterNode(config: Config, auth: OpenedAuth, logger: Logger, onHeld: () => void): Promise<ClusterNode> {
  const onHeldRemembered = (held: readonly number[]) => {
    try {
      rememberCluster(config.dataDir, { held: [...held] });
    } catch (error) {
      logger.warn({ err: error }, 'cluster: the partitions held could not be remembered; a start without etcd would hold those of before');
    }
    onHeld();
  };
  const lastHeld = () => readLastKnown(config.dataDir)?.held ?? null;
  const node = await ClusterNode.start({ config: config.cluster!, logger, onHeld: onHeldRemembered, lastHeld });
  auth.store.log.confirmNarrowingWith((revision) => confirmApplied(node, revision, logger));
  return node;
}

/**
 * Gives every repository of `config` the cluster's id (cluster/repository-ids.ts), into `ids` and this node's id
 * file, before the indexer sees a new name: grants and scoped tokens, shared by the nodes, name repositories by id.
 * While the node waits for etcd, the names get the ids it last knew, and a name it knew none of waits for etcd.
 */
export async function shareRepositoryIds(node: ClusterNode, config: Config, ids: Map<string, number>): Promise<void> {
  const names = config.repos.map((repo) => repo.name);
  if (names.every((name) => ids.has(name))) return;
  if (node.waitingForEtcd) {
    const known = readLastKnown(config.dataDir)?.repositoryIds ?? {};
    for (const name of names) if (Object.hasOwn(known, name)) ids.set(name, known[name]!);
    return;
  }
  const manifest = readManifest(config.dataDir);
  const renamed = formerNames(config.repos);
  const local = assignRepositoryIds(config.dataDir, names, manifest, renamed);
  const shared = await node.repositoryIds(names, local, renamed);
  adoptRepositoryIds(config.dataDir, shared, manifest);
  for (const [name, id] of shared) ids.set(name, id);
  rememberCluster(config.dataDir, { repositoryIds: Object.fromEntries(ids) });
}

/** The repositories of `config` a node lists and indexes: in a cluster, those given the cluster's id (`ids`). */
export function identifiedConfig(config: Config, cluster: ClusterNode | null, ids: ReadonlyMap<string, number>): Config {
  return cluster ? { ...config, repos: config.repos.filter((repo) => ids.has(repo.name)) } : config;
}

/** What the indexer indexes: in a cluster, the repositories of the partitions this node holds (a connection's once fetched here). */
export function heldConfig(config: Config, cluster: ClusterNode | null, ids: ReadonlyMap<string, number>): Config {
  if (!cluster) return config;
  const identified = identifiedConfig(config, cluster, ids);
  const here = (repo: RepositoryConfig) => cluster.holds(repo.name) && (repo.connection === undefined || fs.existsSync(repo.path));
  return { ...identified, repos: identified.repos.filter(here) };
}

/** The other nodes serving each of `names`: the indexer copies a repository's shards from one of them (indexer/shard-copy.ts). */
export function shardSources(cluster: ClusterNode) {
  return (names: readonly string[]) => ({
    key: cluster.peerKey,
    nodes: Object.fromEntries(names.map((name) => [name, cluster.peersServing(name).map((member) => member.url)])),
  });
}
