import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ShardWriter } from '../../src/index/shard-writer.js';
import { Shard } from '../../src/index/shard-reader.js';
import { ShardFormatError } from '../../src/index/errors.js';
import {
  BLOCKED_DOCUMENT_BYTES,
  BLOCK_BYTES,
  BLOCK_REACH,
  DOCUMENT_RECORD_WORDS,
  DocumentField,
  DocumentFlags,
  HEADER_SIZE,
  TOC_ENTRY_SIZE,
  Section,
} from '../../src/index/format.js';
import { caseVariants, nextByteBit, trigramAt } from '../../src/index/trigrams.js';
import type { DocumentInput, DocumentSymbol, ShardMeta } from '../../src/index/model.js';
import { packSymbols } from '../helpers/symbols.js';
import { tempDir } from '../helpers/tmp.js';

const identity: Pick<ShardMeta, 'repository' | 'branches' | 'shardIndex'> = {
  repository: { id: 7, name: 'github.com/acme/api', codeHostType: 'github', public: true, archived: false, fork: false, webUrl: 'https://github.com/acme/api' },
  branches: [
    { name: 'HEAD', commit: 'a'.repeat(40) },
    { name: 'release/1', commit: 'b'.repeat(40) },
  ],
  shardIndex: 0,
};

function doc(path: string, text: string | null, extra: Partial<DocumentInput> = {}): DocumentInput {
  const content = text === null ? null : Buffer.from(text, 'utf8');
  return { path, content, originalSize: content?.length ?? 5000, language: '', branchMask: 1n, flags: 0, symbols: packSymbols([]), ...extra };
}

const documents: DocumentInput[] = [
  doc('src/main.go', 'package main\n\nfunc Main() {\n\treturn\n}\n', {
    language: 'Go',
    branchMask: 3n,
    symbols: packSymbols([
      { start: 8, end: 12, kind: 'package', parent: { symbol: 'root', kind: 'namespace' } },
      { start: 19, end: 23, kind: 'function' },
    ]),
  }),
  doc('docs/héllo wörld.md', 'Grüße, 世界!\r\nsecond line', { language: 'Markdown', branchMask: 2n }),
  doc('assets/logo.png', null, { flags: DocumentFlags.binary, originalSize: 1234, branchMask: 1n }),
  doc('empty.txt', '', { language: 'Text' }),
  { ...doc('latin1.txt', null), content: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), originalSize: 5, flags: DocumentFlags.invalidUtf8 },
];

function writeShard(dir: string, docs: DocumentInput[] = documents): string {
  const writer = new ShardWriter(identity);
  for (const d of docs) writer.add(d);
  const file = path.join(dir, 'test.trawl');
  writer.write(file);
  return file;
}

t.test('a written shard reads back document by document', async (t) => {
  const file = writeShard(tempDir(t));
  t.notOk(fs.existsSync(`${file}.tmp`), 'no temporary file is left behind');
  const shard = Shard.open(file);
  t.equal(shard.documentCount, documents.length);
  t.same(shard.meta.repository, identity.repository);
  t.same(shard.meta.branches, identity.branches);
  documents.forEach((expected, i) => {
    t.equal(shard.path(i), expected.path, `path ${i}`);
    t.same(shard.content(i), expected.content ?? Buffer.alloc(0), `content ${i}`);
    t.equal(shard.language(i), expected.language, `language ${i}`);
    t.equal(shard.flags(i), expected.flags, `flags ${i}`);
    t.equal(shard.branchMask(i), expected.branchMask, `branch mask ${i}`);
    t.equal(shard.originalSize(i), expected.originalSize, `original size ${i}`);
  });
  t.same(shard.symbols(0), [
    { start: 8, end: 12, kind: 'package', parent: { symbol: 'root', kind: 'namespace' } },
    { start: 19, end: 23, kind: 'function' },
  ]);
  t.equal(shard.content(0).subarray(19, 23).toString(), 'Main');
  t.equal(shard.content(0).subarray(8, 12).toString(), 'main');
  t.same(shard.symbols(1), []);
  t.throws(() => shard.path(documents.length), RangeError);
});

t.test('the writer refuses symbols outside their document or out of order', async (t) => {
  const symbolsOf = (symbols: DocumentSymbol[]) => () => new ShardWriter(identity).add(doc('a.c', 'int a, b;\n', { symbols: packSymbols(symbols) }));
  t.throws(symbolsOf([{ start: 4, end: 40, kind: 'variable' }]), { name: 'RangeError', message: /outside the content/ });
  t.throws(
    symbolsOf([
      { start: 7, end: 8, kind: 'variable' },
      { start: 4, end: 5, kind: 'variable' },
    ]),
    { name: 'RangeError', message: /not ordered by start/ },
  );
  t.doesNotThrow(
    symbolsOf([
      { start: 4, end: 5, kind: 'variable' },
      { start: 7, end: 8, kind: 'variable' },
    ]),
  );
});

