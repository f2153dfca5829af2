/**
 * Where the auth store's changes are committed and where it learns of them: a single node's state log
 * (`LocalJournal`), or a cluster's log on etcd (etcd-journal.ts). Either way a change reaches the state only
 * through `JournalHost.apply`, in the journal's order, once it is durable (docs/state-log.md, docs/cluster.md).
 */
import { loadInstanceKey } from './secrets.js';
import { StateLog, type TailRepair } from './state-log.js';
import type { StateRecord } from './state-record.js';

/** What a journal is given by the store it serves. */
export interface JournalHost {
  /** Applies committed records, in order (the store's state and its listeners). */
  apply(records: StateRecord[]): void;
  /** Records that rebuild the state applied so far (a compaction's, a cluster's first state). */
  snapshot(): StateRecord[];
  /** Replaces the state applied so far with what `records` rebuild (a cluster log's snapshot: docs/cluster.md). */
  reset(records: StateRecord[]): void;
}

export interface Journal {
  /** The key secrets are digested under: shared by every node of a cluster. */
  readonly instanceKey: Buffer;
  /** Whether other processes commit to this journal too (then a credential not known yet may come soon). */
  readonly shared: boolean;
  /** Where the state applied so far stands in the journal (a cluster's log revision; 0 for a local one). */
  readonly position: number;
  /**
   * Commits `records` together, in order; resolves with their position once they are durable and applied.
   * `decidedOn`: they were decided on the state at that position, and are refused (StaleDecisionError) when
   * something else was committed since.
   */
  commit(records: StateRecord[], decidedOn: number | null): Promise<number>;
  /** Resolves once everything committed anywhere before the call is applied here. */
  catchUp(): Promise<void>;
  /**
   * Resolves once the state applied here is known to be current, as far as can be known in a moment: at once while
   * it is (a single node's always is), else after asking the cluster's log (not when it cannot be reached).
   * `latest`: ask even when it is known current, so that what any node acknowledged before the call is applied.
   */
  current(latest?: boolean): Promise<void>;
  /** Resolves with whether the state applied here reached `position` within `timeoutMs`. */
  reached(position: number, timeoutMs: number): Promise<boolean>;
  /** Rewrites the local log as `snapshot` of the state applied so far. */
  compact(snapshot: () => StateRecord[]): Promise<void>;
  close(): Promise<void>;
}

/** A checked commit decided on a state that is no longer the latest: catch up and decide again. */
export class StaleDecisionError extends Error {
  constructor() {
    super('the state changed while the change was decided');
    this.name = 'StaleDecisionError';
  }
}

/** One process's state log (state-log.ts) in the state directory: every change is an append, applied once synced. */
export class LocalJournal implements Journal {
  readonly shared = false;
  /** One process commits: nothing else can change the state under a decision. */
  readonly position = 0;

  private constructor(
    private readonly log: StateLog,
    private readonly host: JournalHost,
    readonly instanceKey: Buffer,
  ) {}

  /** Opens the log (StateLogLockedError while another process holds it), replays it into `host`, and reports a cut tail. */
  static async open(directory: string, host: JournalHost): Promise<{ journal: LocalJournal; repair: TailRepair | null }> {
    const { log, records, repair } = await StateLog.open(directory);
    host.apply(records);
    return { journal: new LocalJournal(log, host, loadInstanceKey(directory)), repair };
  }

  async commit(records: StateRecord[]): Promise<number> {
    // Appended in one turn of the event loop: one write and one fdatasync.
    await Promise.all(records.map((record) => this.log.append(record)));
    this.host.apply(records);
    return this.position;
  }

  async catchUp(): Promise<void> {}

  async current(): Promise<void> {}

  async reached(): Promise<boolean> {
    return true;
  }

  compact(snapshot: () => StateRecord[]): Promise<void> {
    return this.log.compact(snapshot);
  }

  close(): Promise<void> {
    return this.log.close();
  }
}
