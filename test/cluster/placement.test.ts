import t from 'tap';
import { heldBy, partitionOf, Placement, placeMembers } from '../../src/cluster/placement.js';

const PARTITIONS = 64;
const MiB = 1 << 20;
const FLOOR = 256 * MiB;
const names = (count: number) => Array.from({ length: count }, (_, i) => `node-${i}`);
const place = (nodes: readonly string[], replicas: number, bytes: ReadonlyMap<number, number> = new Map(), partitions = PARTITIONS) =>
  Placement.of({ nodes, partitions, replicas, bytes, floorBytes: FLOOR });
/** The bytes each of `nodes` owns under `placement`. */
const loads = (placement: Placement, nodes: readonly string[], bytes: ReadonlyMap<number, number>) =>
  nodes.map((node) => placement.ownedBy(node).reduce((sum, partition) => sum + bytes.get(partition)!, 0));

t.test('a repository has one partition, the same on every call, and names spread over all of them', async (t) => {
  const counts = new Array<number>(PARTITIONS).fill(0);
  for (let i = 0; i < 6400; i++) {
    const partition = partitionOf(`example.com/org/repo-${i}`, PARTITIONS);
    t.equal(partitionOf(`example.com/org/repo-${i}`, PARTITIONS), partition);
    counts[partition]!++;
  }
  t.ok(Math.min(...counts) > 50 && Math.max(...counts) < 150, `100 a partition on average; got ${Math.min(...counts)} to ${Math.max(...counts)}`);
});

t.test('each partition has `replicas` distinct owners, and the nodes share the partitions', async (t) => {
  const nodes = names(3);
  const placement = place(nodes, 2);
  const reversed = place([...nodes].reverse(), 2);
  for (let partition = 0; partition < PARTITIONS; partition++) {
    t.equal(new Set(placement.ownersOf(partition)).size, 2);
    t.same([...reversed.ownersOf(partition)].sort(), [...placement.ownersOf(partition)].sort(), 'the order the nodes are listed in does not matter');
  }
  const owned = nodes.map((node) => placement.ownedBy(node).length);
  t.equal(
    owned.reduce((sum, count) => sum + count, 0),
    PARTITIONS * 2,
  );
  // A share is 64 × 2 / 3 ≈ 42.7; no node goes over 1.25 shares.
  t.ok(Math.max(...owned) <= 53 && Math.min(...owned) >= 32, `each node owns a fair share (${owned.join(', ')} of ${PARTITIONS})`);
  t.same(place(nodes, 7).ownersOf(5), place(nodes, 3).ownersOf(5), 'more replicas than nodes: every node');
  t.same(place(names(4), 1, new Map(), 4).ownedBy('node-2').length, 1, 'as many partitions as nodes: one each');
});

t.test('a node joining takes about its share, from the others; the nodes before it move little among themselves', async (t) => {
  const before = place(names(4), 2);
  const after = place(names(5), 2);
  let gained = 0;
  let shuffled = 0;
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const now = after.ownersOf(partition).filter((node) => !before.ownersOf(partition).includes(node));
    gained += now.filter((node) => node === 'node-4').length;
    shuffled += now.filter((node) => node !== 'node-4').length;
  }
  t.equal(gained, after.ownedBy('node-4').length, 'the new node gains every partition it owns');
  // Its share is 64 × 2 / 5 = 25.6 replicas.
  t.ok(gained >= 20 && gained <= 32, `the new node took ${gained} of ${PARTITIONS * 2} replicas`);
  t.ok(shuffled <= 8, `${shuffled} replicas moved between the nodes that were there`);
  t.same(place(names(4), 2), before, 'the node leaving again gives the old owners back');
});

t.test('the bytes the nodes hold are balanced, not only the counts', async (t) => {
  // Sizes from 1 to 64 floors, most of them small, as repositories' are (a fixed pseudo-random sequence).
  let seed = 1;
  const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const bytes = new Map(Array.from({ length: PARTITIONS }, (_, partition) => [partition, Math.round(FLOOR * 2 ** (6 * next() ** 2))]));
  const total = [...bytes.values()].reduce((sum, size) => sum + size, 0);
  for (const [count, replicas] of [
    [4, 1],
    [5, 2],
    [8, 2],
  ] as const) {
    const nodes = names(count);
    const share = (total * replicas) / count;
    const fullest = (placement: Placement) => Math.max(...loads(placement, nodes, bytes)) / share;
    const balanced = fullest(place(nodes, replicas, bytes));
    const byCount = fullest(place(nodes, replicas));
    // The bound (1.15 shares) on weights in steps of 2^(1/8): at most 1.15 × 1.09 shares of bytes.
    t.ok(balanced <= 1.25, `${count} nodes, ${replicas} replicas: by bytes, the fullest node holds ${balanced.toFixed(2)} shares`);
    t.ok(byCount > 1.25, `by count alone, ${byCount.toFixed(2)}`);
  }
});

t.test('partitions under the floor are placed by count, and growth within a step moves nothing', async (t) => {
  const nodes = names(3);
  const small = new Map(Array.from({ length: PARTITIONS }, (_, partition) => [partition, (partition + 1) * MiB]));
  t.same(place(nodes, 2, small), place(nodes, 2), 'every partition under the floor: as if no size were known');
  const sized = new Map(Array.from({ length: PARTITIONS }, (_, partition) => [partition, FLOOR * (1 + (partition % 7))]));
  const grown = new Map([...sized].map(([partition, size]) => [partition, size + MiB]));
  t.same(place(nodes, 2, grown), place(nodes, 2, sized), 'each partition a MiB larger, none over a step: the same placement');
});

t.test('a partition of unknown size weighs the mean of the known; a member says the bytes of what it serves', async (t) => {
  const nodes = names(4);
  const known = new Map([
    [0, 32 * FLOOR],
    [1, 8 * FLOOR],
    [2, 8 * FLOOR],
  ]);
  // Every other partition weighs 16 floors, the mean: as if all were known at that size.
  const asMean = new Map(Array.from({ length: PARTITIONS }, (_, partition) => [partition, known.get(partition) ?? 16 * FLOOR]));
  t.same(place(nodes, 1, known), place(nodes, 1, asMean));
  t.notSame(place(nodes, 1, known), place(nodes, 1), 'the sizes known count');
  const members = [
    { serving: [0, 1], bytes: [32 * FLOOR - 5, 8 * FLOOR] },
    { serving: [0, 2], bytes: [32 * FLOOR, 8 * FLOOR] },
    { serving: [7], bytes: [] },
  ];
  const config = { partitions: PARTITIONS, replicas: 1, placementFloorBytes: FLOOR };
  t.same(placeMembers(nodes, members, config), place(nodes, 1, known), "each partition's largest size said by a member");
});

t.test('a partition that moved stays held by its old node until a new owner serves it', async (t) => {
  const owners = (partition: number) => (partition === 3 ? ['b', 'c'] : ['a', 'b']);
  // a served 3 before; its new owners b and c do not serve it yet: a keeps it.
  t.same(heldBy('a', [1, 2], [2, 3], new Map([['b', [1, 2]]]), owners), [1, 2, 3]);
  // c serves it now: a lets it go.
  t.same(heldBy('a', [1, 2], [2, 3], new Map([['c', [3]]]), owners), [1, 2]);
  // A partition a held but never served is not kept.
  t.same(heldBy('a', [1], [], new Map(), owners), [1]);
});
