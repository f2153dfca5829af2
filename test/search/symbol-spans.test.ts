import t from 'tap';
import type { DocumentSymbol } from '../../src/index/model.js';
import { SymbolSpans } from '../../src/search/symbol-spans.js';

/** A deterministic pseudo-random sequence (the same cases on every run). */
function generator(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % below;
  };
}

/** Definitions by start, some sharing a start, some nested, lengths 1–40. */
function definitions(random: (below: number) => number, count: number): DocumentSymbol[] {
  const symbols: DocumentSymbol[] = [];
  for (let i = 0; i < count; i++) {
    const start = random(2_000);
    symbols.push({ start, end: start + 1 + random(40), kind: 'function' });
  }
  return symbols.sort((a, b) => a.start - b.start);
}

t.test('containing finds the first definition in start order whose name holds the range', async (t) => {
  const random = generator(7);
  let inside = 0;
  for (let round = 0; round < 50; round++) {
    const symbols = definitions(random, random(200));
    const spans = new SymbolSpans(symbols);
    for (let i = 0; i < 200; i++) {
      const start = random(2_100);
      const end = start + 1 + random(20);
      const expected = symbols.find((symbol) => symbol.start <= start && end <= symbol.end);
      if (spans.containing(start, end) !== expected) {
        t.equal(spans.containing(start, end), expected, `round ${round}: [${start}, ${end})`);
        return;
      }
      if (expected) inside++;
    }
  }
  t.ok(inside > 100, `10,000 ranges answered as by a pass over every definition, ${inside} of them inside one`);
  t.equal(new SymbolSpans([]).containing(0, 1), undefined, 'no definitions');
});

t.test('overlapping finds every definition whose name overlaps a range, in start order', async (t) => {
  const random = generator(11);
  let found = 0;
  for (let round = 0; round < 100; round++) {
    const symbols = definitions(random, random(300));
    const spans = new SymbolSpans(symbols);
    // Ranges by start, possibly overlapping each other (several patterns' ranges of one file).
    const ranges: [number, number][] = [];
    for (let i = random(30); i > 0; i--) {
      const start = random(2_100);
      ranges.push([start, start + 1 + random(60)]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    // A window of them, as a chunk asks for its own ranges among the file's.
    const from = random(ranges.length + 1);
    const to = from + random(ranges.length - from + 1);
    const window = ranges.slice(from, to);
    const expected = symbols.filter((symbol) => window.some(([start, end]) => start < symbol.end && symbol.start < end));
    const actual = spans.overlapping(ranges.flat(), from, to);
    if (actual.length !== expected.length || actual.some((symbol, i) => symbol !== expected[i])) {
      t.same(actual, expected, `round ${round}`);
      return;
    }
    found += actual.length;
  }
  t.ok(found > 100, `100 range lists answered as by a pass over every definition, ${found} overlaps`);
});
