/**
 * The state log: the daemon's durable state (users, keys, tokens, grants,
 * settings) as an append-only file of records, replayed on start.
 *
 * A record is `[u32 length][u32 crc32c][msgpack body]` (little-endian; the
 * CRC-32C covers the body), the body a map `{v, type, at, …}`. An append is
 * acknowledged only after fdatasync; appends that arrive while a sync is in
 * flight are written and synced together (group commit). One process writes:
 * it holds an exclusive flock on `state.lock` for as long as the log is open.
 * On open, a torn or corrupt tail (a crash mid-write) is cut back to the
 * last good record and reported; nothing before it is lost. A damaged record
 * with intact records after it is not a tail: open() refuses
 * (StateLogCorruptError) rather than drop acknowledged records, and
 * `repairLog` (`trawl admin state repair`) keeps every intact record and a
 * copy of the whole file.
 * Compaction writes a snapshot to a temporary file and renames it over the
 * log; rotation (the audit trail's) renames the log away and starts a new
 * one. Format: docs/state-log.md.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Packr } from 'msgpackr';
import { native } from '../../native/index.js';

export const STATE_LOG_FILE = 'state.log';
/** The audit trail: a second log of the same format (docs/state-log.md). */
export const AUDIT_LOG_NAME = 'audit';
const HEADER_BYTES = 8;
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

/** What open() found and cut off. */
export interface TailRepair {
  /** Byte offset where the good records end (the file is truncated there). */
  goodBytes: number;
  /** Bytes removed. */
  droppedBytes: number;
  reason: string;
}

/** A damaged record with intact records after it: cutting the log there would drop acknowledged state. */
export class StateLogCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly offset: number,
    reason: string,
    readonly intactAfter: number,
  ) {
    super(
      `${file} is damaged (${reason}) with ${intactAfter} intact records after it: not a torn tail, so it is not cut; ` +
        'run `trawl admin --config FILE state repair`, which keeps every intact record and a copy of the whole file',
    );
    this.name = 'StateLogCorruptError';
  }
}

export class StateLogLockedError extends Error {
  constructor(directory: string, lockFile: string) {
    super(`${directory} is in use by another trawl process (${lockFile} is locked): stop it, or use its HTTP API`);
    this.name = 'StateLogLockedError';
  }
}

/** One record as it is stored. */
export function encodeRecord(record: StateRecord): Buffer {
  const body = msgpack.pack(record);
  if (body.length > MAX_RECORD_BYTES) throw new RangeError(`a state record of ${body.length} bytes is over the limit of ${MAX_RECORD_BYTES}`);
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(native.crc32c(body), 4);
  return Buffer.concat([header, body]);
}

/**
 * Walks the framing of `bytes`, calling `visit` with each whole, intact
 * record's body and offset; stops at the first that is not, or when `visit`
 * returns a problem. Returns where the good records end, and why.
 */
function scanRecords(bytes: Buffer, visit: (body: Buffer, offset: number) => string | null): { goodBytes: number; problem: string | null } {
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < HEADER_BYTES) return { goodBytes: at, problem: `a torn record header at byte ${at}` };
    const length = bytes.readUInt32LE(at);
    if (length > MAX_RECORD_BYTES) return { goodBytes: at, problem: `an impossible record length ${length} at byte ${at}` };
    // No record is empty: zeros there are what a crash can leave past the last write.
    if (length === 0) return { goodBytes: at, problem: `an empty record at byte ${at}` };
    if (bytes.length - at - HEADER_BYTES < length) return { goodBytes: at, problem: `a torn record at byte ${at} (${length} bytes announced)` };
    const body = bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
    if (native.crc32c(body) !== bytes.readUInt32LE(at + 4)) return { goodBytes: at, problem: `a checksum mismatch at byte ${at}` };
    const problem = visit(body, at);
    if (problem !== null) return { goodBytes: at, problem };
    at += HEADER_BYTES + length;
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
  if (bytes.length - at < HEADER_BYTES) return null;
  const length = bytes.readUInt32LE(at);
  if (length > MAX_RECORD_BYTES || bytes.length - at - HEADER_BYTES < length) return null;
  const body = bytes.subarray(at + HEADER_BYTES, at + HEADER_BYTES + length);
  if (native.crc32c(body) !== bytes.readUInt32LE(at + 4)) return null;
  try {
    const record = msgpack.unpack(body);
    // A run of zero bytes (what a crash can leave past the end) frames as empty records: they do not decode as one.
    return isRecord(record) ? { record, end: at + HEADER_BYTES + length } : null;
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
 * Rewrites the log `<name>.log` in `directory` (its lock taken) with every
 * intact record, after copying the whole file to `<name>.log.corrupt-<ms>`:
 * what `trawl admin state repair` does. Returns the copy's path (null when
 * there was nothing to repair), the records kept and the byte ranges dropped.
 */
