import { OPTIONS } from '../../src/config/options.js';
import { Placement } from '../../src/cluster/placement.js';

/** The one owner (one replica) of `partition` of `partitions` among `nodes`, for partitions under the default placement floor (test repositories are). */
export function ownerOf(partition: number, nodes: readonly string[], partitions: number): string {
  const floorBytes = OPTIONS['cluster.placementFloorBytes'].default;
  return Placement.of({ nodes, partitions, replicas: 1, bytes: new Map(), floorBytes }).ownersOf(partition)[0]!;
}
