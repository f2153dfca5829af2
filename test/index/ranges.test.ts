import t from 'tap';
import { byStart, forEachOverlapping } from '../../src/index/ranges.js';

/** A small deterministic generator: the cases are the same on every run. */
function generator(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state % below;
  };
}

t.test('forEachOverlapping visits, in item order and once each, exactly the items that overlap a range', async (t) => {
  const next = generator(7);
  let disagreements = 0;
  let visits = 0;
  for (let trial = 0; trial < 20_000; trial++) {
    const size = 1 + next(80);
    const items = Array.from({ length: next(14) }, () => {
      const start = next(size);
      return [start, start + next(10)] as const;
    }).sort((a, b) => a[0] - b[0]);
    const longest = Math.max(0, ...items.map(([start, end]) => end - start)) + next(3);
    const flat: number[] = [];
    for (let ranges = next(8); ranges > 0; ranges--) {
      const start = next(size);
      flat.push(start, start + next(12));
    }
    const sorted = byStart(flat);
    const pairs = sorted.length / 2;
    const from = next(pairs + 1);
    const to = from + next(pairs - from + 1);
    const first = next(items.length + 1);
    const end = first + next(items.length - first + 1);
    const visited: number[] = [];
    const spans = { first, end, longest, startOf: (i: number) => items[i]![0], endOf: (i: number) => items[i]![1] };
    forEachOverlapping(spans, sorted, from, to, (i) => visited.push(i));
    const expected: number[] = [];
    for (let i = first; i < end; i++) {
      const [start, stop] = items[i]!;
      let overlaps = false;
      for (let r = from; r < to; r++) if (start < sorted[2 * r + 1]! && stop > sorted[2 * r]!) overlaps = true;
      if (overlaps) expected.push(i);
    }
    if (visited.join() !== expected.join()) disagreements++;
    visits += expected.length;
  }
  t.equal(disagreements, 0, 'every trial agrees with checking each item against each range');
  t.ok(visits > 10_000, `the trials overlap often (${visits} items visited)`);
});
