/**
 * Unsigned LEB128 varints for values below 2^32, as used by posting lists and
 * newline tables. Decoding is bounds-checked against an explicit end.
 */
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

/**
 * Decodes a strictly ascending sequence from bytes[start, end). Each value is
 * stored as its gap to the previous value minus one, the first as itself
 * (previous = -1). With `count` the stream must hold exactly that many values;
 * without it, values are read until `end`. With `stop`, decoding ends early
 * (a prefix of the sequence). Throws ShardFormatError when the stream is
 * short, overlong, overflows 32 bits or leaves bytes unread.
 */
export function decodeAscending(bytes: Uint8Array, start: number, end: number, section: string, count?: number, stop?: StopAfter): Uint32Array {
  // A prefix is usually short: start small and grow, rather than zero-fill room for every value.
  let out = new Uint32Array(stop ? Math.min(count ?? end - start, 1024) : count ?? end - start);
  let position = start;
  let previous = -1;
  let n = 0;
  let beyond = 0;
  while (count === undefined ? position < end : n < count) {
    if (stop && previous > stop.value && ++beyond >= stop.extra) return out.subarray(0, n);
    if (n === out.length) {
      const grown = new Uint32Array(Math.min(out.length * 2, count ?? end - start));
      grown.set(out);
      out = grown;
    }
    if (position >= end) throw new ShardFormatError('CORRUPT', `${section}: varint stream ends early`);
    let value = bytes[position++]!;
    if (value >= 0x80) {
      // Most gaps fit one byte; longer ones take this loop (multiplying, as 7-bit shifts past 31 bits overflow).
      value &= 0x7f;
      let scale = 0x80;
      for (;;) {
        if (position >= end) throw new ShardFormatError('CORRUPT', `${section}: varint stream ends early`);
        const byte = bytes[position++]!;
        value += (byte & 0x7f) * scale;
        if (byte < 0x80) break;
        scale *= 0x80;
        if (scale > 2 ** 28) throw new ShardFormatError('CORRUPT', `${section}: varint longer than 5 bytes`);
      }
    }
    previous += value + 1;
    if (previous > 0xffffffff) throw new ShardFormatError('CORRUPT', `${section}: value overflows 32 bits`);
    out[n++] = previous;
  }
  if (position !== end) throw new ShardFormatError('CORRUPT', `${section}: ${end - position} stray bytes after varints`);
  return count === undefined ? out.subarray(0, n) : out;
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
