import t from 'tap';
import { native } from '../../native/index.js';
import { chunkObjects, layChunks } from '../../src/search/response/chunks.js';
import { RANGE_WORDS } from '../../src/search/response/positions.js';

/** Each range's [byteOffset, lineNumber, column] at its start and its end, and each chunk's words, as layChunks lays them out. */
function laidOut(content: Buffer, ranges: number[], contextLines = 0): { positions: number[][]; chunks: number[][] } {
  const layout = layChunks({ content, ranges, contextLines, symbols: [] });
  const words = (array: Uint32Array, size: number) =>
    Array.from({ length: array.length / size }, (_, index) => [...array.subarray(index * size, (index + 1) * size)]);
  return { positions: words(layout.positions, RANGE_WORDS), chunks: words(layout.chunks, 7) };
}

const positionsOf = (content: Buffer, ranges: number[]) => laidOut(content, ranges).positions;

t.test('positions: bytes, 1-based lines, 1-based code point columns', async (t) => {
  const content = Buffer.from('a\tb\r\nçé x\n\nlast', 'utf8');
  const at = (offset: number) => positionsOf(content, [offset, offset])[0]!.slice(0, 3);
  t.same(at(0), [0, 1, 1]);
  t.same(at(2), [2, 1, 3], 'a tab is one column');
  t.same(at(3), [3, 1, 4], 'the \\r of CRLF is a column of its line');
  t.same(at(4), [4, 1, 5], 'the \\n belongs to the line it ends');
  t.same(at(5), [5, 2, 1]);
  t.same(at(10), [10, 2, 4], 'two-byte characters are one column each');
  t.same(at(12), [12, 3, 1], 'an empty line');
  t.same(at(content.length), [content.length, 4, 5], 'the end of a file without a final newline');
  t.same(positionsOf(Buffer.from('🙂x'), [4, 5])[0], [4, 1, 2, 5, 1, 3], 'an astral character is one code point');
  const [chunk] = chunkObjects(content, layChunks({ content, ranges: [6, 7], contextLines: 0, symbols: [] }));
  t.same([chunk!.content, chunk!.contentStart], ['çé x\n', { byteOffset: 5, lineNumber: 2, column: 1 }], "a chunk is its lines, the '\\n' included");
});

t.test('positions on one long line are counted right from the previous one', async (t) => {
  const content = Buffer.from(`first line\n${'é'.repeat(1000)}${'ab '.repeat(316_000)}\nnext line\n`, 'utf8');
  const offsets = Array.from({ length: 3000 }, (_, i) => 2011 + i * 300);
  const positions = positionsOf(
    content,
    offsets.flatMap((offset) => [offset, offset + 2]),
  );
  const last = offsets.at(-1)!;
  t.same(positions.at(-1), [last, 2, 1001 + (last - 2011), last + 2, 2, 1003 + (last - 2011)], 'the columns are right, 950 KB into a line');
});

/** What layChunks should give, from the definitions alone: a newline table, code points counted from the line start. */
function reference(content: Buffer, ranges: number[], contextLines: number): { positions: number[][]; chunks: number[][] } {
  const newlines = [...content.keys()].filter((at) => content[at] === 10);
  const lineOf = (offset: number) => 1 + newlines.filter((at) => at < offset).length;
  const afterNewline = (n: number) => (n <= 0 ? 0 : n <= newlines.length ? newlines[n - 1]! + 1 : content.length);
  const column = (offset: number) => 1 + [...content.subarray(afterNewline(lineOf(offset) - 1), offset)].filter((byte) => (byte & 0xc0) !== 0x80).length;
  const positions: number[][] = [];
  const chunks: { last: number; chunk: number[] }[] = [];
  for (let i = 0; i < ranges.length; i += 2) {
    const [start, end] = [ranges[i]!, ranges[i + 1]!];
    positions.push([start, lineOf(start), column(start), end, lineOf(end), column(end)]);
    const first = Math.max(1, lineOf(start) - contextLines);
    const last = lineOf(end) - (end > start && content[end - 1] === 10 ? 1 : 0) + contextLines;
    const current = chunks.at(-1);
    if (current && first <= current.last + 1) {
      current.last = Math.max(current.last, last);
      current.chunk[1] = afterNewline(current.last);
      current.chunk[4]!++;
    } else {
      chunks.push({ last, chunk: [afterNewline(first - 1), afterNewline(last), first, i / 2, 1, 0, 0] });
    }
  }
  return { positions, chunks: chunks.map(({ chunk }) => chunk) };
}

t.test('positions and chunks agree with a brute-force reference: any text, ranges across lines, any context', async (t) => {
  let seed = 5;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // Runs longer than the addon counts in a loop (64 bytes), multi-byte characters, CRLF, blank lines.
  const alphabet = ['x', 'é', '🙂', '\t', '\n', '\r\n', '\n\n\n', 'y'.repeat(70), 'z'.repeat(300)];
  const failures: string[] = [];
  for (let round = 0; round < 400; round++) {
    const content = Buffer.from(Array.from({ length: Math.floor(random() * 80) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''), 'utf8');
    const starts = [...content.keys(), content.length].filter((at) => at === content.length || (content[at]! & 0xc0) !== 0x80);
    const pick = () => starts[Math.floor(random() * starts.length)]!;
    // Ranges ordered by start, then end (as layChunks orders them); an end may come before the previous range's.
    const ranges = Array.from({ length: Math.floor(random() * 12) }, () => {
      const start = pick();
      const ends = starts.filter((at) => at >= start && at - start <= (random() < 0.3 ? 2000 : 12));
      return [start, ends[Math.floor(random() * ends.length)]!] as const;
    })
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .flat();
    const contextLines = random() < 0.2 ? 10 : Math.floor(random() * 4);
    const got = laidOut(content, ranges, contextLines);
    const expected = reference(content, ranges, contextLines);
    if (JSON.stringify(got) !== JSON.stringify(expected))
      failures.push(`round ${round}, ${content.length} bytes, ranges ${ranges}, context ${contextLines}: ${JSON.stringify(got)} ≠ ${JSON.stringify(expected)}`);
  }
  t.same(failures.slice(0, 3), [], '400 texts');
});

t.test('layChunks refuses ranges outside the content or out of order', async (t) => {
  const content = Buffer.from('one\ntwo\n');
  const room = () => [new Uint32Array(12), new Uint32Array(14)] as const;
  t.throws(() => native.layChunks(content, new Uint32Array([0, 9]), 0, ...room()), { name: 'RangeError', message: /within content/ });
  t.throws(() => native.layChunks(content, new Uint32Array([4, 5, 0, 1]), 0, ...room()), { name: 'RangeError', message: /ordered by start/ });
  t.throws(() => native.layChunks(content, new Uint32Array([2, 1]), 0, ...room()), { name: 'RangeError' });
  t.throws(() => native.layChunks(content, new Uint32Array([0, 1, 2]), 0, ...room()), { name: 'RangeError', message: /pairs/ });
  t.throws(() => native.layChunks(content, new Uint32Array([0, 1, 2, 3, 4, 5]), 0, ...room()), { name: 'RangeError', message: /room for every range/ });
  t.throws(() => native.layChunks(content, new Uint32Array([0, 1]), -1, ...room()), { name: 'RangeError', message: /contextLines not negative/ });
});