t.test('trigram postings list exactly the documents containing each trigram', async (t) => {
  // Random documents over a small alphabet so trigrams repeat across documents.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const alphabet = 'abAB c\n';
  const docs = Array.from({ length: 300 }, (_, i) =>
    doc(`dir${i % 7}/file${i}.txt`, Array.from({ length: Math.floor(random() * 200) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')),
  );
  const shard = Shard.open(writeShard(tempDir(t), docs));
  const expectedContent = new Map<number, number[]>();
  const expectedPath = new Map<number, number[]>();
  const collect = (bytes: Buffer, id: number, into: Map<number, number[]>) => {
    const seen = new Set<number>();
    for (let i = 0; i + 3 <= bytes.length; i++) seen.add(trigramAt(bytes, i));
    for (const trigram of seen) into.set(trigram, [...(into.get(trigram) ?? []), id]);
  };
  docs.forEach((d, id) => {
    collect(d.content!, id, expectedContent);
    collect(Buffer.from(d.path), id, expectedPath);
  });
  t.equal(shard.contentTrigrams.size, expectedContent.size, 'one key per distinct content trigram');
  t.equal(shard.pathTrigrams.size, expectedPath.size, 'one key per distinct path trigram');
  for (const [trigram, ids] of expectedContent) t.same([...shard.contentTrigrams.postingsOf(trigram)!], ids);
  for (const [trigram, ids] of expectedPath) t.same([...shard.pathTrigrams.postingsOf(trigram)!], ids);
  t.equal(shard.contentTrigrams.postingsOf(trigramAt(Buffer.from('zzz'), 0)), null, 'an absent trigram has no postings');
  t.not(trigramAt(Buffer.from('ABC'), 0), trigramAt(Buffer.from('abc'), 0), 'trigrams keep case');
  const variants = (text: string) =>
    caseVariants(trigramAt(Buffer.from(text), 0))
      .map((v) => Buffer.from([v >> 16, (v >> 8) & 255, v & 255]).toString('latin1'))
      .sort();
  t.same(variants('aB_'), ['AB_', 'Ab_', 'aB_', 'ab_'], 'case variants cover every ASCII casing');
  t.same(variants('1_;'), ['1_;'], 'non-letters have one form');
});

t.test('documents over the block threshold get blocks whose postings cover their bytes and the reach after them', async (t) => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const text = (length: number) => Array.from({ length }, () => 'abcdefgh\n'[Math.floor(random() * 9)]).join('');
  const big = text(5 * BLOCK_BYTES + BLOCK_REACH + 50) + 'QQQ'; // QQQ: in the last block, past the reach of the one before
  const docs = [
    doc('small.txt', text(100)),
    doc('big.txt', big),
    doc('exact.txt', text(BLOCKED_DOCUMENT_BYTES)),
    doc('bigger.txt', text(BLOCKED_DOCUMENT_BYTES + 1)),
  ];
  const shard = Shard.open(writeShard(tempDir(t), docs));
  t.same(shard.blocksOf(0), { first: 0, end: 0 }, 'a small document has no blocks');
  t.same(shard.blocksOf(2), { first: 6, end: 6 }, 'nor has one of exactly the threshold');
  t.same(shard.blocksOf(1), { first: 0, end: 6 }, 'a big one has one block per BLOCK_BYTES, the last one partial');
  t.same(shard.blocksOf(3), { first: 6, end: 6 + Math.ceil((BLOCKED_DOCUMENT_BYTES + 1) / BLOCK_BYTES) });
  t.equal(shard.blockBytes, BLOCK_BYTES);
  t.equal(shard.blockReach, BLOCK_REACH);
  const bytes = Buffer.from(big);
  const expected = new Map<number, number[]>();
  for (let block = 0; block * BLOCK_BYTES < bytes.length; block++) {
    const covered = bytes.subarray(block * BLOCK_BYTES, Math.min(bytes.length, (block + 1) * BLOCK_BYTES + BLOCK_REACH));
    const seen = new Set<number>();
    for (let i = 0; i + 3 <= covered.length; i++) seen.add(trigramAt(covered, i));
    for (const trigram of seen) expected.set(trigram, [...(expected.get(trigram) ?? []), block]);
  }
  for (const [trigram, blocks] of expected)
    t.same(
      [...shard.blockTrigrams.postingsOf(trigram)!].filter((block) => block < 6),
      blocks,
    );
  t.same([...shard.blockTrigrams.postingsOf(trigramAt(Buffer.from('QQQ'), 0))!], [5], 'a trigram of one block is posted for it alone');

  // The document's own postings are the union of its blocks' (not a second scan): every trigram, every next-byte bit, no more.
  const masks = new Map<number, number>();
  for (let i = 0; i + 3 <= bytes.length; i++)
    masks.set(trigramAt(bytes, i), (masks.get(trigramAt(bytes, i)) ?? 0) | (i + 3 < bytes.length ? nextByteBit(bytes[i + 3]!) : 0));
  let wrong = 0;
  for (const [trigram, mask] of masks) {
    const index = shard.contentTrigrams.locate(trigram);
    for (let bit = 1; bit < 256; bit <<= 1) if ([...shard.contentTrigrams.postingsAt(index, bit)].includes(1) !== ((mask & bit) !== 0)) wrong++;
  }
  t.equal(wrong, 0, `big.txt's ${masks.size} trigrams and their next-byte masks are posted exactly`);
  t.equal(countDocumentTrigrams(shard, 1), masks.size, 'and no trigram it lacks');
});

/** How many content trigram keys list document `doc`. */
function countDocumentTrigrams(shard: Shard, doc: number): number {
  let count = 0;
  for (let index = 0; index < shard.contentTrigrams.size; index++) if (shard.contentTrigrams.postingsAt(index).includes(doc)) count++;
  return count;
}

/** Sections of a shard as the table of contents lists them. */
function tableOfContents(bytes: Buffer): { tag: string; offset: number; length: number; entry: number }[] {
  const count = bytes.readUInt32LE(12);
  const tocOffset = bytes.readUInt32LE(16);
  return Array.from({ length: count }, (_, i) => {
    const entry = tocOffset + i * TOC_ENTRY_SIZE;
    return { tag: bytes.toString('latin1', entry, entry + 4), offset: bytes.readUInt32LE(entry + 4), length: bytes.readUInt32LE(entry + 8), entry };
  });
}

/** Recomputes every checksum so a deliberate structural corruption reaches the structural checks. */
function resealChecksums(bytes: Buffer): void {
  const sections = tableOfContents(bytes);
  for (const s of sections) bytes.writeUInt32LE(zlib.crc32(bytes.subarray(s.offset, s.offset + s.length)) >>> 0, s.entry + 12);
  const tocOffset = bytes.readUInt32LE(16);
  bytes.writeUInt32LE(zlib.crc32(bytes.subarray(tocOffset)) >>> 0, 20);
  bytes.writeUInt32LE(zlib.crc32(bytes.subarray(0, 28)) >>> 0, 28);
}

function expectShardError(t: Test, bytes: Buffer, code: string, what: string): void {
  let caught: unknown;
  try {
    Shard.fromBuffer(bytes);
  } catch (error) {
    caught = error;
  }
  t.ok(caught instanceof ShardFormatError, `${what}: a ShardFormatError (${String(caught)})`);
  t.equal((caught as ShardFormatError | undefined)?.code, code, what);
}

t.test('truncation anywhere is a TRUNCATED error', async (t) => {
  const bytes = fs.readFileSync(writeShard(tempDir(t)));
  const cuts = [0, 10, HEADER_SIZE - 1, HEADER_SIZE, bytes.length - 1];
  for (const s of tableOfContents(bytes)) cuts.push(s.offset, s.offset + Math.floor(s.length / 2));
  for (const cut of cuts) expectShardError(t, Buffer.from(bytes.subarray(0, cut)), 'TRUNCATED', `cut at ${cut}`);
});

t.test('a flipped byte in any section, the header or the TOC is detected', async (t) => {
  const dir = tempDir(t);
  const pristine = fs.readFileSync(writeShard(dir));
  const sections = tableOfContents(pristine);
  t.same(sections.map((s) => s.tag).sort(), Object.values(Section).sort(), 'every section is present');
  for (const s of sections) {
    if (s.length === 0) continue;
    for (const at of [s.offset, s.offset + Math.floor(s.length / 2), s.offset + s.length - 1]) {
      const bytes = Buffer.from(pristine);
      bytes[at]! ^= 0x40;
      expectShardError(t, bytes, 'CHECKSUM', `flip in ${s.tag} at ${at}`);
      // The same damage through a real mapping of a file on disk.
      const file = path.join(dir, `flipped-${s.tag}.trawl`);
      fs.writeFileSync(file, bytes);
      t.throws(() => Shard.open(file), { name: 'ShardFormatError', code: 'CHECKSUM', file });
    }
  }
  const magic = Buffer.from(pristine);
  magic[0] = 0x58;
  expectShardError(t, magic, 'BAD_MAGIC', 'flip in the magic');
  for (const at of [8, 12, 16, 20, 24, 28]) {
    const bytes = Buffer.from(pristine);
    bytes[at]! ^= 0x01;
    expectShardError(t, bytes, 'CHECKSUM', `flip in header byte ${at}`);
  }
  const tocOffset = pristine.readUInt32LE(16);
  for (const at of [tocOffset, tocOffset + 5, pristine.length - 1]) {
    const bytes = Buffer.from(pristine);
    bytes[at]! ^= 0x01;
    expectShardError(t, bytes, 'CHECKSUM', `flip in the TOC at ${at}`);
  }
  const version = Buffer.from(pristine);
  version.writeUInt32LE(99, 8);
  resealChecksums(version);
  expectShardError(t, version, 'UNSUPPORTED_VERSION', 'a future version');
});

t.test('a mapping is walked once per process: a second open of it answers alike, a file renamed over it is walked anew', async (t) => {
  const dir = tempDir(t);
  const file = writeShard(dir);
  const first = Shard.open(file, { verify: 'structure' });
  // Opened while the first holds the mapping: the records are not walked again, the longest symbol comes from the mapping's note.
  const second = Shard.open(file, { verify: 'structure' });
  const walked = Shard.fromBuffer(fs.readFileSync(file));
  for (const ranges of [
    [20, 21],
    [22, 23],
    [8, 9],
    [12, 19],
    [0, 40],
  ]) {
    t.same(second.symbolsOverlapping(0, ranges), walked.symbolsOverlapping(0, ranges), `definitions overlapping ${ranges.join('–')}`);
    t.same(first.symbolsOverlapping(0, ranges), walked.symbolsOverlapping(0, ranges));
  }
  t.same(second.symbols(0), walked.symbols(0), 'parent names read through the second open');
  // A damaged shard renamed over the path is a new file, so a new mapping: its records are walked and refused.
  const damaged = fs.readFileSync(file);
  damaged.writeUInt32LE(0xffff, tableOfContents(damaged).find((s) => s.tag === Section.symbols)!.offset + 8);
  resealChecksums(damaged);
  fs.writeFileSync(path.join(dir, 'damaged.trawl'), damaged);
  fs.renameSync(path.join(dir, 'damaged.trawl'), file);
  t.throws(() => Shard.open(file, { verify: 'structure' }), { name: 'ShardFormatError', code: 'CORRUPT', message: /SYMB record 0: unknown kind/ });
  t.same(first.symbols(0), walked.symbols(0), 'the shards opened before still read the old file');
});

t.test('structurally impossible values with valid checksums are CORRUPT errors', async (t) => {
  const pristine = fs.readFileSync(writeShard(tempDir(t)));
  const sections = new Map(tableOfContents(pristine).map((s) => [s.tag, s]));
  const mutate = (what: string, change: (bytes: Buffer) => void) => {
    const bytes = Buffer.from(pristine);
    change(bytes);
    resealChecksums(bytes);
    expectShardError(t, bytes, 'CORRUPT', what);
  };
  const docs = sections.get(Section.documents)!;
  const word = (doc: number, field: number) => docs.offset + (doc * DOCUMENT_RECORD_WORDS + field) * 4;
  mutate('content offset past CONT', (b) => b.writeUInt32LE(0xfffffff0, word(0, DocumentField.contentOffset)));
  mutate('path length past PATH', (b) => b.writeUInt32LE(0xffff, word(1, DocumentField.pathLength)));
  mutate('symbol count past SYMB', (b) => b.writeUInt32LE(1000, word(0, DocumentField.symbolCount)));
  mutate('language index past META.languages', (b) => b.writeUInt32LE(0x00000fff, word(0, DocumentField.languageAndFlags)));
  mutate('unknown flag bits', (b) => b.writeUInt32LE(0x80000000, word(0, DocumentField.languageAndFlags)));
  mutate('branch bit beyond the branches', (b) => b.writeUInt32LE(4, word(0, DocumentField.branchMaskLow)));
  mutate('branch bit beyond the branches, in the high word', (b) => b.writeUInt32LE(1, word(0, DocumentField.branchMaskHigh)));
  mutate('META not JSON', (b) => (b[sections.get(Section.meta)!.offset] = 0x7e));
  const keys = sections.get(Section.contentTrigramKeys)!;
  mutate('unsorted trigram keys', (b) => b.writeUInt32LE(0xffffff, keys.offset + 4));
  mutate('section outside the data area', (b) => b.writeUInt32LE(0x7ffffff8, tableOfContents(b)[3]!.entry + 4));
  mutate('duplicate section', (b) => b.write(Section.paths, tableOfContents(b)[0]!.entry, 'latin1'));
  const symbols = sections.get(Section.symbols)!;
  mutate('symbol end past its document', (b) => b.writeUInt32LE(0xffff, symbols.offset + 4));
  mutate('symbol ending before it starts', (b) => b.writeUInt32LE(7, symbols.offset + 4)); // document 0's first symbol is 8–12
  mutate('symbol kind past META.symbolKinds', (b) => b.writeUInt32LE(0xffff, symbols.offset + 8));
  mutate('symbol parent name past SSTR', (b) => b.writeUInt32LE(0xffff, symbols.offset + 12));
  mutate('symbol parent kind past META.symbolKinds', (b) => b.writeUInt32LE(0xffff, symbols.offset + 16));
  mutate('symbols not ordered by start', (b) => {
    b.writeUInt32LE(5, symbols.offset + 20); // document 0's second symbol (19–23) moved before its first (8–12)
    b.writeUInt32LE(6, symbols.offset + 24);
  });
  const blocks = sections.get(Section.blocks)!;
  mutate('block size 0', (b) => b.writeUInt32LE(0, blocks.offset));
  mutate('blocks for a document too small to have them', (b) => b.fill(0x01, blocks.offset + 12, blocks.offset + 4 * (3 + documents.length)));
  mutate('first block not 0', (b) => b.writeUInt32LE(1, blocks.offset + 8));

  // Damage only visible when decoding a varint stream: the first content posting list ends inside a varint.
  const postings = sections.get(Section.contentTrigramPostings)!;
  const bytes = Buffer.from(pristine);
  bytes.fill(0xff, postings.offset, postings.offset + Shard.fromBuffer(pristine).contentTrigrams.encodedLength(0));
  resealChecksums(bytes);
  const shard = Shard.fromBuffer(bytes);
  t.throws(
    () => shard.contentTrigrams.postingsAt(0, 0),
    { name: 'ShardFormatError', code: 'CORRUPT', message: /CTRP: varint (stream ends early|longer than 5 bytes)/ },
    'a bad varint stream fails when decoded',
  );
});

/** The shard with one more section appended before the TOC (what a newer writer might add). */
function withExtraSection(pristine: Buffer, tag: string, data: Buffer): Buffer {
  const tocOffset = pristine.readUInt32LE(16);
  const count = pristine.readUInt32LE(12);
  const padded = Buffer.concat([data, Buffer.alloc((8 - (data.length % 8)) % 8)]);
  const entry = Buffer.alloc(TOC_ENTRY_SIZE);
  entry.write(tag, 0, 'latin1');
  entry.writeUInt32LE(tocOffset, 4);
  entry.writeUInt32LE(data.length, 8);
  const bytes = Buffer.concat([pristine.subarray(0, tocOffset), padded, pristine.subarray(tocOffset), entry]);
  bytes.writeUInt32LE(count + 1, 12);
  bytes.writeUInt32LE(tocOffset + padded.length, 16);
  bytes.writeUInt32LE(bytes.length, 24);
  resealChecksums(bytes);
  return bytes;
}

t.test('unknown sections are skipped; missing required ones are named', async (t) => {
  const pristine = fs.readFileSync(writeShard(tempDir(t)));
  const extended = Shard.fromBuffer(withExtraSection(pristine, 'XTRA', Buffer.from('from a newer writer')));
  t.equal(extended.documentCount, documents.length, 'a shard with an unknown section opens');
  t.equal(extended.path(1), documents[1]!.path);

  const bytes = Buffer.from(pristine);
  bytes.write('ZZZZ', tableOfContents(bytes).find((s) => s.tag === Section.strings)!.entry, 'latin1');
  resealChecksums(bytes);
  t.throws(() => Shard.fromBuffer(bytes), { code: 'CORRUPT', message: /required section SSTR is missing/ });
});

t.test('structure-only verification skips bulk checksums but keeps bounds checks', async (t) => {
  const pristine = fs.readFileSync(writeShard(tempDir(t)));
  const contents = tableOfContents(pristine).find((s) => s.tag === Section.contents)!;
  const bytes = Buffer.from(pristine);
  bytes[contents.offset]! ^= 0x20;
  t.equal(Shard.fromBuffer(bytes, { verify: 'structure' }).documentCount, documents.length, 'opens without reading all content');
  expectShardError(t, bytes, 'CHECKSUM', 'full verification still catches it');
});
