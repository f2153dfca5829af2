/**
 * Shard file format constants. docs/index-format.md is the byte-level
 * specification; keep the two in step and record every change there.
 *
 * Version changelog:
 *   1 — first format: META, DOCS, PATH, CONT, LINE, SYMB, SSTR, CTRK, CTRP, PTRK, PTRP;
 *       trigrams with ASCII case folded.
 *   2 — trigrams keep case (case-insensitive lookups enumerate case variants): a
 *       case-sensitive literal no longer pulls in every file with another casing.
 *   3 — every posting carries a next-byte mask (which bytes follow the trigram in the
 *       document, by their low 3 bits): candidates need their trigrams followed by the
 *       literal's next bytes, not just present.
 *   4 — documents over 64 KiB also have 16 KiB blocks with trigram postings of their own
 *       (BLKS, BTRK, BTRP): a literal is verified only in the blocks that can hold it, not in
 *       the whole of every big candidate file.
 *   5 — no newline tables (LINE, and the three words of a document record that located
 *       them): a search counts a match's line in the content it has just read.
 */

export const SHARD_MAGIC = Buffer.from('TRAWLSHD', 'latin1');
export const SHARD_FORMAT_VERSION = 5;
export const SHARD_FILE_EXTENSION = '.trawl';

/** magic(8) version(4) sectionCount(4) tocOffset(4) tocCrc(4) fileLength(4) headerCrc(4). */
export const HEADER_SIZE = 32;
/** tag(4) offset(4) length(4) crc32(4). */
export const TOC_ENTRY_SIZE = 16;
/** Every section starts on this boundary so typed-array views need no copy. */
export const SECTION_ALIGNMENT = 8;
/** Offsets are u32: a shard must stay below 4 GiB. */
export const MAX_SHARD_BYTES = 0xffffffff;

export const Section = {
  meta: 'META',
  documents: 'DOCS',
  paths: 'PATH',
  contents: 'CONT',
  symbols: 'SYMB',
  strings: 'SSTR',
  contentTrigramKeys: 'CTRK',
  contentTrigramPostings: 'CTRP',
  pathTrigramKeys: 'PTRK',
  pathTrigramPostings: 'PTRP',
  blocks: 'BLKS',
  blockTrigramKeys: 'BTRK',
  blockTrigramPostings: 'BTRP',
} as const;
export type SectionTag = (typeof Section)[keyof typeof Section];

/** Sections whose absence makes a shard unreadable by this version. */
export const REQUIRED_SECTIONS: readonly SectionTag[] = Object.values(Section);

/**
 * Blocks (BLKS): what the writer gives blocks to. A document longer than
 * BLOCKED_DOCUMENT_BYTES is cut into BLOCK_BYTES blocks; each block's
 * trigrams are those of its bytes and the BLOCK_REACH bytes after it, so any
 * occurrence of a literal of up to BLOCK_REACH + 1 bytes that starts in a
 * block has all its trigrams (and next bytes) in that block's postings.
 */
export const BLOCK_BYTES = 16384;
export const BLOCK_REACH = 128;
export const BLOCKED_DOCUMENT_BYTES = 65536;

/** Document record: 10 little-endian u32 words. */
export const DocumentField = {
  pathOffset: 0,
  pathLength: 1,
  contentOffset: 2,
  contentLength: 3,
  originalSize: 4,
  firstSymbol: 5,
  symbolCount: 6,
  branchMaskLow: 7,
  branchMaskHigh: 8,
  /** low 16 bits: language index into META.languages; high 16 bits: DocumentFlags. */
  languageAndFlags: 9,
} as const;
export const DOCUMENT_RECORD_WORDS = 10;

/** Symbol record: 5 u32 words. */
export const SymbolField = {
  start: 0,
  end: 1,
  /** index into META.symbolKinds */
  kind: 2,
  /** 0 = no parent, else 1 + index into SSTR */
  parentName: 3,
  /** 0 = no parent kind, else 1 + index into META.symbolKinds */
  parentKind: 4,
} as const;
export const SYMBOL_RECORD_WORDS = 5;

export const DocumentFlags = {
  /** content not stored: it contains a NUL byte */
  binary: 1,
  /** content not stored: larger than the size cap */
  tooLarge: 2,
  /** content stored as bytes; it is not valid UTF-8 */
  invalidUtf8: 4,
} as const;

/** A repository can have at most this many indexed branches (one mask bit each). */
export const MAX_BRANCHES = 64;

/** Typed-array views of shard sections assume the file's byte order. */
export function assertLittleEndianHost(): void {
  if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
    throw new Error('trawl shards are little-endian and this build reads them through native views; big-endian hosts are not supported');
  }
}
