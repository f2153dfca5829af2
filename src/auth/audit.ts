/**
 * The audit trail: who did what, in a second append-only log (`audit.log`,
 * the state log's format). Recording never delays the request it describes:
 * records are group-committed in the background and a failed write is
 * reported, not thrown. Reading (owners, GET /api/ee/audit) decodes the file
 * as it is on disk.
 */
import { randomUUID } from 'node:crypto';
import { AUDIT_LOG_NAME, StateLog, type StateRecord } from './state-log.js';

/** 'system': the offline `trawl admin` command on the server itself. */
export type ActorType = 'user' | 'anonymous' | 'system';

export interface AuditEvent {
  action: string;
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

  private constructor(
    private readonly log: StateLog,
    private readonly directory: string,
    private readonly now: () => number,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Opens the trail for appending: its tail is checked and repaired, its records are not decoded (it grows by a record per search). */
  static async open(directory: string, options: { now?: () => number; onError: (error: Error) => void }): Promise<AuditTrail> {
    const { log } = await StateLog.open(directory, AUDIT_LOG_NAME, { replay: false });
    return new AuditTrail(log, directory, options.now ?? Date.now, options.onError);
  }

  /** Appends a record in the background; after close (a request that outlived the shutdown's drain) it is reported, once, and dropped. */
  record(event: AuditEvent): void {
    if (this.closed) {
      if (!this.droppedAfterClose++) this.onError(new Error('audit records made after the audit log was closed are dropped'));
      return;
    }
    const record: StateRecord = { v: 1, type: 'audit', at: this.now(), id: randomUUID(), ...event };
    this.log.append(record).catch(this.onError);
  }

  /** Entries in [since, until] (ms; either open), newest first. */
  list(since: number | undefined, until: number | undefined): AuditEntry[] {
    const entries: AuditEntry[] = [];
    for (const record of StateLog.readRecords(this.directory, AUDIT_LOG_NAME)) {
      if (record.type !== 'audit' || (since !== undefined && record.at < since) || (until !== undefined && record.at > until)) continue;
      const { action, actorId, actorType, targetId, targetType, metadata } = record as unknown as AuditEvent;
      entries.push({ id: String(record.id), timestamp: new Date(record.at).toISOString(), action, actorId, actorType, targetId, targetType, metadata });
    }
    return entries.reverse();
  }

  close(): Promise<void> {
    this.closed = true;
    return this.log.close();
  }
}