export async function repairLog(directory: string, name = 'state'): Promise<{ copy: string | null; kept: number; dropped: { from: number; to: number }[] }> {
  const lockFd = lockLog(directory, name);
  try {
    const file = path.join(directory, `${name}.log`);
    if (!fs.existsSync(file)) return { copy: null, kept: 0, dropped: [] };
    const bytes = fs.readFileSync(file);
    const { records, skipped } = salvageRecords(bytes);
    if (skipped.length === 0) return { copy: null, kept: records.length, dropped: [] };
    const copy = `${file}.corrupt-${Date.now()}`;
    fs.copyFileSync(file, copy, fs.constants.COPYFILE_EXCL);
    const temporary = `${file}.repair`;
    fs.writeFileSync(temporary, Buffer.concat(records.map(encodeRecord)), { mode: 0o600 });
    const fd = fs.openSync(temporary, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temporary, file);
    await syncDirectory(directory);
    return { copy, kept: records.length, dropped: skipped };
  } finally {
    fs.closeSync(lockFd);
  }
}

/** Takes the exclusive lock `<name>.lock` of a log; its descriptor (closing it releases the lock). StateLogLockedError when another process holds it. */
function lockLog(directory: string, name: string): number {
  const lockFile = `${name}.lock`;
  const lockFd = fs.openSync(path.join(directory, lockFile), 'a', 0o600);
  if (!native.tryLockExclusive(lockFd)) {
    fs.closeSync(lockFd);
    throw new StateLogLockedError(directory, lockFile);
  }
  return lockFd;
}

/** Where each intact record at the start of `bytes` begins: framing and checksums checked, nothing decoded. */
export function recordOffsets(bytes: Buffer): number[] {
  const offsets: number[] = [];
  scanRecords(bytes, (_body, at) => {
    offsets.push(at);
    return null;
  });
  return offsets;
}

/** The record at `offset` of `bytes`, one of `recordOffsets(bytes)`. */
export function decodeRecordAt(bytes: Buffer, offset: number): StateRecord {
  const body = bytes.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + bytes.readUInt32LE(offset));
  const record: unknown = msgpack.unpack(body);
  if (!isRecord(record)) throw new Error(`a record without v, type and at at byte ${offset}`);
  return record;
}

function isRecord(value: unknown): value is StateRecord {
  if (typeof value !== 'object' || value === null) return false;
  const { v, type, at } = value as Record<string, unknown>;
  return Number.isInteger(v) && typeof type === 'string' && typeof at === 'number';
}

interface PendingAppend {
  bytes: Buffer;
  resolve(): void;
  reject(error: Error): void;
}

export class StateLog {
  private pending: PendingAppend[] = [];
  private flushing: Promise<void> | null = null;
  /** While the file is being replaced (compaction, rotation), appends wait. */
  private replacing = false;
  private closed = false;
  /** fdatasync calls so far (group commit makes it smaller than the appends). */
  syncs = 0;

  private constructor(
    private readonly directory: string,
    private readonly file: string,
    private readonly lockFd: number,
    private handle: fsp.FileHandle,
    private size: number,
  ) {}

  /**
   * Opens (creating) the log `<name>.log` in `directory`: takes the lock
   * `<name>.lock`, replays every good record (unless `replay` is false: then
   * records are checked, not decoded or returned) and cuts off a bad tail.
   * Throws StateLogLockedError when another process holds the log.
   */
  static async open(directory: string, name = 'state', options: { replay?: boolean } = {}): Promise<{ log: StateLog; records: StateRecord[]; repair: TailRepair | null }> {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    const lockFd = lockLog(directory, name);
    try {
      const file = path.join(directory, `${name}.log`);
      const bytes = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
      const { records, goodBytes, problem } = decodeRecords(bytes, options.replay ?? true);
      let repair: TailRepair | null = null;
      if (problem) {
        const after = salvageRecords(bytes, goodBytes + 1).records.length;
        if (after > 0) throw new StateLogCorruptError(file, goodBytes, problem, after);
        fs.truncateSync(file, goodBytes);
        repair = { goodBytes, droppedBytes: bytes.length - goodBytes, reason: problem };
      }
      const handle = await fsp.open(file, 'a', 0o600);
      await handle.datasync();
      return { log: new StateLog(directory, file, lockFd, handle, goodBytes), records, repair };
    } catch (error) {
      fs.closeSync(lockFd);
      throw error;
    }
  }

