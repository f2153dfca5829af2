/**
 * The state log: the daemon's durable state (users, keys, tokens, grants,
 * settings) as an append-only file of records, replayed on start.
 *
 * Records are state-record.ts's. An append is
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
import { native } from '../../native/index.js';
import { decodeRecords, encodeRecord, MAX_RECORD_BYTES, RECORD_HEADER_BYTES, salvageRecords, type StateRecord } from './state-record.js';

export const STATE_LOG_FILE = 'state.log';
/** The audit trail: a second log of the same format (docs/state-log.md). */
export const AUDIT_LOG_NAME = 'audit';

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

/** What a failed write of the data directory means to the people using the server, by errno code. */
const WRITE_FAILURES: Record<string, string> = {
  ENOSPC: "the disk that holds the server's data directory is full",
  EDQUOT: "the server's disk quota for its data directory is used up",
  EROFS: "the server's data directory is on a read-only file system",
  EIO: "the server's disk reported an I/O error",
};

/** Records that could not be written (the disk full, read-only, failing): none of them is in the log. */
export class StateLogWriteError extends Error {
  constructor(cause: NodeJS.ErrnoException) {
    super(
      `nothing was saved: ${(cause.code && WRITE_FAILURES[cause.code]) ?? "the server's data directory could not be written"} (${cause.code ?? cause.message})`,
      { cause },
    );
    this.name = 'StateLogWriteError';
  }
}

export class StateLogLockedError extends Error {
  constructor(directory: string, lockFile: string) {
    super(`${directory} is in use by another trawl process (${lockFile} is locked): stop it, or use its HTTP API`);
    this.name = 'StateLogLockedError';
  }
}

/**
 * Rewrites the log `<name>.log` in `directory` (its lock taken) with every
 * intact record, after copying the whole file to `<name>.log.corrupt-<ms>`:
 * what `trawl admin state repair` does. `followUp` is told the records kept
 * and the damaged bytes dropped before anything is written: it returns
 * records to append after the kept ones, or throws to refuse the repair
 * (nothing is then written). Returns the copy's path (null when there was
 * nothing to repair), the records kept and appended, and the byte ranges dropped.
 */
export async function repairLog(
  directory: string,
  name = 'state',
  followUp: (kept: StateRecord[], dropped: Buffer[]) => StateRecord[] = () => [],
): Promise<{ copy: string | null; kept: number; appended: number; dropped: { from: number; to: number }[] }> {
  const lockFd = lockLog(directory, name);
  try {
    const file = path.join(directory, `${name}.log`);
    if (!fs.existsSync(file)) return { copy: null, kept: 0, appended: 0, dropped: [] };
    const bytes = fs.readFileSync(file);
    const { records, skipped } = salvageRecords(bytes);
    if (skipped.length === 0) return { copy: null, kept: records.length, appended: 0, dropped: [] };
    const appended = followUp(
      records,
      skipped.map((range) => bytes.subarray(range.from, range.to)),
    );
    const copy = `${file}.corrupt-${Date.now()}`;
    fs.copyFileSync(file, copy, fs.constants.COPYFILE_EXCL);
    const temporary = `${file}.repair`;
    fs.writeFileSync(temporary, Buffer.concat([...records, ...appended].map(encodeRecord)), { mode: 0o600 });
    const fd = fs.openSync(temporary, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(temporary, file);
    await syncDirectory(directory);
    return { copy, kept: records.length, appended: appended.length, dropped: skipped };
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
  static async open(
    directory: string,
    name = 'state',
    options: { replay?: boolean } = {},
  ): Promise<{ log: StateLog; records: StateRecord[]; repair: TailRepair | null }> {
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

  /** Appends a record; resolves once it is on disk (fdatasync), rejects (StateLogWriteError) if it could not be written. */
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
      } catch (error) {
        await out.close();
        await fsp.rm(temporary, { force: true });
        throw new StateLogWriteError(error as NodeJS.ErrnoException);
      }
      await out.close();
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
      const header = Buffer.alloc(RECORD_HEADER_BYTES);
      if (fs.readSync(fd, header, 0, RECORD_HEADER_BYTES, 0) < RECORD_HEADER_BYTES) return null;
      const length = Math.min(header.readUInt32LE(0), MAX_RECORD_BYTES + 1); // an impossible length is reported by decodeRecords
      const bytes = Buffer.alloc(RECORD_HEADER_BYTES + length);
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
      for (let written = 0; written < bytes.length;) written += (await this.handle.write(bytes, written)).bytesWritten;
      await this.handle.datasync();
      this.syncs++;
      this.size += bytes.length;
      for (const append of batch) append.resolve();
    } catch (error) {
      // Cut a partial batch off, so the next append does not land after garbage.
      await this.handle.truncate(this.size).catch(() => undefined);
      const failure = new StateLogWriteError(error as NodeJS.ErrnoException);
      for (const append of batch) append.reject(failure);
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
