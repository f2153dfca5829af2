/**
 * The records of the state log and the audit trail, as bytes: `[u32 length][u32 crc32c][msgpack body]`
 * (little-endian; the CRC-32C covers the body), the body a map `{v, type, at, …}`. Encoding, decoding,
 * and finding the intact records in damaged bytes. Format: docs/state-log.md.
 */
import { Packr } from 'msgpackr';
import { native } from '../../native/index.js';

/** Bytes before a record's body: its length and its CRC-32C. */
export const RECORD_HEADER_BYTES = 8;
/**
 * Standard MessagePack, no extension types (docs/state-log.md, format 2): maps as plain objects, undefined as
 * nil, 64-bit integers as numbers, as @msgpack/msgpack (format 1's writer) wrote and read them.
 */
const msgpack = new Packr({ useRecords: false, variableMapSize: true, encodeUndefinedAsNil: true, mapsAsObjects: true, int64AsType: 'number' });
/** A length field above this is corruption, not a record. */
export const MAX_RECORD_BYTES = 16 << 20;

/** A record body: `v` the record format version of its type, `type` what it says, `at` when (ms since the epoch). */
export interface StateRecord {
  v: number;
  type: string;
  at: number;
  [field: string]: unknown;
}

/** One record as it is stored. */
export function encodeRecord(record: StateRecord): Buffer {
  const body = msgpack.pack(record);
  if (body.length > MAX_RECORD_BYTES) throw new RangeError(`a state record of ${body.length} bytes is over the limit of ${MAX_RECORD_BYTES}`);
  const header = Buffer.alloc(RECORD_HEADER_BYTES);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(native.crc32c(body), 4);
  return Buffer.concat([header, body]);
}

/**
 * Walks the framing of `bytes` from `from`, calling `visit` with each whole,
 * intact record's body and offset; stops at the first that is not, or when
 * `visit` returns a problem. Returns where the good records end, and why.
 */
function scanRecords(bytes: Buffer, visit: (body: Buffer, offset: number) => string | null, from = 0): { goodBytes: number; problem: string | null } {
  let at = from;
  while (at < bytes.length) {
    if (bytes.length - at < RECORD_HEADER_BYTES) return { goodBytes: at, problem: `a torn record header at byte ${at}` };
    const length = bytes.readUInt32LE(at);
    if (length > MAX_RECORD_BYTES) return { goodBytes: at, problem: `an impossible record length ${length} at byte ${at}` };
    // No record is empty: zeros there are what a crash can leave past the last write.
    if (length === 0) return { goodBytes: at, problem: `an empty record at byte ${at}` };
    if (bytes.length - at - RECORD_HEADER_BYTES < length) return { goodBytes: at, problem: `a torn record at byte ${at} (${length} bytes announced)` };
    const body = bytes.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + length);
    if (native.crc32c(body) !== bytes.readUInt32LE(at + 4)) return { goodBytes: at, problem: `a checksum mismatch at byte ${at}` };
    const problem = visit(body, at);
    if (problem !== null) return { goodBytes: at, problem };
    at += RECORD_HEADER_BYTES + length;
  }
  return { goodBytes: at, problem: null };
}

/**
 * The good records at the start of `bytes`, and where and why they end when
 * something follows that is not a whole, intact record. Without
 * `decodeBodies` only the framing and checksums are checked (no records are
 * returned): what finding the end of a log needs.
 */
export function decodeRecords(bytes: Buffer, decodeBodies = true): { records: StateRecord[]; goodBytes: number; problem: string | null } {
  const records: StateRecord[] = [];
  const { goodBytes, problem } = scanRecords(bytes, (body, at) => {
    if (!decodeBodies) return null;
    let record: unknown;
    try {
      record = msgpack.unpack(body);
    } catch {
      return `an undecodable record at byte ${at}`;
    }
    if (!isRecord(record)) return `a record without v, type and at at byte ${at}`;
    records.push(record);
    return null;
  });
  return { records, goodBytes, problem };
}

