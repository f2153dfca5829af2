/**
 * Typed loader for trawl's N-API addon (native/src/addon.cc).
 *
 * The compiled addon lives in native/build/Release. This module is loaded from
 * its TypeScript source (tests), from dist/native and from the built CLI's bundle,
 * so it looks from each and, when none works, says every path it tried.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export type MadviseAdvice = 'normal' | 'random' | 'sequential' | 'willneed' | 'dontneed';

/** A compiled RE2 (native memory V8 does not see: free it with freeRegex). */
export type NativeRegex = { readonly brand: 'NativeRegex' };

export interface NativeAddon {
  /**
   * Maps a whole file read-only and MAP_SHARED (never write to `bytes`: the pages are read-only),
   * guarded: a page past the file's end, once it was truncated under the mapping, or one that cannot
   * be read, reads as zeros from there on instead of raising SIGBUS, and `mappingFaults[faultSlot]`
   * turns 1. An empty file maps to an empty buffer of slot 0, which never faults.
   */
  mmapFile(filePath: string): { bytes: Buffer; faultSlot: number };
  /** One byte per guarded mapping (mmapFile's `faultSlot`): 1 once a read of it faulted. Read-only. */
  readonly mappingFaults: Uint8Array;
  /**
   * One word per guarded mapping (mmapFile's `faultSlot`), shared by every thread that maps the same file:
   * 0 when the mapping is made; what is written there is the callers' convention (shard-reader.ts's).
   */
  readonly mappingNotes: Uint32Array;
  /** Advises the kernel about the access pattern of a mapped buffer. */
  madvise(buffer: Buffer, advice: MadviseAdvice): void;
  /** Takes an exclusive non-blocking flock on fd; false when someone else holds it. */
  tryLockExclusive(fd: number): boolean;
  /**
   * Appends the distinct trigrams (case kept) of bytes to out[outLength…], each
   * with its next-byte mask in bits 24–31 (docs/index-format.md, CTRP), and
   * returns the new length. seenBits (2^24 bits) and nextMasks (2^24 bytes) are
   * scratch tables, all zero before and after the call; out must have room for
   * bytes.length − 2 more.
   */
  collectTrigrams(bytes: Uint8Array, seenBits: Uint8Array, nextMasks: Uint8Array, out: Uint32Array, outLength: number): number;
  /**
   * Appends the distinct trigrams of `pairs` (trigrams with next-byte masks in
   * bits 24–31, as collectTrigrams writes them) to out[outLength…], each with
   * the OR of its masks, and returns the new length: the set of a text from the
   * sets of pieces that cover it. Scratch tables as for collectTrigrams; out
   * must have room for pairs.length more and not overlap pairs.
   */
  uniteTrigrams(pairs: Uint32Array, seenBits: Uint8Array, nextMasks: Uint8Array, out: Uint32Array, outLength: number): number;
  /**
   * Decodes the posting list in bytes[start, end) (docs/index-format.md, CTRP:
   * each gap − 1 varint followed by a mask byte) into out, writing only the
   * values whose mask has all of need's bits (a byte), and returns how many it
   * wrote, or a negative status (src/index/varint.ts names them).
   */
  decodePostings(bytes: Uint8Array, start: number, end: number, need: number, out: Uint32Array): number;
  /**
   * Keeps, in place at the front of candidates[0, length) (ascending), the
   * documents of the posting list in bytes[start, end) (as decodePostings
   * reads it) whose mask has all of need's bits, and returns how many it
   * kept, or a negative status as decodePostings.
   * Decoding stops after the last candidate.
   */
  intersectPostings(bytes: Uint8Array, start: number, end: number, need: number, candidates: Uint32Array, length: number): number;
  /** CRC-32C (Castagnoli) of bytes, continuing from `initial` (default 0): crc32c(b, crc32c(a)) === crc32c(a ‖ b). */
  crc32c(bytes: Uint8Array, initial?: number): number;
  /**
   * Writes to out the start offsets of successive non-overlapping occurrences
   * of needle (non-empty) in haystack at or after `from`, at most out.length;
   * returns how many it wrote. SIMD (AVX2 when the CPU has it, else SSE2).
   */
  findLiteral(haystack: Uint8Array, needle: Uint8Array, from: number, out: Uint32Array): number;
  /**
   * As findLiteral, with the ASCII letters of needle (ASCII, non-empty)
   * matching either case: the occurrences RE2's case-insensitive Unicode mode
   * finds, unless needle holds a k or s and U+212A (Kelvin sign) or U+017F
   * (long s), which fold to them, is in the haystack where it could change
   * the answer: then -1, and the caller asks RE2.
   */
  findLiteralIgnoringCase(haystack: Uint8Array, needle: Uint8Array, from: number, out: Uint32Array): number;
  /**
   * Compiles an RE2-syntax pattern (src/query/re2-syntax.ts, which carries the
   * flags as `(?m)` and the like); throws a SyntaxError with RE2's message when
   * RE2 refuses it, or "duplicate capture group name" (node-re2's refusal).
   */
  compileRegex(source: string, caseSensitive: boolean): NativeRegex;
  /**
   * Writes to out the [start, end] byte offsets of successive non-empty matches
   * of regex in haystack starting at or after `from` and ending at or before `to`
   * (default: the haystack's end; the bytes before `from` and after `to` are
   * context for ^, $ and \b), at most out.length / 2 of them, as node-re2's exec
   * loop finds them; returns how many pairs it wrote.
   */
  findRegex(regex: NativeRegex, haystack: Uint8Array, from: number, out: Uint32Array, to?: number): number;
  /** Whether regex matches anywhere in haystack, an empty match included (as RegExp's `test`). */
  testRegex(regex: NativeRegex, haystack: Uint8Array): boolean;
  /** The instructions of regex's program (RE2's ProgramSize): roughly what compiling it cost, in time and memory. */
  regexProgramSize(regex: NativeRegex): number;
  /** Frees the regex's RE2 now (findRegex then throws); otherwise it is freed some time after it is collected. */
  freeRegex(regex: NativeRegex): void;
  /**
   * The trigram posting index of a shard (docs/index-format.md, CTRK/CTRP):
   * `trigrams` holds each document's distinct trigrams with their next-byte
   * masks (as collectTrigrams writes them), document after document, and
   * firstPair[d] where document d's run starts.
   */
  buildPostings(trigrams: Uint32Array, firstPair: Uint32Array): { keys: Uint32Array; offsets: Uint32Array; postings: Buffer };
  /**
   * Lays out a file's chunks (src/search/response/chunks.ts) from its match ranges (flat [start, end] pairs
   * ordered by start): writes each range's start and end positions to `positions` (RANGE_WORDS words a range,
   * src/search/response/positions.ts) and each chunk to `chunks` (CHUNK_WORDS words, symbolsFrom and symbolsTo
   * 0), and returns how many chunks it wrote. Both must have room for every range.
   */
  layChunks(content: Uint8Array, ranges: Uint32Array, contextLines: number, positions: Uint32Array, chunks: Uint32Array): number;
  /**
   * Writes JSON.stringify(bytes.toString('utf8', start, end)) to out from `at` and returns where it stopped; when
   * out has less room than the most that may take, writes nothing and returns minus that room.
   */
  writeJsonString(bytes: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number;
  /**
   * Writes the JSON array of ranges [first, first + count) of `positions` (RANGE_WORDS words each,
   * src/search/response/positions.ts) to out from `at`, returning as writeJsonString does.
   */
  writeRangesJson(positions: Uint32Array, first: number, count: number, out: Uint8Array, at: number): number;
  /**
   * Writes the JSON array of a file's chunks (CHUNK_WORDS words each: byteOffset, to, lineNumber, firstRange,
   * ranges, symbolsFrom, symbolsTo; src/search/response/chunks.ts) to out from `at`, returning as
   * writeJsonString does: content[byteOffset, to) as a string, its ranges from `positions`, and
   * symbols[symbolsFrom, symbolsTo) as its `symbols` when not empty.
   */
  writeChunksJson(content: Uint8Array, chunks: Uint32Array, positions: Uint32Array, symbols: Uint8Array, out: Uint8Array, at: number): number;
  /** Sends a state string to $NOTIFY_SOCKET; false when not running under systemd. */
  sdNotify(state: string): boolean;
}

export class NativeLoadError extends Error {
  constructor(readonly tried: ReadonlyArray<{ path: string; error: string }>) {
    super(
      'trawl native addon could not be loaded (run `npm ci` or `npx node-gyp rebuild --directory native`); tried:\n' +
        tried.map((t) => `  ${t.path}: ${t.error}`).join('\n'),
    );
    this.name = 'NativeLoadError';
  }
}

function load(): NativeAddon {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const require = createRequire(import.meta.url);
  // Beside the sources (native/), from dist/native, and from the bundle's chunks (dist/src/chunks).
  const candidates = ['.', '../../native', '../../../native'].map((folder) => path.join(here, folder, 'build', 'Release', 'trawl_native.node'));
  const tried: { path: string; error: string }[] = [];
  for (const candidate of candidates) {
    try {
      return require(candidate) as NativeAddon;
    } catch (error) {
      tried.push({ path: candidate, error: (error as Error).message.split('\n')[0] ?? String(error) });
    }
  }
  throw new NativeLoadError(tried);
}

export const native: NativeAddon = load();
