/**
 * Where a cluster keeps each repository: a repository hashes to one of a fixed number of virtual partitions, and
 * a partition is held by the `replicas` live nodes that rank highest for it (rendezvous hashing: a node joining
 * or leaving moves only the partitions it gains or loses). Pure functions of names, the same on every node.
 */
import { createHash } from 'node:crypto';

/** The partition of the repository `name`, of `partitions`. */
export function partitionOf(name: string, partitions: number): number {
  return createHash('sha256').update(name).digest().readUInt32BE(0) % partitions;
}

/** The nodes (of `nodes`) that own `partition`: the `replicas` that rank highest, best first. */
export function ownersOf(partition: number, nodes: readonly string[], replicas: number): string[] {
  return nodes
    .map((node) => ({ node, weight: weight(partition, node) }))
    .sort((a, b) => b.weight - a.weight || (a.node < b.node ? -1 : 1))
    .slice(0, replicas)
    .map(({ node }) => node);
}

/** The partitions of `partitions` that `node` owns among `nodes`. */
export function ownedBy(node: string, nodes: readonly string[], partitions: number, replicas: number): number[] {
  const owned: number[] = [];
  for (let partition = 0; partition < partitions; partition++) if (ownersOf(partition, nodes, replicas).includes(node)) owned.push(partition);
  return owned;
}

/**
 * The partitions `node` holds: those it owns, and those it serves that no other owner serves yet (a moved partition
 * stays served by its old owner until a new one has indexed it). `serving`: what each live node serves.
 */
export function heldBy(
  node: string,
  owned: readonly number[],
  servedBefore: readonly number[],
  serving: ReadonlyMap<string, readonly number[]>,
  owners: (partition: number) => readonly string[],
): number[] {
  const held = new Set(owned);
  for (const partition of servedBefore) {
    if (held.has(partition)) continue;
    const servedByOwner = owners(partition).some((owner) => owner !== node && serving.get(owner)?.includes(partition));
    if (!servedByOwner) held.add(partition);
  }
  return [...held].sort((a, b) => a - b);
}

/** A 48-bit weight of `node` for `partition`. */
function weight(partition: number, node: string): number {
  return createHash('sha256').update(`${partition}\0${node}`).digest().readUIntBE(0, 6);
}
