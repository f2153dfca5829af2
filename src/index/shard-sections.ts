/**
 * The parts of a shard file (docs/index-format.md) read before its records: the header and table of
 * contents with their checksums, the metadata, and the string pool. Any bad byte is a ShardFormatError.
 */
import zlib from 'node:zlib';
import { HEADER_SIZE, REQUIRED_SECTIONS, SECTION_ALIGNMENT, SHARD_FORMAT_VERSION, SHARD_MAGIC, Section, TOC_ENTRY_SIZE } from './format.js';
import { ShardFormatError } from './errors.js';
import type { ShardMeta } from './model.js';

/** Where a section lies in the file. */
export interface SectionSpan {
  offset: number;
  length: number;
}

/** The sections a 'structure' open does not checksum: verified when the indexer wrote the file. */
const BULK_SECTIONS = new Set<string>([Section.contents, Section.contentTrigramPostings, Section.pathTrigramPostings, Section.blockTrigramPostings]);

export function corrupt(message: string): ShardFormatError {
  return new ShardFormatError('CORRUPT', message);
}

/** `verify`: which section checksums to check, 'noted' none (the mapping's note says a thread did). */
export function readTableOfContents(bytes: Buffer, verify: 'full' | 'structure' | 'noted'): Map<string, SectionSpan> {
  if (bytes.length < HEADER_SIZE) throw new ShardFormatError('TRUNCATED', `file is ${bytes.length} bytes, shorter than the header`);
  if (!bytes.subarray(0, SHARD_MAGIC.length).equals(SHARD_MAGIC)) throw new ShardFormatError('BAD_MAGIC', 'not a trawl shard');
  if (zlib.crc32(bytes.subarray(0, 28)) >>> 0 !== bytes.readUInt32LE(28)) throw new ShardFormatError('CHECKSUM', 'header checksum mismatch');
  const version = bytes.readUInt32LE(8);
  if (version !== SHARD_FORMAT_VERSION) {
    throw new ShardFormatError('UNSUPPORTED_VERSION', `format version ${version}; this build reads version ${SHARD_FORMAT_VERSION}`);
  }
  const sectionCount = bytes.readUInt32LE(12);
  const tocOffset = bytes.readUInt32LE(16);
  const fileLength = bytes.readUInt32LE(24);
  if (bytes.length < fileLength) throw new ShardFormatError('TRUNCATED', `file is ${bytes.length} bytes, header says ${fileLength}`);
  if (bytes.length > fileLength) throw corrupt(`file is ${bytes.length} bytes, header says ${fileLength}`);
  const tocEnd = tocOffset + sectionCount * TOC_ENTRY_SIZE;
  if (tocOffset < HEADER_SIZE || tocEnd !== fileLength) throw corrupt('table of contents is not at the end of the file');
  const toc = bytes.subarray(tocOffset, tocEnd);
  if (zlib.crc32(toc) >>> 0 !== bytes.readUInt32LE(20)) throw new ShardFormatError('CHECKSUM', 'table of contents checksum mismatch');
  const spans = new Map<string, SectionSpan>();
  for (let at = 0; at < toc.length; at += TOC_ENTRY_SIZE) {
    const tag = toc.toString('latin1', at, at + 4);
    const offset = toc.readUInt32LE(at + 4);
    const length = toc.readUInt32LE(at + 8);
    if (offset % SECTION_ALIGNMENT !== 0 || offset < HEADER_SIZE || offset + length > tocOffset) {
      throw corrupt(`section ${JSON.stringify(tag)} at ${offset}+${length} is outside the data area`);
    }
    if (spans.has(tag)) throw corrupt(`section ${JSON.stringify(tag)} appears twice`);
    if (verify === 'full' || (verify === 'structure' && !BULK_SECTIONS.has(tag))) {
      if (zlib.crc32(bytes.subarray(offset, offset + length)) >>> 0 !== toc.readUInt32LE(at + 12)) {
        throw new ShardFormatError('CHECKSUM', `section ${tag} checksum mismatch`);
      }
    }
    spans.set(tag, { offset, length }); // unknown tags are kept but never read: newer writers may add sections
  }
  for (const tag of REQUIRED_SECTIONS) if (!spans.has(tag)) throw corrupt(`required section ${tag} is missing`);
  return spans;
}

export function parseMeta(bytes: Buffer, span: SectionSpan): ShardMeta {
  let meta: unknown;
  try {
    meta = JSON.parse(bytes.toString('utf8', span.offset, span.offset + span.length));
  } catch {
    throw corrupt('META is not JSON');
  }
  const m = meta as ShardMeta;
  const isStrings = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string');
  if (
    typeof m !== 'object' ||
    m === null ||
    !Number.isInteger(m.documentCount) ||
    m.documentCount < 0 ||
    !isStrings(m.languages) ||
    m.languages.length === 0 ||
    !isStrings(m.symbolKinds) ||
    !Array.isArray(m.branches) ||
    !m.branches.every((b) => typeof b?.name === 'string' && typeof b?.commit === 'string') ||
    typeof m.repository?.name !== 'string' ||
    !Number.isInteger(m.repository?.id)
  ) {
    throw corrupt('META lacks required fields');
  }
  return m;
}

/** SSTR (docs/index-format.md): every offset checked at open, each string decoded on its first use. */
export class StringPool {
  private readonly decoded: (string | undefined)[];

  private constructor(
    private readonly bytes: Buffer,
    private readonly offsets: number,
    private readonly data: number,
    readonly count: number,
  ) {
    this.decoded = new Array<string | undefined>(count);
  }

  /** `walk`: check every offset (false: the mapping's note says a thread did). */
  static parse(bytes: Buffer, span: SectionSpan, walk: boolean): StringPool {
    if (span.length < 8) throw corrupt('SSTR is shorter than its header');
    const count = bytes.readUInt32LE(span.offset);
    const dataStart = 4 + (count + 1) * 4;
    if (dataStart > span.length) throw corrupt('SSTR offsets run past the section');
    let previous = 0;
    for (let i = 0; walk && i <= count; i++) {
      const offset = bytes.readUInt32LE(span.offset + 4 + i * 4);
      if (offset < previous || dataStart + offset > span.length) throw corrupt(`SSTR offset ${i} is out of order or out of bounds`);
      previous = offset;
    }
    if (walk && dataStart + previous !== span.length) throw corrupt('SSTR has bytes after its last string');
    return new StringPool(bytes, span.offset + 4, span.offset + dataStart, count);
  }

  /** String `index` (0 ≤ index < count). */
  at(index: number): string {
    let text = this.decoded[index];
    if (text === undefined) {
      const start = this.bytes.readUInt32LE(this.offsets + index * 4);
      const end = this.bytes.readUInt32LE(this.offsets + index * 4 + 4);
      text = this.bytes.toString('utf8', this.data + start, this.data + end);
      this.decoded[index] = text;
    }
    return text;
  }
}

/** A Uint32Array over bytes[offset, offset + 4·length): a view when aligned (mappings are), else a copy. */
export function u32View(bytes: Buffer, offset: number, length: number): Uint32Array {
  const start = bytes.byteOffset + offset;
  if (start % 4 === 0) return new Uint32Array(bytes.buffer, start, length);
  const copy = new Uint32Array(length);
  new Uint8Array(copy.buffer).set(bytes.subarray(offset, offset + length * 4));
  return copy;
}
