import t from 'tap';
import { heldBy, ownedBy, ownersOf, partitionOf } from '../../src/cluster/placement.js';

const PARTITIONS = 64;
const names = (count: number) => Array.from({ length: count }, (_, i) => `node-${i}`);

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
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const owners = ownersOf(partition, nodes, 2);
    t.equal(new Set(owners).size, 2);
    t.same(ownersOf(partition, [...nodes].reverse(), 2), owners, 'the order the nodes are listed in does not matter');
  }
  const owned = nodes.map((node) => ownedBy(node, nodes, PARTITIONS, 2).length);
  t.equal(
    owned.reduce((sum, count) => sum + count, 0),
    PARTITIONS * 2,
  );
  t.ok(Math.min(...owned) >= 32, `each node owns a fair share (${owned.join(', ')} of ${PARTITIONS})`);
  t.same(ownersOf(5, nodes, 7), ownersOf(5, nodes, 3), 'more replicas than nodes: every node');
});

t.test('a node joining takes partitions only for itself; a node leaving moves only its own', async (t) => {
  const before = names(4);
  const after = names(5);
  let moved = 0;
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const old = ownersOf(partition, before, 2);
    const now = ownersOf(partition, after, 2);
    const gained = now.filter((node) => !old.includes(node));
    t.ok(
      gained.every((node) => node === 'node-4'),
      'only the new node gains',
    );
    moved += gained.length;
    // Removing node-4 again gives the old owners back.
    t.same(ownersOf(partition, before, 2), old);
  }
  t.ok(moved > 0 && moved < PARTITIONS, `the new node took ${moved} of ${PARTITIONS * 2} replicas`);
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
