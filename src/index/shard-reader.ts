/**
 * Reads a shard file (docs/index-format.md) from a memory mapping without
 * copying it. open() validates the header, the table of contents, every
 * record's offsets and (by default) every section checksum; what cannot be
 * checked up front (varint streams) is checked as it is decoded. Any bad byte
 * surfaces as a ShardFormatError, never as a crash or a silent wrong answer.
 *
 * The header, table of contents and metadata are read by shard-sections.ts, the trigram tables by trigram-table.ts.
 */
import { native } from '../../native/index.js';
import {
  DOCUMENT_RECORD_WORDS,
  DocumentField as F,
  DocumentFlags,
  SYMBOL_RECORD_WORDS,
  Section,
  SymbolField as S,
  assertLittleEndianHost,
  type SectionTag,
} from './format.js';
import { ShardFormatError } from './errors.js';
import { byStart, forEachOverlapping, type SpansByStart } from './ranges.js';
import { corrupt, parseMeta, readTableOfContents, StringPool, u32View, type SectionSpan } from './shard-sections.js';
import { TrigramTable } from './trigram-table.js';
import type { DocumentSymbol, ShardMeta } from './model.js';

export interface OpenShardOptions {
  /**
   * 'full' (default) checks every section's CRC-32 at open; 'structure' skips
   * the checksums of the bulk sections (contents, postings) for a
   * fast open of a shard that was already verified once.
   */
  verify?: 'full' | 'structure';
}

const KNOWN_FLAGS = DocumentFlags.binary | DocumentFlags.tooLarge | DocumentFlags.invalidUtf8;

export class Shard {
  readonly meta: ShardMeta;
  readonly documentCount: number;
  readonly contentTrigrams: TrigramTable;
  readonly pathTrigrams: TrigramTable;
  /** Trigrams of the blocks of big documents (BLKS): posting ids are block ids. */
  readonly blockTrigrams: TrigramTable;
  /** Bytes of content per block; a block's trigrams also cover `blockReach` bytes after it. */
  readonly blockBytes: number;
  readonly blockReach: number;
  private readonly firstBlocks: Uint32Array;
  private readonly documents: Uint32Array;
  private readonly symbolRecords: Uint32Array;
  /** The longest symbol name (end − start) in the shard: bounds how far back a symbol overlapping an offset can start. */
  private longestSymbol = 0;
  private readonly parentNames: StringPool;
  private readonly spans: Map<string, SectionSpan>;

  /** Maps and validates a shard file. Throws ShardFormatError for bad bytes, a system error when unreadable. */
  static open(filePath: string, options: OpenShardOptions = {}): Shard {
    const { bytes, faultSlot } = native.mmapFile(filePath);
    native.madvise(bytes, 'random');
    try {
      const shard = new Shard(bytes, options, faultSlot);
      if (shard.faulted) throw new ShardFormatError('TRUNCATED', 'the file shrank or could not be read while it was opened');
      return shard;
    } catch (error) {
      throw error instanceof ShardFormatError ? error.inFile(filePath) : error;
    }
  }

  /** Validates a shard held in memory. */
  static fromBuffer(bytes: Buffer, options: OpenShardOptions = {}): Shard {
    return new Shard(bytes, options, 0);
  }

