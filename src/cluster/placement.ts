/**
 * Where a cluster keeps each repository: a repository hashes to one of a fixed number of virtual partitions, and
 * each partition is placed on `replicas` live nodes by rendezvous hashing with bounded loads, balancing the bytes
 * the nodes hold (docs/cluster.md, "Placement"). Pure functions of names and sizes, the same on every node.
 */
import { createHash } from 'node:crypto';

/** No node takes a partition that would bring it over this much more than its share of the bytes (unless it holds none). */
const LOAD_BOUND = 1.15;
/** A partition's weight steps by eighth powers of two (×1000), so that a partition's growth moves nothing until it crosses a step. */
const STEPS = [1000, 1091, 1189, 1297, 1414, 1542, 1682, 1834];

/** The partition of the repository `name`, of `partitions`. */
export function partitionOf(name: string, partitions: number): number {
  return createHash('sha256').update(name).digest().readUInt32BE(0) % partitions;
}

export interface PlacementInput {
  /** The live nodes, in any order. */
  nodes: readonly string[];
  partitions: number;
  replicas: number;
  /** The bytes of each partition whose size is known (as served); the others weigh the mean of the known. */
  bytes: ReadonlyMap<number, number>;
  /** A partition smaller than this weighs as much as one of this size: below it, placement balances counts. */
  floorBytes: number;
}

/** Who owns each partition, and what each node owns. */
export class Placement {
  private constructor(private readonly ownersByPartition: readonly (readonly string[])[]) {}

  /**
   * Places every partition, heaviest first, on the `replicas` nodes that rank highest for it among those it would
   * not bring over LOAD_BOUND × their share of the total weight; the least loaded others when too few are left.
   */
  static of({ nodes, partitions, replicas, bytes, floorBytes }: PlacementInput): Placement {
    const weights = partitionWeights(partitions, bytes, floorBytes);
    const copies = Math.min(replicas, nodes.length);
    const bound = (LOAD_BOUND * copies * weights.reduce((sum, weight) => sum + weight, 0)) / Math.max(1, nodes.length);
    const load = new Map(nodes.map((node) => [node, 0]));
    const owners: string[][] = new Array(partitions);
    const heaviestFirst = weights.map((weight, partition) => ({ weight, partition })).sort((a, b) => b.weight - a.weight || a.partition - b.partition);
    for (const { weight, partition } of heaviestFirst) {
      const ranked = rank(partition, nodes);
      const chosen = ranked.filter((node) => load.get(node) === 0 || load.get(node)! + weight <= bound).slice(0, copies);
      const others = ranked.filter((node) => !chosen.includes(node)).sort((a, b) => load.get(a)! - load.get(b)!);
      chosen.push(...others.slice(0, copies - chosen.length));
      for (const node of chosen) load.set(node, load.get(node)! + weight);
      owners[partition] = chosen;
    }
    return new Placement(owners);
  }

  /** The nodes that own `partition`. */
  ownersOf(partition: number): readonly string[] {
    return this.ownersByPartition[partition] ?? [];
  }

  /** The partitions `node` owns, in order. */
  ownedBy(node: string): number[] {
    const owned: number[] = [];
    this.ownersByPartition.forEach((owners, partition) => owners.includes(node) && owned.push(partition));
    return owned;
  }
}

/**
 * The placement of `config`'s partitions on `nodes`, each partition weighing the most bytes any of `members` says it
 * serves of it.
 */
export function placeMembers(
  nodes: readonly string[],
  members: readonly { serving: readonly number[]; bytes: readonly number[] }[],
  config: { partitions: number; replicas: number; placementFloorBytes: number },
): Placement {
  const bytes = new Map<number, number>();
  for (const { serving, bytes: sizes } of members) sizes.forEach((size, i) => bytes.set(serving[i]!, Math.max(size, bytes.get(serving[i]!) ?? 0)));
  return Placement.of({ nodes, partitions: config.partitions, replicas: config.replicas, bytes, floorBytes: config.placementFloorBytes });
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

/** Each partition's weight: its bytes (the mean of the known for an unknown one) in steps of `floorBytes`, at least one step. */
function partitionWeights(partitions: number, bytes: ReadonlyMap<number, number>, floorBytes: number): number[] {
  const known = [...bytes].filter(([partition]) => partition < partitions).map(([, size]) => stepWeight(size / floorBytes));
  const unknown = known.length === 0 ? STEPS[0]! : Math.round(known.reduce((sum, weight) => sum + weight, 0) / known.length);
  return Array.from({ length: partitions }, (_, partition) => {
    const size = bytes.get(partition);
    return size === undefined ? unknown : stepWeight(size / floorBytes);
  });
}

/** The least step weight (about 1000 · 2^(k/8), integral) at or above `floors` × 1000. */
function stepWeight(floors: number): number {
  for (let step = 0; ; step++) {
    const weight = STEPS[step % 8]! * 2 ** (step >> 3);
    if (weight >= floors * 1000 || step >= 512) return weight;
  }
}

/** `nodes`, the highest rendezvous weight for `partition` first. */
function rank(partition: number, nodes: readonly string[]): string[] {
  return nodes
    .map((node) => ({ node, weight: weight(partition, node) }))
    .sort((a, b) => b.weight - a.weight || (a.node < b.node ? -1 : 1))
    .map(({ node }) => node);
}

/** A 48-bit weight of `node` for `partition`. */
function weight(partition: number, node: string): number {
  return createHash('sha256').update(`${partition}\0${node}`).digest().readUIntBE(0, 6);
}
