/**
 * The audit trail: who did what, in a second append-only log (`audit.log`,
 * the state log's format). Recording never delays the request it describes:
 * records wait up to `commitDelayMs` to be written together, with one
 * fdatasync (a busy daemon records hundreds of searches a second, and no
 * reply waits for its record: a crash loses at most that window). A failed
 * write (the disk full) is reported, not thrown, and its records are kept,
 * in order, to be written again (up to `MAX_HELD_RECORDS`; older ones are
 * dropped and counted). The log grows by a record per
 * search, so it is kept in segments: past `segmentBytes`, or a day after its
 * first record, it is renamed `audit-<ms>.log` (the time it was closed: no
 * record in it is later) and a new one begun; segments closed longer ago
 * than the retention are deleted. Reading (owners, GET /api/ee/audit) writes
 * what waits first, then reads one page from the segments as they are on
 * disk, without holding a whole trail in memory.
 */
import type { AuditAction } from './audit-actions.js';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { AuditSegment } from './audit-segment.js';
import { AUDIT_LOG_NAME, StateLog, type TailRepair } from './state-log.js';
import type { StateRecord } from './state-record.js';

const DAY_MS = 86_400_000;
/** Default size at which the audit log is closed and a new segment begun: the open segment is read whole at start. */
export const AUDIT_SEGMENT_BYTES = 16 << 20;
/** A segment is also closed this long after its first record, so that the retention applies to a quiet trail too. */
const SEGMENT_MAX_AGE_MS = DAY_MS;
const ARCHIVE_PATTERN = new RegExp(`^${AUDIT_LOG_NAME}-(\\d+)\\.log$`);

export interface AuditTrailOptions {
  now?: () => number;
  onError: (error: Error) => void;
  /** Days a closed segment is kept (counted from when it was closed); 0 keeps every segment. */
  retentionDays: number;
  /** The closed segments' bytes together stay at most this: past it the oldest are deleted (reported); 0 or absent: no bound. */
  maxBytes?: number;
  segmentBytes?: number;
  /** How long a record may wait for others to share its write (default 100 ms; 0 writes each at once). */
  commitDelayMs?: number;
}

const COMMIT_DELAY_MS = 100;
/** Records kept for another write while the log cannot be written; beyond it the oldest are dropped (a record is a few hundred bytes). */
export const MAX_HELD_RECORDS = 10_000;
/** How long records kept after a failed write wait before they are written again. */
const RETRY_DELAY_MS = 5_000;

/** 'system': the offline `trawl admin` command on the server itself. */
export type ActorType = 'user' | 'anonymous' | 'system';

export interface AuditEvent {
  action: AuditAction;
  actorId: string | null;
  actorType: ActorType;
  targetId: string | null;
  targetType: string | null;
  metadata: Record<string, unknown>;
}

export interface AuditEntry extends AuditEvent {
  id: string;
  /** ISO 8601. */
  timestamp: string;
}

export class AuditTrail {
  private closed = false;
  private droppedAfterClose = 0;
  private rotating: Promise<void> | null = null;
  /** When the current segment's first record was made; null while it has none. */
  private segmentStartedAt: number | null;
  /** No rotation before this time (ms): a failed one is retried a minute later, not on every record. */
  private rotationNotBefore = 0;
  private readonly now: () => number;
  private readonly onError: (error: Error) => void;
  /** Records not yet handed to the log, and the timer that will. */
  private waiting: StateRecord[] = [];
  private commitTimer: NodeJS.Timeout | null = null;
  /** Closed segments' record counts and first record times, by file, as read by listings. */
  private readonly summaries = new Map<string, { count: number; firstAt: number }>();
  /** Settles once every record handed to the log so far is written (or kept for another try). */
  private written: Promise<void> = Promise.resolve();
  /** Damage reported so far, by file and offset. */
  private readonly reportedDamage = new Set<string>();
  /** Since the last write failed, until one succeeds: records dropped meanwhile (over `MAX_HELD_RECORDS`). */
  private failing: { dropped: number } | null = null;

  private constructor(
    private readonly log: StateLog,
    private readonly directory: string,
    private readonly options: AuditTrailOptions,
    /** What opening cut off the current segment's end (a crash mid-write), for the caller to report. */
    readonly repair: TailRepair | null,
  ) {
    this.now = options.now ?? Date.now;
    this.onError = options.onError;
    this.segmentStartedAt = StateLog.firstRecord(this.currentFile())?.at ?? null;
  }