  private constructor(
    readonly bytes: Buffer,
    options: OpenShardOptions,
    private readonly faultSlot: number,
  ) {
    assertLittleEndianHost();
    const verify = options.verify ?? 'full';
    // A thread of this process validated this very mapping already (its note is the longest symbol + 1):
    // records are not walked again, only what is read from them is bounded (docs/design.md, "Start").
    const noted = verify === 'structure' && faultSlot !== 0 ? native.mappingNotes[faultSlot]! : 0;
    const walk = noted === 0;
    this.spans = readTableOfContents(bytes, walk ? verify : 'noted');
    this.meta = parseMeta(bytes, this.span(Section.meta));
    this.documentCount = this.meta.documentCount;
    this.documents = this.u32Section(Section.documents);
    if (this.documents.length !== this.documentCount * DOCUMENT_RECORD_WORDS) {
      throw corrupt(`DOCS holds ${this.documents.length} words, META says ${this.documentCount} documents`);
    }
    this.symbolRecords = this.u32Section(Section.symbols);
    if (this.symbolRecords.length % SYMBOL_RECORD_WORDS !== 0) throw corrupt('SYMB is not a whole number of records');
    this.parentNames = StringPool.parse(bytes, this.span(Section.strings), walk);
    if (walk) {
      this.validateDocuments();
      this.validateSymbols();
    } else {
      this.longestSymbol = noted - 1;
    }
    this.contentTrigrams = this.trigramTable(Section.contentTrigramKeys, Section.contentTrigramPostings, walk);
    this.pathTrigrams = this.trigramTable(Section.pathTrigramKeys, Section.pathTrigramPostings, walk);
    const blocks = this.u32Section(Section.blocks);
    if (blocks.length !== 3 + this.documentCount) throw corrupt(`BLKS holds ${blocks.length} words, expected ${3 + this.documentCount}`);
    this.blockBytes = blocks[0]!;
    this.blockReach = blocks[1]!;
    this.firstBlocks = blocks.subarray(2);
    if (walk) this.validateBlocks();
    this.blockTrigrams = this.trigramTable(Section.blockTrigramKeys, Section.blockTrigramPostings, walk);
    if (faultSlot !== 0) native.mappingNotes[faultSlot] = this.longestSymbol + 1;
  }

  /**
   * True once a read of the mapping faulted: the file shrank (or could not be read) under it. Pages
   * from the fault on read as zeros, so whoever read the shard since discards what it read and counts
   * the shard as failed (docs/operations.md, "Limits and defences").
   */
  get faulted(): boolean {
    return native.mappingFaults[this.faultSlot] !== 0;
  }

  /**
   * Document `doc`'s blocks, ids [first, end): none for a document without
   * blocks, else block first + k holds content bytes [k·blockBytes, (k+1)·blockBytes).
   */
  blocksOf(doc: number): { first: number; end: number } {
    this.record(doc);
    return { first: this.firstBlocks[doc]!, end: this.firstBlocks[doc + 1]! };
  }

  /** Repository-relative path of document `doc`. */
  path(doc: number): string {
    return this.pathBytes(doc).toString('utf8');
  }

  pathBytes(doc: number): Buffer {
    const base = this.record(doc);
    const offset = this.span(Section.paths).offset + this.documents[base + F.pathOffset]!;
    return this.bytes.subarray(offset, offset + this.documents[base + F.pathLength]!);
  }

  /** Stored content (empty for skipped files): a view of the mapping, never a copy. */
  content(doc: number): Buffer {
    const base = this.record(doc);
    const offset = this.span(Section.contents).offset + this.documents[base + F.contentOffset]!;
    return this.bytes.subarray(offset, offset + this.documents[base + F.contentLength]!);
  }

  /** Size of the file in the repository, also for skipped files. */
  originalSize(doc: number): number {
    return this.documents[this.record(doc) + F.originalSize]!;
  }

  language(doc: number): string {
    return this.meta.languages[this.documents[this.record(doc) + F.languageAndFlags]! & 0xffff]!;
  }

  /** DocumentFlags bits. */
  flags(doc: number): number {
    return this.documents[this.record(doc) + F.languageAndFlags]! >>> 16;
  }

  /** Whether the document is on any branch of a mask given as its low and high 32-bit words (no BigInt per document). */
  isOnBranches(doc: number, maskLow: number, maskHigh: number): boolean {
    const base = this.record(doc);
    return (this.documents[base + F.branchMaskLow]! & maskLow) !== 0 || (this.documents[base + F.branchMaskHigh]! & maskHigh) !== 0;
  }

  /** Bit i set when the document is on META.branches[i]. */
  branchMask(doc: number): bigint {
    const base = this.record(doc);
    return (BigInt(this.documents[base + F.branchMaskHigh]!) << 32n) | BigInt(this.documents[base + F.branchMaskLow]!);
  }

  /** ctags definitions of the document, by start offset. */
  symbols(doc: number): DocumentSymbol[] {
    const base = this.record(doc);
    const first = this.documents[base + F.firstSymbol]!;
    const symbols: DocumentSymbol[] = [];
    for (let i = first; i < first + this.documents[base + F.symbolCount]!; i++) symbols.push(this.symbolAt(i));
    return symbols;
  }

