import t from 'tap';
import { JsonWriter } from '../../src/search/response/json-writer.js';

/** Bytes mixing ASCII, every control byte, quotes, backslashes, well-formed and broken UTF-8. */
function randomBytes(random: () => number, length: number): Buffer {
  const pieces = [
    [0x22],
    [0x5c],
    [0x7f],
    [0xc3, 0xa9],
    [0xe2, 0x82, 0xac],
    [0xf0, 0x9f, 0x99, 0x82],
    [0xed, 0xa0, 0x80],
    [0xc0, 0xaf],
    [0xe0, 0x80, 0xaf],
    [0xf4, 0x90, 0x80, 0x80],
    [0x80],
    [0xbf],
    [0xe2, 0x82],
    [0xf0, 0x9f, 0x99],
    [0xf5],
    [0xff],
    [0xe2, 0x80, 0xa8],
  ];
  const bytes: number[] = [];
  while (bytes.length < length) {
    const pick = random();
    if (pick < 0.5) bytes.push(0x20 + Math.floor(random() * 0x5f));
    else if (pick < 0.7) bytes.push(Math.floor(random() * 0x20));
    else bytes.push(...pieces[Math.floor(random() * pieces.length)]!);
  }
  return Buffer.from(bytes);
}

/** What `json` wrote, its pieces joined. */
const written = (json: JsonWriter) => Buffer.concat(json.pieces());

function seeded(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

t.test('content is escaped from its bytes as JSON.stringify escapes the string they decode to', async (t) => {
  const random = seeded(7);
  const failures: string[] = [];
  for (let round = 0; round < 3000; round++) {
    const content = randomBytes(random, Math.floor(random() * 40));
    const from = Math.floor(random() * (content.length + 1));
    const to = from + Math.floor(random() * (content.length - from + 1));
    const json = new JsonWriter(8);
    json.utf8String(content, from, to);
    const expected = JSON.stringify(content.toString('utf8', from, to));
    // Compared as bytes: raw ill-formed bytes would decode to the same replacement characters.
    if (!written(json).equals(Buffer.from(expected)))
      failures.push(`${content.subarray(from, to).toString('hex')}: ${written(json).toString('hex')} ≠ ${Buffer.from(expected).toString('hex')}`);
  }
  t.same(failures.slice(0, 5), [], '3,000 random slices, well-formed and not, each cut anywhere');
  const every = Buffer.from(Array.from({ length: 0x80 }, (_, byte) => byte));
  const json = new JsonWriter(1);
  json.utf8String(every, 0, every.length);
  t.equal(written(json).toString(), JSON.stringify(every.toString('latin1')), 'every ASCII byte, the writer growing from one byte');
});

t.test('integers, strings and values are written as JSON.stringify writes them', async (t) => {
  const values = [0, 7, 10, 99, 100, 65535, 4294967295, 4294967296, -1, 1.5, Number.MAX_SAFE_INTEGER];
  const json = new JsonWriter(4);
  json.raw('[');
  values.forEach((value, index) => {
    if (index > 0) json.raw(',');
    json.integer(value);
  });
  const strings = ['', 'src/a.c', 'é', 'a"b', 'back\\slash', 'tab\t', '\u001f', '🙂', '\u2028', '\ud800', '\u007f'];
  for (const text of strings) {
    json.raw(',');
    json.string(text);
  }
  json.raw(',');
  json.value({ symbol: 'é"\n', kind: 'function', parent: { symbol: 'x', kind: 'struct' } });
  json.raw(']');
  t.ok(
    written(json).equals(Buffer.from(JSON.stringify([...values, ...strings, { symbol: 'é"\n', kind: 'function', parent: { symbol: 'x', kind: 'struct' } }]))),
    'the same bytes',
  );
});

t.test('what is written stays where it was written: the writer grows by pieces, never by a copy', async (t) => {
  const scratch = Buffer.alloc(64);
  const json = new JsonWriter(scratch);
  const texts = Array.from({ length: 2000 }, (_, index) => `text ${index} "quoted"`);
  json.raw('[');
  texts.forEach((text, index) => {
    if (index > 0) json.raw(',');
    json.string(text);
  });
  json.raw(']');
  const pieces = json.pieces();
  t.ok(pieces.length > 5, `in ${pieces.length} pieces`);
  t.equal(pieces[0]!.buffer, scratch.buffer, 'the first piece is the scratch it was given');
  t.equal(pieces[0]!.byteOffset, 0);
  t.ok(
    pieces.every((piece) => piece.length > 0),
    'no empty piece',
  );
  t.equal(Buffer.concat(pieces).toString(), JSON.stringify(texts), 'the pieces joined are the JSON');
  const long = 'x'.repeat(100_000);
  const single = new JsonWriter(16);
  single.string(long);
  t.same(
    single.pieces().map((piece) => piece.length),
    [long.length + 2],
    'a write larger than twice the last piece gets a piece of its own size',
  );
});
