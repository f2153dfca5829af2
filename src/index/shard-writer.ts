/**
 * Writes one shard file (format: docs/index-format.md). Documents are added
 * in static-rank order — their order is their id — and write() publishes the
 * file atomically.
 */
import zlib from 'node:zlib';
import {
  BLOCKED_DOCUMENT_BYTES,
  BLOCK_BYTES,
  BLOCK_REACH,
  HEADER_SIZE,
  MAX_BRANCHES,
  MAX_SHARD_BYTES,
  SECTION_ALIGNMENT,
  SHARD_FORMAT_VERSION,
  SHARD_MAGIC,
  SYMBOL_RECORD_WORDS,
  Section,
  TOC_ENTRY_SIZE,
  assertLittleEndianHost,
  type SectionTag,
} from './format.js';
import { GrowableUint32Array } from './growable.js';
import { StringTable } from './string-table.js';
import { TrigramPostingsBuilder, type TrigramPostings } from './posting-builder.js';
import { AtomicFileWriter } from './atomic-file.js';
import type { DocumentInput, ShardMeta } from './model.js';

export type ShardIdentity = Pick<ShardMeta, 'repository' | 'branches' | 'shardIndex'>;

interface PendingSection {
  tag: SectionTag;
  chunks: Uint8Array[];
  length: number;
}

export class ShardWriter {
  private readonly documents = new GrowableUint32Array(1 << 14);
  private readonly symbols = new GrowableUint32Array(1 << 14);
  private readonly paths: Buffer[] = [];
  private readonly contents: Buffer[] = [];
  private readonly languages = new StringTable(['']);
  private readonly symbolKinds = new StringTable();
  private readonly parentNames = new StringTable();
  private readonly contentTrigrams = new TrigramPostingsBuilder();
  private readonly pathTrigrams = new TrigramPostingsBuilder();
  /** Trigrams of the blocks of big documents; a block is a "document" of this builder. */
  private readonly blockTrigrams = new TrigramPostingsBuilder();
  /** firstBlock[d]: the id of document d's first block (its blocks run to firstBlock[d + 1]). */
  private readonly firstBlock = new GrowableUint32Array();
  private pathBytes = 0;
  /** Bytes of stored content so far; the indexer starts a new shard past its cap. */
  contentBytes = 0;
  documentCount = 0;

  constructor(private readonly identity: ShardIdentity) {
    assertLittleEndianHost();
    if (identity.branches.length > MAX_BRANCHES) {
      throw new RangeError(`a repository can index at most ${MAX_BRANCHES} branches, got ${identity.branches.length}`);
    }
  }

  add(document: DocumentInput): void {
    const path = Buffer.from(document.path, 'utf8');
    const content = document.content ?? Buffer.alloc(0);
    const language = this.languages.intern(document.language);
    if (language > 0xffff) throw new RangeError('a shard can hold at most 65536 languages');
    const firstSymbol = this.symbols.length / SYMBOL_RECORD_WORDS;
    const symbolCount = this.addSymbols(document, content.length);
    const record = [
      this.pathBytes,
      path.length,
      this.contentBytes,
      content.length,
      document.originalSize,
      firstSymbol,
      symbolCount,
      Number(document.branchMask & 0xffffffffn),
      Number((document.branchMask >> 32n) & 0xffffffffn),
      (document.flags << 16) | language,
    ];
    for (const word of record) this.documents.push(word >>> 0);
    this.paths.push(path);
    this.contents.push(content);
    this.pathBytes += path.length;
    this.contentBytes += content.length;
    this.pathTrigrams.addDocument(path);
    const firstBlock = this.blockTrigrams.documentCount;
    this.firstBlock.push(firstBlock);
    if (content.length > BLOCKED_DOCUMENT_BYTES) {
      for (let start = 0; start < content.length; start += BLOCK_BYTES) {
        this.blockTrigrams.addDocument(content.subarray(start, Math.min(content.length, start + BLOCK_BYTES + BLOCK_REACH)));
      }
      this.contentTrigrams.addUnionOf(this.blockTrigrams, firstBlock); // the blocks cover every trigram of the document
    } else {
      this.contentTrigrams.addDocument(content);
    }
    this.documentCount++;
  }

  /** Appends a document's symbols with their kinds and parents interned in the shard's tables; returns their count. */
  private addSymbols(document: DocumentInput, contentLength: number): number {
    const { fields, strings } = document.symbols;
    const count = fields.length / SYMBOL_RECORD_WORDS;
    if (!Number.isInteger(count)) throw new RangeError(`${document.path}: symbol fields are not a whole number of symbols`);
    const text = (ref: number) => {
      const value = strings[ref];
      if (value === undefined) throw new RangeError(`${document.path}: symbol string ${ref} does not exist`);
      return value;
    };
    for (let at = 0; at < fields.length; at += SYMBOL_RECORD_WORDS) {
      const start = fields[at]!;
      const end = fields[at + 1]!;
      if (!(start <= end && end <= contentLength)) throw new RangeError(`${document.path}: symbol range ${start}-${end} is outside the content`);
      if (at > 0 && start < fields[at - SYMBOL_RECORD_WORDS]!) throw new RangeError(`${document.path}: symbols are not ordered by start`);
      const parentName = fields[at + 3]!;
      const parentKind = fields[at + 4]!;
      this.symbols.push(start);
      this.symbols.push(end);
      this.symbols.push(this.symbolKinds.intern(text(fields[at + 2]!)));
      this.symbols.push(parentName === 0 ? 0 : 1 + this.parentNames.intern(text(parentName - 1)));
      this.symbols.push(parentKind === 0 ? 0 : 1 + this.symbolKinds.intern(text(parentKind - 1)));
    }
    return count;
  }