  /**
   * The definitions whose name ranges overlap any of `ranges` (flattened
   * [start, end, …] byte ranges, in any order), by start offset. Only those
   * are decoded: a file may define thousands of symbols.
   */
  symbolsOverlapping(doc: number, ranges: readonly number[]): DocumentSymbol[] {
    const found: DocumentSymbol[] = [];
    if (ranges.length === 0) return found;
    const sorted = byStart(ranges);
    const base = this.record(doc);
    const first = this.documents[base + F.firstSymbol]!;
    const records = this.symbolRecords;
    const spans: SpansByStart = {
      first,
      end: first + this.documents[base + F.symbolCount]!,
      longest: this.longestSymbol,
      startOf: (i) => records[i * SYMBOL_RECORD_WORDS + S.start]!,
      endOf: (i) => records[i * SYMBOL_RECORD_WORDS + S.end]!,
    };
    forEachOverlapping(spans, sorted, 0, sorted.length / 2, (i) => found.push(this.symbolAt(i)));
    return found;
  }

  private symbolAt(index: number): DocumentSymbol {
    const r = index * SYMBOL_RECORD_WORDS;
    const kinds = this.meta.symbolKinds;
    const symbol: DocumentSymbol = {
      start: this.symbolRecords[r + S.start]!,
      end: this.symbolRecords[r + S.end]!,
      kind: kinds[this.symbolRecords[r + S.kind]!]!,
    };
    const parentName = this.symbolRecords[r + S.parentName]!;
    if (parentName !== 0) {
      const parentKind = this.symbolRecords[r + S.parentKind]!;
      symbol.parent = { symbol: this.parentNames.at(parentName - 1), kind: parentKind === 0 ? '' : kinds[parentKind - 1]! };
    }
    return symbol;
  }

  /** Byte span of a section, for statistics (e.g. index bytes excluding content). */
  sectionLength(tag: SectionTag): number {
    return this.span(tag).length;
  }

  private record(doc: number): number {
    if (!Number.isInteger(doc) || doc < 0 || doc >= this.documentCount) {
      throw new RangeError(`document ${doc} is not in this shard (0..${this.documentCount - 1})`);
    }
    return doc * DOCUMENT_RECORD_WORDS;
  }

  private span(tag: string): SectionSpan {
    return this.spans.get(tag)!; // presence of every required section is checked at open
  }

  private u32Section(tag: SectionTag): Uint32Array {
    const { offset, length } = this.span(tag);
    if (length % 4 !== 0) throw corrupt(`${tag} length ${length} is not a multiple of 4`);
    return u32View(this.bytes, offset, length / 4);
  }

  private validateDocuments(): void {
    const limits = {
      path: this.span(Section.paths).length,
      content: this.span(Section.contents).length,
    };
    const symbolCount = this.symbolRecords.length / SYMBOL_RECORD_WORDS;
    // The branch bits the shard has, as the two words of a record's mask (no BigInt per document).
    const branches = this.meta.branches.length;
    const allowedLow = branches >= 32 ? 0xffffffff : 2 ** branches - 1;
    const allowedHigh = branches >= 64 ? 0xffffffff : branches > 32 ? 2 ** (branches - 32) - 1 : 0;
    const d = this.documents;
    for (let doc = 0; doc < this.documentCount; doc++) {
      const b = doc * DOCUMENT_RECORD_WORDS;
      checkRange(d[b + F.pathOffset]!, d[b + F.pathLength]!, limits.path, doc, 'path');
      checkRange(d[b + F.contentOffset]!, d[b + F.contentLength]!, limits.content, doc, 'content');
      checkRange(d[b + F.firstSymbol]!, d[b + F.symbolCount]!, symbolCount, doc, 'symbols');
      if (d[b + F.contentLength]! > d[b + F.originalSize]!) throw badRecord(doc, 'content longer than the file');
      const languageAndFlags = d[b + F.languageAndFlags]!;
      if ((languageAndFlags & 0xffff) >= this.meta.languages.length) throw badRecord(doc, 'unknown language index');
      if ((languageAndFlags >>> 16) & ~KNOWN_FLAGS) throw badRecord(doc, 'unknown flag bits');
      if ((d[b + F.branchMaskLow]! & ~allowedLow) !== 0 || (d[b + F.branchMaskHigh]! & ~allowedHigh) !== 0) {
        throw badRecord(doc, 'branch mask names a branch the shard does not have');
      }
    }
  }