  /**
   * Opens the trail for appending: the current segment's tail is checked and
   * repaired (its records are not decoded), expired segments are deleted.
   */
  static async open(directory: string, options: AuditTrailOptions): Promise<AuditTrail> {
    const { log, repair } = await StateLog.open(directory, AUDIT_LOG_NAME, { replay: false });
    const trail = new AuditTrail(log, directory, options, repair);
    trail.pruneSegments();
    return trail;
  }

  /** Appends a record in the background; after close (a request that outlived the shutdown's drain) it is reported, once, and dropped. */
  record(event: AuditEvent): void {
    if (this.closed) {
      if (!this.droppedAfterClose++) this.onError(new Error('audit records made after the audit log was closed are dropped'));
      return;
    }
    const record: StateRecord = { v: 1, type: 'audit', at: this.now(), id: randomUUID(), ...event };
    this.waiting.push(record);
    // While writes fail, records made before the next try count against the bound too.
    if (this.failing) this.dropOldest();
    const delay = this.options.commitDelayMs ?? COMMIT_DELAY_MS;
    // A timer already set (a batch forming, or records kept after a failed write) writes this record too.
    if (delay === 0 && !this.commitTimer) void this.commit(false);
    else this.commitTimer ??= setTimeout(() => void this.commit(), delay);
    this.segmentStartedAt ??= record.at;
    const full = this.log.bytes >= (this.options.segmentBytes ?? AUDIT_SEGMENT_BYTES);
    if (!this.rotating && record.at >= this.rotationNotBefore && (full || record.at - this.segmentStartedAt >= SEGMENT_MAX_AGE_MS)) {
      this.rotating = this.rotate().finally(() => (this.rotating = null));
    }
  }

  /**
   * Entries `[offset, offset + limit)` of those made in [since, until] (ms;
   * either open), newest first, and how many there are in all; every record
   * made before is included. Only the segments that the page or the count
   * need are read, a record decoded only when shown: a closed segment's count
   * and first time, once read, are remembered.
   */
  async page(since: number | undefined, until: number | undefined, offset: number, limit: number): Promise<{ total: number; entries: AuditEntry[] }> {
    await this.commit();
    while (this.rotating) await this.rotating;
    // Taken together, with no rotation in between: each record is in exactly one of them.
    const current = this.checked(this.currentFile(), new AuditSegment(readIfPresent(this.currentFile())));
    const closed = this.segments()
      .filter((segment) => since === undefined || segment.closedAt >= since)
      .reverse();
    const entries: AuditEntry[] = [];
    let total = 0;
    const take = (segment: AuditSegment) => {
      const { from, to } = segment.window(since, until);
      // Newest first: this segment's k-th entry is its record to - 1 - k.
      const end = Math.min(to - from, offset + limit - total);
      for (let k = Math.max(0, offset - total); k < end; k++) entries.push(entryOf(segment.record(to - 1 - k)));
      total += to - from;
    };
    take(current);
    for (const { file, closedAt } of closed) {
      const known = this.summaries.get(file);
      if (known) {
        if (until !== undefined && known.firstAt > until) continue;
        const whole = (since === undefined || known.firstAt >= since) && (until === undefined || closedAt <= until);
        if (whole && (total + known.count <= offset || total >= offset + limit)) {
          total += known.count;
          continue;
        }
      }
      let segment: AuditSegment;
      try {
        segment = this.checked(file, new AuditSegment(await fsp.readFile(file)));
      } catch {
        continue; // deleted by the retention meanwhile
      }
      this.summaries.set(file, { count: segment.count, firstAt: segment.count > 0 ? segment.record(0).at : Number.POSITIVE_INFINITY });
      take(segment);
    }
    return { total, entries };
  }

  /**
   * Reports `segment`'s damage, once per place: the records after it are listed all the same. A closed segment
   * never changes, so bytes after its last record are damage too (a truncated file); the current one's are a write.
   */
  private checked(file: string, segment: AuditSegment): AuditSegment {
    const current = file === this.currentFile();
    const report = (place: string, problem: string) => {
      if (this.reportedDamage.has(`${file}:${place}`)) return;
      this.reportedDamage.add(`${file}:${place}`);
      this.onError(new Error(`${path.basename(file)} ${problem}`));
    };
    for (const { from, to } of segment.damaged) {
      const repair = current ? '; the daemon will not start on it until `trawl admin --config FILE state repair` keeps every intact record and a copy' : '';
      report(String(from), `is damaged at bytes ${from}-${to} (a flipped bit, a bad sector): the intact records after it are listed all the same${repair}`);
    }
    if (!current && segment.tailBytes > 0)
      report('tail', `ends with ${segment.tailBytes} bytes that are no record (a truncated or damaged file): the records before them are listed`);
    return segment;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.commit();
    if (this.waiting.length > 0) this.onError(new Error(`${this.waiting.length} audit records could not be written before the audit log was closed`));
    await this.rotating;
    await this.log.close();
  }