/** The record whose header starts at `at`, if it is whole, its checksum holds and it decodes as a record. */
function intactRecordAt(bytes: Buffer, at: number): { record: StateRecord; end: number } | null {
  if (bytes.length - at < RECORD_HEADER_BYTES) return null;
  const length = bytes.readUInt32LE(at);
  // No record is empty: a run of zero bytes (what a crash can leave past the end) would frame as empty records.
  if (length === 0 || length > MAX_RECORD_BYTES || bytes.length - at - RECORD_HEADER_BYTES < length) return null;
  const body = bytes.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + length);
  if (native.crc32c(body) !== bytes.readUInt32LE(at + 4)) return null;
  try {
    const record = msgpack.unpack(body);
    return isRecord(record) ? { record, end: at + RECORD_HEADER_BYTES + length } : null;
  } catch {
    return null;
  }
}

/**
 * Every intact record of `bytes` from `from` on, found by resynchronising
 * byte by byte over damage, with the byte ranges skipped.
 */
export function salvageRecords(bytes: Buffer, from = 0): { records: StateRecord[]; skipped: { from: number; to: number }[] } {
  const records: StateRecord[] = [];
  const skipped: { from: number; to: number }[] = [];
  let at = from;
  let damageFrom: number | null = null;
  while (at < bytes.length) {
    const found = intactRecordAt(bytes, at);
    if (!found) {
      damageFrom ??= at;
      at++;
      continue;
    }
    if (damageFrom !== null) skipped.push({ from: damageFrom, to: at });
    damageFrom = null;
    records.push(found.record);
    at = found.end;
  }
  if (damageFrom !== null) skipped.push({ from: damageFrom, to: bytes.length });
  return { records, skipped };
}

/**
 * Where each intact record of `bytes` begins (framing and checksums checked, nothing decoded), the byte ranges
 * of damage with intact records after them (resynchronised over byte by byte, as `salvageRecords` does), and
 * where the intact records end: before a damaged tail (a write cut short, or one still under way), if any.
 */
export function recordOffsets(bytes: Buffer): { offsets: number[]; damaged: { from: number; to: number }[]; end: number } {
  const offsets: number[] = [];
  const damaged: { from: number; to: number }[] = [];
  const keep = (_body: Buffer, at: number) => {
    offsets.push(at);
    return null;
  };
  for (let at = 0; ;) {
    const { goodBytes } = scanRecords(bytes, keep, at);
    let next = goodBytes + 1;
    while (next < bytes.length && !intactRecordAt(bytes, next)) next++;
    if (next >= bytes.length) return { offsets, damaged, end: goodBytes };
    damaged.push({ from: goodBytes, to: next });
    at = next;
  }
}

/** The record at `offset` of `bytes`, one of `recordOffsets(bytes)`. */
export function decodeRecordAt(bytes: Buffer, offset: number): StateRecord {
  const body = bytes.subarray(offset + RECORD_HEADER_BYTES, offset + RECORD_HEADER_BYTES + bytes.readUInt32LE(offset));
  const record: unknown = msgpack.unpack(body);
  if (!isRecord(record)) throw new Error(`a record without v, type and at at byte ${offset}`);
  return record;
}

/**
 * What can still be read in damaged bytes whose records no longer decode: the dotted words (record types are
 * stored as plain text, e.g. `user.removed`) and the UUIDs (the ids records carry).
 */
export function legibleIn(bytes: Buffer): { words: Set<string>; ids: Set<string> } {
  const text = bytes.toString('latin1');
  return {
    words: new Set(text.match(/[a-z]+(?:\.[a-zA-Z]+)+/g) ?? []),
    ids: new Set(text.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g) ?? []),
  };
}

/**
 * The record bodies damaged bytes still frame as (each length field pointing exactly at the next, checksums not
 * checked), or null when their framing is damaged too: then which records they held cannot be told.
 */
export function framesIn(bytes: Buffer): Buffer[] | null {
  const bodies: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    if (bytes.length - at < RECORD_HEADER_BYTES) return null;
    const length = bytes.readUInt32LE(at);
    if (length === 0 || length > bytes.length - at - RECORD_HEADER_BYTES) return null;
    bodies.push(bytes.subarray(at + RECORD_HEADER_BYTES, at + RECORD_HEADER_BYTES + length));
    at += RECORD_HEADER_BYTES + length;
  }
  return bodies;
}

function isRecord(value: unknown): value is StateRecord {
  if (typeof value !== 'object' || value === null) return false;
  const { v, type, at } = value as Record<string, unknown>;
  return Number.isInteger(v) && typeof type === 'string' && typeof at === 'number';
}