  private validateBlocks(): void {
    if (this.blockBytes === 0) throw corrupt('BLKS: block size 0');
    if (this.firstBlocks[0] !== 0) throw corrupt("BLKS: the first document's blocks do not start at 0");
    for (let doc = 0; doc < this.documentCount; doc++) {
      const count = this.firstBlocks[doc + 1]! - this.firstBlocks[doc]!;
      const contentLength = this.documents[doc * DOCUMENT_RECORD_WORDS + F.contentLength]!;
      if (count !== 0 && count !== Math.ceil(contentLength / this.blockBytes))
        throw corrupt(`BLKS: document ${doc} has ${count} blocks for ${contentLength} bytes`);
    }
  }

  private validateSymbols(): void {
    const kinds = this.meta.symbolKinds.length;
    const parentNames = this.parentNames.count;
    const r = this.symbolRecords;
    const d = this.documents;
    let longest = 0;
    for (let doc = 0; doc < this.documentCount; doc++) {
      const b = doc * DOCUMENT_RECORD_WORDS;
      const contentLength = d[b + F.contentLength]!;
      const first = d[b + F.firstSymbol]!;
      const end = (first + d[b + F.symbolCount]!) * SYMBOL_RECORD_WORDS;
      let previousStart = 0;
      for (let s = first * SYMBOL_RECORD_WORDS; s < end; s += SYMBOL_RECORD_WORDS) {
        const start = r[s + S.start]!;
        const length = r[s + S.end]! - start;
        if (
          start < previousStart ||
          length < 0 ||
          start + length > contentLength ||
          r[s + S.kind]! >= kinds ||
          r[s + S.parentKind]! > kinds ||
          r[s + S.parentName]! > parentNames
        ) {
          throw badSymbol(s / SYMBOL_RECORD_WORDS, r, contentLength, previousStart, kinds);
        }
        previousStart = start;
        if (length > longest) longest = length;
      }
    }
    this.longestSymbol = longest;
  }

  /** `walk`: check every key and offset (false: the mapping's note says a thread did). */
  private trigramTable(keysTag: SectionTag, postingsTag: SectionTag, walk: boolean): TrigramTable {
    const table = this.u32Section(keysTag);
    const count = table[0];
    if (count === undefined || table.length !== 2 + 2 * count) throw corrupt(`${keysTag}: size does not match its key count`);
    const keys = table.subarray(1, 1 + count);
    const offsets = table.subarray(1 + count);
    const postings = this.span(postingsTag);
    for (let i = 0; walk && i < count; i++) {
      if (keys[i]! > 0xffffff || (i > 0 && keys[i]! <= keys[i - 1]!)) throw corrupt(`${keysTag}: keys not ascending trigrams at ${i}`);
      if (offsets[i + 1]! < offsets[i]!) throw corrupt(`${keysTag}: posting offsets go backwards at ${i}`);
    }
    if (offsets[0] !== 0 || offsets[count] !== postings.length) throw corrupt(`${keysTag}: posting offsets do not cover ${postingsTag}`);
    return new TrigramTable(this.bytes, keys, offsets, postings, postingsTag);
  }
}

/** A document record that fails validation (its message is built only then: a shard has thousands that pass). */
function badRecord(doc: number, problem: string): ShardFormatError {
  return corrupt(`DOCS record ${doc}: ${problem}`);
}

/** Why `validateSymbols` refused record `record` (its message is built only then: a shard has millions that pass). */
function badSymbol(record: number, r: Uint32Array, contentLength: number, previousStart: number, kinds: number): ShardFormatError {
  const s = record * SYMBOL_RECORD_WORDS;
  const start = r[s + S.start]!;
  const end = r[s + S.end]!;
  if (start < previousStart) return corrupt(`SYMB record ${record}: not ordered by start`);
  if (!(start <= end && end <= contentLength)) return corrupt(`SYMB record ${record}: range outside its document`);
  if (r[s + S.kind]! >= kinds || r[s + S.parentKind]! > kinds) return corrupt(`SYMB record ${record}: unknown kind`);
  return corrupt(`SYMB record ${record}: unknown parent name`);
}

function checkRange(offset: number, length: number, limit: number, doc: number, what: string): void {
  if (offset + length > limit) throw badRecord(doc, `${what} ${offset}+${length} is past the end (${limit})`);
}