  /**
   * Hands the waiting records to the log as one batch, after every batch before; resolves once it is written or
   * kept for another try. Unless `retry`, nothing is tried while records kept after a failed write wait for theirs.
   */
  private commit(retry = true): Promise<void> {
    if (retry && this.commitTimer) clearTimeout(this.commitTimer);
    if (retry) this.commitTimer = null;
    this.written = this.written.then(() => this.writeWaiting(retry)).catch(this.onError);
    return this.written;
  }

  private async writeWaiting(retry: boolean): Promise<void> {
    if (this.failing && !retry) return;
    const batch = this.waiting.splice(0);
    const outcomes = await Promise.allSettled(batch.map((record) => this.log.append(record)));
    const failed = batch.filter((_, k) => outcomes[k]!.status === 'rejected');
    if (failed.length === 0) {
      if (this.failing?.dropped) this.onError(new Error(`${this.failing.dropped} audit records were dropped while the audit log could not be written`));
      this.failing = null;
      return;
    }
    // Kept before the records made meanwhile, so that the log stays in time order.
    this.waiting = failed.concat(this.waiting);
    if (!this.failing) {
      this.failing = { dropped: 0 };
      const { reason } = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
      this.onError(new Error(`audit records are kept in memory (at most ${MAX_HELD_RECORDS}) until they can be written: ${(reason as Error).message}`));
    }
    this.dropOldest();
    if (!this.closed) this.commitTimer ??= setTimeout(() => void this.commit(), RETRY_DELAY_MS);
  }

  /** Drops the records waiting past `MAX_HELD_RECORDS`, the oldest first, counting them (`shift` is O(1) in V8: no copy per record). */
  private dropOldest(): void {
    while (this.waiting.length > MAX_HELD_RECORDS) {
      this.waiting.shift();
      this.failing!.dropped++;
    }
  }

  private async rotate(): Promise<void> {
    try {
      let closedAt = this.now();
      while (fs.existsSync(this.segmentFile(closedAt))) closedAt++;
      await this.log.rotate(this.segmentFile(closedAt));
      this.segmentStartedAt = null;
      this.pruneSegments();
    } catch (error) {
      this.rotationNotBefore = this.now() + 60_000;
      this.onError(error as Error);
    }
  }

  private currentFile(): string {
    return path.join(this.directory, `${AUDIT_LOG_NAME}.log`);
  }

  private segmentFile(closedAt: number): string {
    return path.join(this.directory, `${AUDIT_LOG_NAME}-${closedAt}.log`);
  }

  /** Closed segments, oldest first. */
  private segments(): { file: string; closedAt: number }[] {
    return fs
      .readdirSync(this.directory)
      .flatMap((name) => {
        const match = ARCHIVE_PATTERN.exec(name);
        return match ? [{ file: path.join(this.directory, name), closedAt: Number(match[1]) }] : [];
      })
      .sort((a, b) => a.closedAt - b.closedAt);
  }

  /** Deletes the closed segments older than the retention, then the oldest while they are over `maxBytes` together. */
  private pruneSegments(): void {
    const cutoff = this.options.retentionDays === 0 ? Number.NEGATIVE_INFINITY : this.now() - this.options.retentionDays * DAY_MS;
    const kept: string[] = [];
    for (const segment of this.segments()) {
      if (segment.closedAt < cutoff) this.deleteSegment(segment.file);
      else kept.push(segment.file);
    }
    const maxBytes = this.options.maxBytes ?? 0;
    if (maxBytes === 0) return;
    const sizes = kept.map((file) => fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0);
    let total = sizes.reduce((sum, size) => sum + size, 0);
    let deleted = 0;
    for (let k = 0; total > maxBytes; k++) {
      this.deleteSegment(kept[k]!);
      total -= sizes[k]!;
      deleted++;
    }
    if (deleted > 0)
      this.onError(new Error(`the closed audit segments were over ${maxBytes} bytes together: the oldest ${deleted} deleted before their retention`));
  }

  private deleteSegment(file: string): void {
    fs.rmSync(file, { force: true });
    this.summaries.delete(file);
  }
}

function readIfPresent(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw error;
  }
}

/** Every record of an audit log is an audit event. */
function entryOf(record: StateRecord): AuditEntry {
  const { action, actorId, actorType, targetId, targetType, metadata } = record as unknown as AuditEvent;
  return { id: String(record.id), timestamp: new Date(record.at).toISOString(), action, actorId, actorType, targetId, targetType, metadata };
}