  /** Appends a record; resolves once it is on disk (fdatasync), rejects if it could not be written. */
  append(record: StateRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the state log is closed'));
    let bytes: Buffer;
    try {
      bytes = encodeRecord(record);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ bytes, resolve, reject });
      this.kick();
    });
  }

  /**
   * Replaces the log with a snapshot of the state: written to a temporary
   * file, synced, renamed over the log. `snapshot` is called once every append
   * already being written is acknowledged, and must return the state they
   * produced; appends made from then on wait and go to the new log.
   */
  async compact(snapshot: () => StateRecord[]): Promise<void> {
    this.replacing = true;
    try {
      while (this.flushing) await this.flushing;
      const records = snapshot();
      const file = this.file;
      const temporary = `${file}.compact.tmp`;
      const bytes = Buffer.concat(records.map(encodeRecord));
      const out = await fsp.open(temporary, 'w', 0o600);
      try {
        await out.writeFile(bytes);
        await out.sync();
      } finally {
        await out.close();
      }
      await fsp.rename(temporary, file);
      await syncDirectory(this.directory);
      await this.handle.close();
      this.handle = await fsp.open(file, 'a', 0o600);
      this.size = bytes.length;
    } finally {
      this.replacing = false;
      this.kick();
    }
  }

  /**
   * Renames the log to `archiveFile` (same directory) and goes on in a new,
   * empty log: every append acknowledged before is in the archive; appends
   * made meanwhile wait and go to the new log. A crash in between leaves
   * either the old log or the archive plus a log created on the next open.
   */
  async rotate(archiveFile: string): Promise<void> {
    this.replacing = true;
    try {
      while (this.flushing) await this.flushing;
      await fsp.rename(this.file, archiveFile);
      await this.handle.close();
      this.handle = await fsp.open(this.file, 'a', 0o600);
      await syncDirectory(this.directory);
      this.size = 0;
    } finally {
      this.replacing = false;
      this.kick();
    }
  }

  /** The first record of a log file, when it has a good one (read without taking the lock). */
  static firstRecord(file: string): StateRecord | null {
    if (!fs.existsSync(file)) return null;
    const fd = fs.openSync(file, 'r');
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      if (fs.readSync(fd, header, 0, HEADER_BYTES, 0) < HEADER_BYTES) return null;
      const length = Math.min(header.readUInt32LE(0), MAX_RECORD_BYTES + 1); // an impossible length is reported by decodeRecords
      const bytes = Buffer.alloc(HEADER_BYTES + length);
      const read = fs.readSync(fd, bytes, 0, bytes.length, 0);
      return decodeRecords(bytes.subarray(0, read)).records[0] ?? null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Bytes of good records in the log. */
  get bytes(): number {
    return this.size;
  }

  /** Waits for acknowledged appends, then releases the file and the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.flushing) await this.flushing;
    await this.handle.close();
    fs.closeSync(this.lockFd);
  }

  private kick(): void {
    if (!this.flushing && !this.replacing && this.pending.length > 0) {
      // Started in a microtask: appends made in the same turn of the event loop share one write and fdatasync.
      this.flushing = Promise.resolve()
        .then(() => this.flush())
        .finally(() => {
          this.flushing = null;
          this.kick();
        });
    }
  }

  /** Writes and syncs everything pending as one batch. */
  private async flush(): Promise<void> {
    const batch = this.pending.splice(0);
    const bytes = Buffer.concat(batch.map((append) => append.bytes));
    try {
      for (let written = 0; written < bytes.length; ) written += (await this.handle.write(bytes, written)).bytesWritten;
      await this.handle.datasync();
      this.syncs++;
      this.size += bytes.length;
      for (const append of batch) append.resolve();
    } catch (error) {
      // Cut a partial batch off, so the next append does not land after garbage.
      await this.handle.truncate(this.size).catch(() => undefined);
      for (const append of batch) append.reject(error as Error);
    }
  }
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await fsp.open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
