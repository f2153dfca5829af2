/**
 * Posting lists (docs/index-format.md, CTRP): ascending document ids stored
 * as unsigned LEB128 varints of gap − 1, each followed by the document's
 * next-byte mask. The writer encodes them in the addon; these read them,
 * bounds-checked against an explicit end.
 */
import { native } from '../../native/index.js';
import { ShardFormatError } from './errors.js';
import { takeIdList } from './id-lists.js';

/** What the addon's decoder returns instead of a count, as the messages a ShardFormatError carries. */
const DECODE_FAILURES: Record<number, string> = {
  [-1]: 'varint stream ends early',
  [-2]: 'varint longer than 5 bytes',
  [-3]: 'value overflows 32 bits',
};
const OUT_FULL = -4;

/**
 * Decodes a posting list from bytes[start, end), keeping only the documents
 * whose mask has every bit of `need` (0 keeps all), into a list of
 * index/id-lists.ts (valid until it is recycled). Throws ShardFormatError
 * (naming `section`) when the stream ends early, a varint is longer than 5
 * bytes or a value overflows 32 bits.
 */
export function decodeMaskedPostings(bytes: Uint8Array, start: number, end: number, section: string, need: number): Uint32Array {
  // No list holds more documents than bytes, so this is room enough.
  const out = takeIdList(end - start);
  const n = native.decodePostings(bytes, start, end, need, out);
  if (n < 0) {
    if (n === OUT_FULL) throw new Error('decodePostings: output smaller than the stream'); // unreachable: room covers it
    throw new ShardFormatError('CORRUPT', `${section}: ${DECODE_FAILURES[n]}`);
  }
  return out.subarray(0, n);
}

/**
 * Keeps, at the front of `candidates` (ascending; overwritten), the documents
 * of the posting list in bytes[start, end) that are candidates and whose mask
 * has every bit of `need`, and returns them as a view of `candidates`. The
 * list is decoded only up to the last candidate and never copied: for a long
 * list against a few candidates, that is most of the cost. Throws
 * ShardFormatError for a malformed stream as decodeMaskedPostings does.
 */
export function intersectMaskedPostings(bytes: Uint8Array, start: number, end: number, section: string, need: number, candidates: Uint32Array): Uint32Array {
  const n = native.intersectPostings(bytes, start, end, need, candidates, candidates.length);
  if (n < 0) throw new ShardFormatError('CORRUPT', `${section}: ${DECODE_FAILURES[n]}`);
  return candidates.subarray(0, n);
}
