/**
 * Unsigned LEB128 varints for values below 2^32, as used by posting lists and
 * newline tables. Decoding is bounds-checked against an explicit end.
 */
import { native } from '../../native/index.js';
import { ShardFormatError } from './errors.js';

/** Bytes needed to encode value (0 ≤ value < 2^32). */
function varintLength(value: number): number {
  return value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x200000 ? 3 : value < 0x10000000 ? 4 : 5;
}

/** Writes value at offset and returns the offset after it. */
function writeVarint(target: Uint8Array, offset: number, value: number): number {
  while (value >= 0x80) {
    target[offset++] = (value & 0x7f) | 0x80;
    value >>>= 7;
  }
  target[offset++] = value;
  return offset;
}

/** Stop decoding once `extra` (at least 1) values greater than `value` have been read. */
export interface StopAfter {
  value: number;
  extra: number;
}

/** What the addon's decoder returns instead of a count, as the messages a ShardFormatError carries. */
const DECODE_FAILURES: Record<number, string> = {
  [-1]: 'varint stream ends early',
  [-2]: 'varint longer than 5 bytes',
  [-3]: 'value overflows 32 bits',
  [-4]: 'stray bytes after varints',
};
const OUT_FULL = -5;

/** The decoder's output buffer, shared by every call on this thread (results are copied out of it). */
let scratch = new Uint32Array(1 << 16);

/** The decoded values as a view of the thread's scratch buffer, valid until the next decode on this thread. */
function decodeToScratch(bytes: Uint8Array, start: number, end: number, section: string, count: number, stop: StopAfter | undefined, need: number): Uint32Array {
  // No stream holds more values than bytes (or count), so the scratch needs no more room than that.
  const room = count >= 0 ? count : end - start;
  if (scratch.length < room) scratch = new Uint32Array(Math.max(room, 2 * scratch.length));
  const n = native.decodeAscending(bytes, start, end, count, stop ? stop.value : -1, stop ? stop.extra : 0, need, scratch);
  if (n < 0) {
    if (n === OUT_FULL) throw new Error('decodeAscending: scratch smaller than the stream'); // unreachable: room covers it
    throw new ShardFormatError('CORRUPT', `${section}: ${DECODE_FAILURES[n]}`);
  }
  return scratch.subarray(0, n);
}

function decode(bytes: Uint8Array, start: number, end: number, section: string, count: number, stop: StopAfter | undefined, need: number): Uint32Array {
  return decodeToScratch(bytes, start, end, section, count, stop, need).slice();
}

/**
 * Decodes a strictly ascending sequence from bytes[start, end). Each value is
 * stored as its gap to the previous value minus one, the first as itself
 * (previous = -1). With `count` the stream must hold exactly that many values;
 * without it, values are read until `end`. With `stop`, decoding ends early
 * (a prefix of the sequence). Throws ShardFormatError when the stream is
 * short, overlong, overflows 32 bits or leaves bytes unread.
 */
export function decodeAscending(bytes: Uint8Array, start: number, end: number, section: string, count?: number, stop?: StopAfter): Uint32Array {
  return decode(bytes, start, end, section, count ?? -1, stop, -1);
}

/**
 * Decodes a posting list (docs/index-format.md, CTRP: each ascending gap
 * varint followed by the document's next-byte mask byte) from bytes[start,
 * end), keeping only the documents whose mask has every bit of `need` (0
 * keeps all). Throws ShardFormatError as decodeAscending does.
 */
export function decodeMaskedPostings(bytes: Uint8Array, start: number, end: number, section: string, need: number): Uint32Array {
  return decode(bytes, start, end, section, -1, undefined, need);
}

/**
 * Keeps, at the front of `candidates` (ascending; overwritten), the documents
 * of the posting list in bytes[start, end) that are candidates and whose mask
 * has every bit of `need`, and returns them as a view of `candidates`. The
 * list is decoded only up to the last candidate and never copied: for a long
 * list against a few candidates, that is most of the cost. Throws
 * ShardFormatError for a malformed stream as decodeAscending does.
 */
export function intersectMaskedPostings(bytes: Uint8Array, start: number, end: number, section: string, need: number, candidates: Uint32Array): Uint32Array {
  const n = native.intersectPostings(bytes, start, end, need, candidates, candidates.length);
  if (n < 0) throw new ShardFormatError('CORRUPT', `${section}: ${DECODE_FAILURES[n]}`);
  return candidates.subarray(0, n);
}

/** Encoded size of an ascending sequence in the form decodeAscending reads. */
export function ascendingLength(values: ArrayLike<number>, from = 0, to = values.length): number {
  let bytes = 0;
  let previous = -1;
  for (let i = from; i < to; i++) {
    bytes += varintLength(values[i]! - previous - 1);
    previous = values[i]!;
  }
  return bytes;
}

/** Writes an ascending sequence in the form decodeAscending reads; returns the end offset. */
export function writeAscending(target: Uint8Array, offset: number, values: ArrayLike<number>, from = 0, to = values.length): number {
  let previous = -1;
  for (let i = from; i < to; i++) {
    offset = writeVarint(target, offset, values[i]! - previous - 1);
    previous = values[i]!;
  }
  return offset;
}