  /** Builds every section and publishes the shard at filePath atomically. Returns its size in bytes. */
  write(filePath: string): number {
    const meta: ShardMeta = {
      ...this.identity,
      languages: this.languages.values,
      symbolKinds: this.symbolKinds.values,
      documentCount: this.documentCount,
      createdAt: new Date().toISOString(),
    };
    const sections: PendingSection[] = [
      section(Section.meta, [Buffer.from(JSON.stringify(meta), 'utf8')]),
      section(Section.documents, [u32Bytes(this.documents.view())]),
      section(Section.paths, this.paths),
      section(Section.contents, this.contents),
      section(Section.symbols, [u32Bytes(this.symbols.view())]),
      section(Section.strings, [encodeStringPool(this.parentNames.values)]),
      ...trigramSections(Section.contentTrigramKeys, Section.contentTrigramPostings, this.contentTrigrams.finish()),
      ...trigramSections(Section.pathTrigramKeys, Section.pathTrigramPostings, this.pathTrigrams.finish()),
      section(Section.blocks, [u32Bytes(this.blockTable())]),
      ...trigramSections(Section.blockTrigramKeys, Section.blockTrigramPostings, this.blockTrigrams.finish()),
    ];
    return writeSections(filePath, sections);
  }

  /** BLKS: [blockBytes][reach][firstBlock × documentCount][block count]. */
  private blockTable(): Uint32Array {
    const table = new Uint32Array(3 + this.documentCount);
    table[0] = BLOCK_BYTES;
    table[1] = BLOCK_REACH;
    table.set(this.firstBlock.view(), 2);
    table[2 + this.documentCount] = this.blockTrigrams.documentCount;
    return table;
  }
}

function section(tag: SectionTag, chunks: Uint8Array[]): PendingSection {
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  return { tag, chunks, length };
}

function u32Bytes(words: Uint32Array): Buffer {
  return Buffer.from(words.buffer, words.byteOffset, words.byteLength);
}

/** [u32 count][u32 offsets × (count+1)][UTF-8 bytes]. */
function encodeStringPool(values: string[]): Buffer {
  const encoded = values.map((value) => Buffer.from(value, 'utf8'));
  const offsets = new Uint32Array(values.length + 2);
  offsets[0] = values.length;
  let at = 0;
  encoded.forEach((bytes, i) => {
    offsets[1 + i] = at;
    at += bytes.length;
  });
  offsets[1 + values.length] = at;
  return Buffer.concat([u32Bytes(offsets), ...encoded]);
}

/** Keys section [u32 count][keys × count][offsets × (count+1)] and the postings section. */
function trigramSections(keysTag: SectionTag, postingsTag: SectionTag, built: TrigramPostings): PendingSection[] {
  const table = new Uint32Array(1 + built.keys.length * 2 + 1);
  table[0] = built.keys.length;
  table.set(built.keys, 1);
  table.set(built.offsets, 1 + built.keys.length);
  return [section(keysTag, [u32Bytes(table)]), section(postingsTag, [built.postings])];
}

const ZERO_PADDING = Buffer.alloc(SECTION_ALIGNMENT);

function writeSections(filePath: string, sections: PendingSection[]): number {
  const toc = Buffer.alloc(sections.length * TOC_ENTRY_SIZE);
  const writer = new AtomicFileWriter(filePath);
  try {
    writer.write(Buffer.alloc(HEADER_SIZE)); // overwritten once the TOC is known
    sections.forEach((pending, i) => {
      writer.write(ZERO_PADDING.subarray(0, padding(writer.position)));
      const offset = writer.position;
      let crc = 0;
      for (const chunk of pending.chunks) {
        // zlib.crc32 restarts at 0 for a zero-length buffer whose data pointer is NULL (as after a native call).
        if (chunk.length === 0) continue;
        crc = zlib.crc32(chunk, crc);
        writer.write(chunk);
      }
      const entry = i * TOC_ENTRY_SIZE;
      toc.write(pending.tag, entry, 4, 'latin1');
      toc.writeUInt32LE(offset, entry + 4);
      toc.writeUInt32LE(pending.length, entry + 8);
      toc.writeUInt32LE(crc >>> 0, entry + 12);
    });
    writer.write(ZERO_PADDING.subarray(0, padding(writer.position)));
    const tocOffset = writer.position;
    writer.write(toc);
    const fileLength = writer.position;
    if (fileLength > MAX_SHARD_BYTES) throw new RangeError(`shard would be ${fileLength} bytes; the format allows < 4 GiB`);
    const header = Buffer.alloc(HEADER_SIZE);
    SHARD_MAGIC.copy(header, 0);
    header.writeUInt32LE(SHARD_FORMAT_VERSION, 8);
    header.writeUInt32LE(sections.length, 12);
    header.writeUInt32LE(tocOffset, 16);
    header.writeUInt32LE(zlib.crc32(toc) >>> 0, 20);
    header.writeUInt32LE(fileLength, 24);
    header.writeUInt32LE(zlib.crc32(header.subarray(0, 28)) >>> 0, 28);
    writer.overwrite(header, 0);
    writer.commit();
    return fileLength;
  } catch (error) {
    writer.abort();
    throw error;
  }
}

function padding(position: number): number {
  return (SECTION_ALIGNMENT - (position % SECTION_ALIGNMENT)) % SECTION_ALIGNMENT;
}
