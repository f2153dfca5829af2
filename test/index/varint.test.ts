import t from 'tap';
import { decodeMaskedPostings, intersectMaskedPostings } from '../../src/index/varint.js';

/** A posting list stream (docs/index-format.md, CTRP): each gap − 1 as an LEB128 varint, followed by the document's mask byte. */
function encodePostings(postings: [number, number][]): number[] {
  const bytes: number[] = [];
  let previous = -1;
  for (const [value, mask] of postings) {
    let gap = value - previous - 1;
    for (; gap >= 0x80; gap = Math.floor(gap / 0x80)) bytes.push((gap % 0x80) | 0x80);
    bytes.push(gap, mask);
    previous = value;
  }
  return bytes;
}

const decode = (stream: number[], need = 0) => [...decodeMaskedPostings(Uint8Array.from(stream), 0, stream.length, 'CTRP', need)];

t.test('posting lists round-trip, one-byte gaps and five-byte values alike', async (t) => {
  const cases = [[], [0], [5, 6, 7, 200, 201], [127, 255, 16_384 + 255, 2 ** 21 + 300, 2 ** 28 + 5, 2 ** 32 - 2, 2 ** 32 - 1]];
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const walk: number[] = [];
  for (let value = -1, i = 0; i < 10_000; i++) walk.push((value += 1 + Math.floor(random() < 0.9 ? random() * 100 : random() * 2 ** 22)));
  for (const values of [...cases, walk]) t.same(decode(encodePostings(values.map((value) => [value, 0]))), values, `${values.length} values`);
});

t.test('corrupt streams are typed errors naming the section', async (t) => {
  const corrupt = (bytes: number[], message: RegExp, what: string) =>
    t.throws(() => decode(bytes), { name: 'ShardFormatError', code: 'CORRUPT', message }, what);
  corrupt([0x80], /CTRP: varint stream ends early/, 'a continuation byte at the end');
  corrupt([0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0], /longer than 5 bytes/, 'six bytes');
  corrupt([0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0x00, 0], /overflows 32 bits/, 'past 2^32 - 1');
});

t.test('posting lists: each value followed by its mask byte, filtered by the bits needed', async (t) => {
  const bytes = encodePostings([
    [3, 0b0001],
    [200, 0b0110],
    [201, 0],
    [70_000, 0xff],
  ]);
  t.same(decode(bytes, 0), [3, 200, 201, 70_000], 'need 0 keeps every document');
  t.same(decode(bytes, 0b0010), [200, 70_000], 'only masks with the bit');
  t.same(decode(bytes, 0b0011), [70_000], 'every bit of need');
  t.throws(() => decode(bytes.slice(0, -1)), { name: 'ShardFormatError', code: 'CORRUPT', message: /CTRP: varint stream ends early/ }, 'a missing mask byte');
  t.throws(() => decode(bytes, 0x100), { name: 'RangeError', message: /need must be a byte/ }, 'a need that is not a byte');
});

t.test('a posting list intersected with candidates equals decoding it and intersecting', async (t) => {
  let seed = 11;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const postings: [number, number][] = [];
  for (let value = -1, i = 0; i < 5_000; i++)
    postings.push([(value += 1 + Math.floor(random() < 0.95 ? random() * 40 : random() * 2 ** 20)), Math.floor(random() * 256)]);
  const bytes = Uint8Array.from(encodePostings(postings));
  const listed = new Set(postings.map(([value]) => value));
  const cases: [string, number[]][] = [
    ['none', []],
    ['every listed document', postings.map(([value]) => value)],
    ['a few, some listed', [postings[10]![0], postings[10]![0] + 1, postings[2_500]![0], 2 ** 31]],
    ['only before the list', [0, 1, 2].filter((value) => !listed.has(value))],
    ['every other of a range', Array.from({ length: 20_000 }, (_, i) => 2 * i)],
  ];
  for (const [what, candidates] of cases) {
    for (const need of [0, 0b1000_0001]) {
      const expected = decodeMaskedPostings(bytes, 0, bytes.length, 'CTRP', need).filter((value) => candidates.includes(value));
      const kept = intersectMaskedPostings(bytes, 0, bytes.length, 'CTRP', need, Uint32Array.from(candidates));
      t.same([...kept], [...expected], `${what}, need ${need}`);
    }
  }
  t.throws(
    () => intersectMaskedPostings(Uint8Array.from([0x85]), 0, 1, 'CTRP', 0, Uint32Array.of(7)),
    { name: 'ShardFormatError', message: /CTRP: varint stream ends early/ },
    'a corrupt list before the last candidate',
  );
  t.throws(() => intersectMaskedPostings(bytes, 0, bytes.length + 1, 'CTRP', 0, Uint32Array.of(7)), RangeError, 'a stream past the bytes');
});
