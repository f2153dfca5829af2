/** What `trawl cluster status` reports: the live members, what each owns and serves, and the partitions short of replicas. */
import type { ClusterConfig, RepositoryConfig } from '../config/config.js';
import { openEtcd, type EtcdKeys } from './etcd.js';
import { parseMember, MEMBERS_PREFIX, type Member } from './membership.js';
import { partitionOf, placeMembers } from './placement.js';

export interface ClusterStatus {
  partitions: number;
  replicas: number;
  /** Each live member: the partitions it owns and serves, and the bytes of those it serves (as it says). */
  members: { node: string; url: string; owns: number; serves: number; bytes: number }[];
  /** Partitions served by fewer than `replicas` live members, with those that serve them. */
  underReplicated: { partition: number; servedBy: string[]; owners: string[] }[];
  /** Configured repositories whose partition no live member serves. */
  unserved: string[];
}

/** The cluster as etcd holds it now; rejects when etcd cannot be reached. */
export async function readClusterStatus(config: ClusterConfig, repositories: readonly RepositoryConfig[]): Promise<ClusterStatus> {
  const etcd = await openEtcd(config);
  try {
    return await clusterStatusIn(etcd, config, repositories);
  } finally {
    etcd.close();
  }
}

/** The cluster as `etcd` holds it now. */
export async function clusterStatusIn(etcd: EtcdKeys, config: ClusterConfig, repositories: readonly RepositoryConfig[]): Promise<ClusterStatus> {
  const listed = await etcd.getAll().prefix(MEMBERS_PREFIX).strings();
  const members = Object.entries(listed)
    .flatMap(([key, value]) => parseMember(key.slice(MEMBERS_PREFIX.length), value) ?? [])
    .sort((a, b) => (a.node < b.node ? -1 : 1));
  return clusterStatus(config, members, repositories);
}

export function clusterStatus(config: ClusterConfig, members: readonly Member[], repositories: readonly RepositoryConfig[]): ClusterStatus {
  const { partitions, replicas } = config;
  const nodes = members.map((member) => member.node);
  const placement = placeMembers(nodes, members, config);
  const underReplicated: ClusterStatus['underReplicated'] = [];
  const served = new Set<number>();
  for (let partition = 0; partition < partitions; partition++) {
    const servedBy = members.filter((member) => member.serving.includes(partition)).map((member) => member.node);
    if (servedBy.length > 0) served.add(partition);
    if (servedBy.length < Math.min(replicas, nodes.length) || servedBy.length === 0)
      underReplicated.push({ partition, servedBy, owners: [...placement.ownersOf(partition)] });
  }
  return {
    partitions,
    replicas,
    members: members.map((member) => ({
      node: member.node,
      url: member.url,
      owns: placement.ownedBy(member.node).length,
      serves: member.serving.length,
      bytes: member.bytes.reduce((sum, size) => sum + size, 0),
    })),
    underReplicated,
    unserved: repositories.filter((repository) => !served.has(partitionOf(repository.name, partitions))).map((repository) => repository.name),
  };
}
