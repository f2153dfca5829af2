/**
 * The auth store's one write path: records committed through the journal (journal.ts) and applied to the state
 * in the journal's order, operations that decide on the state run one at a time (and decided again when another
 * node changed the state first), the log compacted every so often, and listeners told of every change.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuthState } from './auth-state.js';
import { LocalJournal, StaleDecisionError, type Journal, type JournalHost } from './journal.js';
import { authRecord, NARROWING_RECORDS, type AuthRecord } from './model.js';
import type { TailRepair } from './state-log.js';
import type { StateRecord } from './state-record.js';

export interface CommitterOptions {
  /** The state directory, whose own log is the journal unless `openJournal` opens another. */
  directory: string;
  now: () => number;
  /** Opens the journal changes are committed to (default: the state directory's log, LocalJournal). */
  openJournal?: (host: JournalHost) => Promise<{ journal: Journal; repair: TailRepair | null }>;
  /** Told when a compaction in the background fails (the log stays as it was). */
  onBackgroundError?: (error: Error, what: string) => void;
}

/** Appends after which the log is compacted into a snapshot. */
const COMPACT_AFTER_APPENDS = 10_000;
/** In a cluster, a credential not known yet waits this long for the log before it is refused (docs/cluster.md). */
export const UNKNOWN_CREDENTIAL_WAIT_MS = 100;
/** A checked change is decided again this often, at most, while other nodes keep changing the state first. */
const DECISION_ATTEMPTS = 20;

export class Committer {
  private serial: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private appendsSinceCompaction = 0;
  private compacting: Promise<void> | null = null;
  /** Set while an exclusive operation runs: the journal position its decisions were made at, which its commits are checked against. */
  private readonly deciding = new AsyncLocalStorage<{ basis: number }>();
  private journal!: Journal;
  /** Resolves once the other nodes of a cluster have applied the log through a position (or been waited for long enough). */
  private confirm: ((position: number) => Promise<void>) | null = null;

  private constructor(
    private readonly state: AuthState,
    private readonly options: CommitterOptions,
  ) {}

  /** Opens the journal (by default the state directory's log, taking its lock: StateLogLockedError while another process has it) and replays it into `state`. */
  static async open(state: AuthState, options: CommitterOptions): Promise<{ committer: Committer; repair: TailRepair | null }> {
    const committer = new Committer(state, options);
    const host: JournalHost = {
      apply: (records) => committer.applied(records),
      snapshot: () => state.snapshot(options.now()),
      reset: (records) => {
        state.clear();
        committer.applied(records);
      },
    };
    const { journal, repair } = await (options.openJournal ?? ((host: JournalHost) => LocalJournal.open(options.directory, host)))(host);
    committer.journal = journal;
    return { committer, repair };
  }

  get shared(): boolean {
    return this.journal.shared;
  }

  get instanceKey(): Buffer {
    return this.journal.instanceKey;
  }

  /** Commits records together; resolves once they are applied (checked when an exclusive operation decided them). */
  async commit(...records: AuthRecord[]): Promise<void> {
    const at = this.options.now();
    const decision = this.deciding.getStore();
    const position = await this.journal.commit(
      records.map((record) => authRecord(record, at)),
      decision?.basis ?? null,
    );
    // The operation's next commit builds on this one, and on nothing else.
    if (decision) decision.basis = position;
    // A revocation is acknowledged once no other node still takes what it revoked.
    if (this.confirm && records.some((record) => NARROWING_RECORDS.has(record.type))) await this.confirm(position);
  }

  /** From now on, a commit that narrows access resolves only after `confirm` (the other nodes applied it: docs/cluster.md). */
  confirmNarrowingWith(confirm: (position: number) => Promise<void>): void {
    this.confirm = confirm;
  }

  /** Whether the state applied here reached `position` within `timeoutMs` (a peer's confirmation). */
  reached(position: number, timeoutMs: number): Promise<boolean> {
    return this.journal.reached(position, timeoutMs);
  }

  /**
   * Runs `run` alone: operations that decide on the state (the last owner, free seats, a unique email) commit what
   * they decided only if nothing else was committed since; otherwise they catch up and decide again.
   */
  exclusively<T>(run: () => Promise<T>): Promise<T> {
    const decide = async (): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.deciding.run({ basis: this.journal.position }, run);
        } catch (error) {
          if (!(error instanceof StaleDecisionError) || attempt === DECISION_ATTEMPTS) throw error;
          await this.journal.catchUp();
        }
      }
    };
    const result = this.serial.then(decide, decide);
    this.serial = result.catch(() => undefined);
    return result;
  }

  /** Calls `listener` after every change is applied; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * `lookup()` (a credential), or, when other nodes commit to the journal too and it is null now, its value once
   * the journal brings it, waiting at most `waitMs`: a key made on one node works on the next request to another.
   */
  async eventually<T>(lookup: () => T | null, waitMs = UNKNOWN_CREDENTIAL_WAIT_MS): Promise<T | null> {
    // A node that was paused or cut off first learns what it missed (a revocation, say).
    await this.journal.current();
    const found = lookup();
    if (found !== null || !this.journal.shared) return found;
    return new Promise((resolve) => {
      const finish = (value: T | null) => {
        clearTimeout(timer);
        stop();
        resolve(value);
      };
      const timer = setTimeout(() => finish(lookup()), waitMs);
      const stop = this.onChange(() => {
        const value = lookup();
        if (value !== null) finish(value);
      });
    });
  }

  /** Resolves once what any node acknowledged before the call is applied here (bounded; at once on a single node). */
  latest(): Promise<void> {
    return this.journal.current(true);
  }

  /** Rewrites the log as a snapshot of the state (dropping expired tokens and everything superseded). */
  async compact(): Promise<void> {
    if (!this.compacting) {
      this.compacting = this.journal.compact(() => this.state.snapshot(this.options.now())).finally(() => (this.compacting = null));
      this.appendsSinceCompaction = 0;
    }
    await this.compacting;
  }

  /** Waits for acknowledged writes and a compaction in progress, then releases the journal. */
  async close(): Promise<void> {
    await this.serial.catch(() => undefined);
    await this.compacting;
    await this.journal.close();
  }

  /** Applies records the journal committed (this process's or, in a cluster, another node's), tells the listeners. */
  private applied(records: StateRecord[]): void {
    for (const record of records) this.state.apply(record);
    this.appendsSinceCompaction += records.length;
    // Not while the journal is still opening (replaying).
    if (this.journal && this.appendsSinceCompaction >= COMPACT_AFTER_APPENDS && !this.compacting)
      void this.compact().catch((error: Error) => this.options.onBackgroundError?.(error, 'compaction'));
    for (const listener of this.listeners) listener();
  }
}
