/**
 * A cluster's state log on etcd (docs/cluster.md, "Credentials"): each commit is one key under
 * `trawl/state/records/`, its value the commit's records framed as in state.log, its revision the commit's place
 * in the log. Every node applies the commits in revision order, its own included, and keeps its local state.log as
 * a checkpoint of what it applied, ending in a `cluster.applied` record that names the revision; at start it
 * replays the checkpoint and reads from etcd only what came after. Every commit also writes `trawl/state/head`, so
 * a change decided on the state (the last owner, free seats) is committed only if head is still the revision the
 * node decided on. Retries are idempotent: a commit's key is created once.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { IKeyValue, IRangeResponse, Watcher } from 'etcd3';
import { isEtcdError, type EtcdKeys } from '../cluster/etcd.js';
import type { Logger } from '../obs/logger.js';
import { ClusterStateCorruptError, ClusterStateUnavailableError, ForeignStateError } from './cluster-errors.js';
import {
  COMMIT_BUDGET_MS,
  commitKeys,
  headRevision,
  MAX_COMMIT_BYTES,
  MAX_KEYS_PER_TRANSACTION,
  readIdentity,
  RECORDS_PREFIX,
  seed,
  SNAPSHOT_KEY,
  STATE_PREFIX,
} from './etcd-log.js';
import { AppliedRevision } from './applied-revision.js';
import { Freshness } from './etcd-freshness.js';
import { compactLog, firstState, parseSnapshotMeta, readSnapshot, type SnapshotMeta } from './etcd-snapshot.js';
import type { Journal, JournalHost } from './journal.js';
import { derivedKey, loadInstanceKey, storeInstanceKey } from './secrets.js';
import { STATE_LOG_FILE, StateLog, type TailRepair } from './state-log.js';
import { decodeRecords, encodeRecord, type StateRecord } from './state-record.js';

/** The local checkpoint's last record: the cluster and the revision its records were applied through. */
const CHECKPOINT = 'cluster.applied';
/** A watch that failed (its revision compacted away) is started again after this long. */
const REWATCH_MS = 500;
/** A node started on its checkpoint alone asks etcd again after this long. */
const RECONNECT_MS = 1_000;
/** A listing whose snapshot is replaced while its chunks are read is tried again, this many times in all. */
const SNAPSHOT_READS = 5;

const NOT_OURS = "holds users and keys that are not this cluster's, and the cluster's credential log already exists (another node started it)";

export interface EtcdJournalOptions {
  etcd: EtcdKeys;
  /** The state directory: the checkpoint (state.log) and the instance key. */
  directory: string;
  /** The key the nodes share (cluster.keyFile): the instance key is sealed under it in etcd. */
  clusterKey: Buffer;
  node: string;
  /** Commits the log on etcd holds before a node compacts it into a snapshot (etcd-snapshot.ts). */
  snapshotAfterChanges: number;
  logger: Logger;
}

interface PendingCommit {
  key: string;
  value: Buffer;
  resolve(revision: number): void;
  reject(error: Error): void;
}

export class EtcdJournal implements Journal {
  readonly shared = true;
  /** The revision of the last commit applied here (head's, as of then). */
  private readonly progress = new AppliedRevision();
  private pending: PendingCommit[] = [];
  private flushing = false;
  private applying: Promise<void> = Promise.resolve();
  private watcher: Watcher | null = null;
  /** Set when the log cannot be applied any more (a damaged commit): every change is refused with it. */
  private failure: Error | null = null;
  /** Refuses changes from a start on the checkpoint alone until etcd answers with its log (for good if it holds another). */
  private unreachable: Error | null = null;
  /** False once a checkpoint write failed: the checkpoint stays as it was, and the next start reads the rest from etcd. */
  private checkpointing = true;
  private closed = false;
  private freshness: Freshness | null = null;
  /** Commits applied since this node last asked whether the log needs compacting, and that compaction. */
  private changesSinceCompaction = 0;
  private compactingLog: Promise<void> | null = null;

  private constructor(
    private readonly options: EtcdJournalOptions,
    private readonly host: JournalHost,
    private readonly log: StateLog,
    private readonly clusterId: string,
    readonly instanceKey: Buffer,
  ) {}

  /**
   * Opens the checkpoint, joins the cluster's log (starting it with this node's state when there is none yet), and
   * applies what the checkpoint lacks. Rejects with ForeignStateError when this node's state is not the cluster's.
   */
  static async open(options: EtcdJournalOptions, host: JournalHost): Promise<{ journal: EtcdJournal; repair: TailRepair | null }> {
    const { log, records, repair } = await StateLog.open(options.directory);
    const file = path.join(options.directory, STATE_LOG_FILE);
    try {
      let last = records.length - 1;
      while (last >= 0 && records[last]!.type !== CHECKPOINT) last--;
      const checkpoint = last < 0 ? null : records[last]!;
      const local = (checkpoint ? records.slice(0, last) : records).filter((record) => record.type !== CHECKPOINT);
      host.apply(local);
      const sealingKey = derivedKey(options.clusterKey, 'cluster instance key');
      let identity: Awaited<ReturnType<typeof readIdentity>>;
      try {
        identity = await readIdentity(options.etcd, sealingKey);
      } catch (error) {
        if (!checkpoint || !(await isEtcdError(error))) throw error;
        // A node that applied the log before starts on its checkpoint: reads go on, changes wait for etcd.
        const journal = new EtcdJournal(options, host, log, checkpoint.clusterId as string, loadInstanceKey(options.directory, false));
        journal.progress.advance(checkpoint.revision as number);
        journal.unreachable = new ClusterStateUnavailableError(`etcd has not answered since this node started (${(error as Error).message})`, error);
        options.logger.warn({ err: error }, 'cluster: etcd cannot be reached; starting on the checkpoint of the credential log');
        journal.reconnect(sealingKey, file, last !== records.length - 1);
        return { journal, repair };
      }
      let from = 0;
      if (!identity) {
        identity = { id: randomUUID(), instanceKey: loadInstanceKey(options.directory) };
        const state = await firstState(options.etcd, Buffer.concat(host.snapshot().map(encodeRecord)));
        from = await seed(options.etcd, options.node, sealingKey, identity, state);
        if (from === 0) {
          // Another node started the log first: join it, if this node has nothing of its own.
          identity = (await readIdentity(options.etcd, sealingKey))!;
          if (local.length > 0) throw new ForeignStateError(file, NOT_OURS);
        }
      } else if (checkpoint?.clusterId === identity.id) {
        from = checkpoint.revision as number;
        await checkHead(options.etcd, file, from);
      } else if (local.length > 0) {
        throw new ForeignStateError(file, NOT_OURS);
      }
      storeInstanceKey(options.directory, identity.instanceKey);
      const journal = new EtcdJournal(options, host, log, identity.id, identity.instanceKey);
      journal.progress.advance(from);
      // The checkpoint ends at its last cluster.applied record: records after it (a crash between them) come again from etcd.
      await journal.begin(checkpoint?.clusterId !== identity.id || last !== records.length - 1);
      return { journal, repair };
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  /** Rewrites the checkpoint (`rewrite`: it is not this log's through head), then follows the log on etcd. */
  private async begin(rewrite: boolean): Promise<void> {
    if (rewrite) await this.log.compact(() => [...this.host.snapshot(), this.checkpoint()]);
    await this.follow();
    this.freshness = new Freshness(this.options.etcd, (revision, timeoutMs) => this.reached(revision, timeoutMs));
    this.compactWhenGrown();
  }

  /**
   * Follows the log once etcd answers, after a start on the checkpoint alone; changes are refused until then, and for
   * good when etcd holds another log than the one the checkpoint is of (restart the node: docs/cluster.md).
   */
  private reconnect(sealingKey: Buffer, file: string, rewrite: boolean): void {
    const attempt = async () => {
      const identity = await readIdentity(this.options.etcd, sealingKey);
      if (identity?.id !== this.clusterId) throw new ForeignStateError(file, 'is a checkpoint of another credential log than the one on etcd now');
      await checkHead(this.options.etcd, file, this.progress.head);
      await this.begin(rewrite);
      this.unreachable = null;
      this.options.logger.info({ revision: this.progress.head }, 'cluster: etcd answers; the credential log is followed again');
    };
    const again = () => {
      if (this.closed) return;
      attempt().catch((error: Error) => {
        if (!(error instanceof ForeignStateError)) return void setTimeout(again, RECONNECT_MS).unref();
        this.unreachable = new ClusterStateUnavailableError(error.message, error);
        this.options.logger.error({ err: error }, 'cluster: the credential log on etcd is not the one this node applied; restart the node');
      });
    };
    setTimeout(again, RECONNECT_MS).unref();
  }

  get position(): number {
    return this.progress.head;
  }

  async commit(records: StateRecord[], decidedOn: number | null): Promise<number> {
    const refusal = this.failure ?? this.unreachable;
    if (refusal) throw refusal;
    const value = Buffer.concat(records.map(encodeRecord));
    if (value.length > MAX_COMMIT_BYTES) throw new RangeError(`a change of ${value.length} bytes is over the cluster's limit of ${MAX_COMMIT_BYTES}`);
    const key = RECORDS_PREFIX + randomUUID();
    const revision =
      decidedOn !== null
        ? await this.write({ keys: [key], values: [value], decidedOn })
        : await new Promise<number>((resolve, reject) => {
            this.pending.push({ key, value, resolve, reject });
            queueMicrotask(() => this.flush());
          });
    await this.applied(revision);
    return revision;
  }

  /** Resolves once everything committed before the call is applied here (ClusterStateUnavailableError when etcd does not answer). */
  async catchUp(): Promise<void> {
    if (this.unreachable) throw this.unreachable;
    const head = await headRevision(this.options.etcd).catch((error: unknown) => {
      throw new ClusterStateUnavailableError('etcd did not answer', error);
    });
    await this.applied(head);
  }

  async current(latest = false): Promise<void> {
    if (!this.closed) await this.freshness?.current(latest);
  }

  compact(snapshot: () => StateRecord[]): Promise<void> {
    // In the apply chain: between two applied commits, so the snapshot and the revision it names agree.
    const compacted = this.applying.then(() => this.log.compact(() => [...snapshot(), this.checkpoint()]));
    this.applying = compacted.catch(() => undefined);
    return compacted;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.freshness?.stop();
    await this.compactingLog;
    await this.watcher?.cancel().catch(() => undefined);
    for (const waiter of this.pending.splice(0)) waiter.reject(new ClusterStateUnavailableError('the server is shutting down'));
    await this.applying;
    await this.log.close();
    this.options.etcd.close();
  }

  /** The checkpoint record for the state applied through `revision`. */
  private checkpoint(revision = this.progress.head): StateRecord {
    return { v: 1, type: CHECKPOINT, at: Date.now(), clusterId: this.clusterId, revision };
  }

  /** Commits the waiting changes, up to a transaction's worth, one transaction at a time (group commit). */
  private flush(): void {
    if (this.flushing || this.pending.length === 0) return;
    this.flushing = true;
    const batch: PendingCommit[] = [];
    let bytes = 0;
    while (this.pending.length > 0 && batch.length < MAX_KEYS_PER_TRANSACTION && bytes + this.pending[0]!.value.length <= MAX_COMMIT_BYTES) {
      bytes += this.pending[0]!.value.length;
      batch.push(this.pending.shift()!);
    }
    this.write({ keys: batch.map((commit) => commit.key), values: batch.map((commit) => commit.value), decidedOn: null })
      .then(
        (revision) => batch.forEach((commit) => commit.resolve(revision)),
        (error: Error) => batch.forEach((commit) => commit.reject(error)),
      )
      .finally(() => {
        this.flushing = false;
        this.flush();
      });
  }

  /** Commits `keys` in one transaction (etcd-log.ts `commitKeys`). */
  private write(change: Parameters<typeof commitKeys>[2]): Promise<number> {
    return commitKeys(this.options.etcd, this.options.node, change, { logger: this.options.logger, stopped: () => this.closed });
  }

  /** Resolves once the commit at `revision` is applied here; rejects when that takes longer than the budget. */
  private async applied(revision: number): Promise<void> {
    if (!(await this.reached(revision, COMMIT_BUDGET_MS)))
      throw this.failure ?? new ClusterStateUnavailableError(`revision ${revision} was committed but not yet received from etcd`);
  }

  reached(revision: number, timeoutMs: number): Promise<boolean> {
    return this.progress.reached(revision, timeoutMs);
  }

  /**
   * Reads every commit after the one applied last (or the log's snapshot, when it covers commits not applied here:
   * they may be deleted), then watches for more from the revision read; again when the watch fails.
   */
  private async follow(): Promise<void> {
    const { etcd, logger } = this.options;
    let listed: IRangeResponse;
    for (let attempt = 1; ; attempt++) {
      listed = await etcd
        .getAll()
        .prefix(STATE_PREFIX)
        .minModRevision(this.progress.head + 1)
        .exec();
      const described = listed.kvs.find((kv) => kv.key.toString() === SNAPSHOT_KEY);
      if (!described || (await this.restoreWhenBehind(described))) break;
      if (attempt === SNAPSHOT_READS) throw new Error(`the credential log's snapshot was replaced ${attempt} times while it was read`);
    }
    this.received(listed.kvs);
    await this.applying;
    const watcher = await etcd
      .watch()
      .prefix(STATE_PREFIX)
      .startRevision(String(Number(listed.header.revision) + 1))
      .create();
    watcher.on('data', (response) => this.received(response.events.filter((event) => event.type === 'Put').map((event) => event.kv)));
    watcher.on('disconnected', (error) => logger.warn({ err: error }, 'cluster: the credential log watch lost etcd; it reconnects'));
    watcher.on('error', (error) => {
      logger.warn({ err: error }, 'cluster: the credential log watch failed; reading the log again');
      if (this.watcher !== watcher) return;
      this.watcher = null;
      const again = () => {
        if (!this.closed) this.follow().catch(() => setTimeout(again, REWATCH_MS).unref());
      };
      setTimeout(again, REWATCH_MS).unref();
    });
    this.watcher = watcher;
  }

  /** Queues keys etcd sent (a listing, a watch's events) to be applied in revision order. */
  private received(kvs: IKeyValue[]): void {
    const commits = kvs
      .filter((kv) => Number(kv.mod_revision) > this.progress.head)
      .sort((a, b) => Number(a.mod_revision) - Number(b.mod_revision) || Buffer.compare(a.key, b.key));
    if (commits.length === 0) return;
    this.applying = this.applying.then(() => this.apply(commits));
  }

  /** Checkpoints and applies commits (in order), then wakes the commits waiting for them. */
  private async apply(received: IKeyValue[]): Promise<void> {
    if (this.failure) return;
    const records: StateRecord[] = [];
    let head = this.progress.head;
    let commits = 0;
    // A listing after a failed watch can repeat what the watch had queued.
    for (const kv of received.filter((kv) => Number(kv.mod_revision) > this.progress.head)) {
      head = Math.max(head, Number(kv.mod_revision));
      const key = kv.key.toString();
      if (!key.startsWith(RECORDS_PREFIX)) continue;
      const decoded = decodeRecords(kv.value);
      if (decoded.problem) return this.damaged(new ClusterStateCorruptError(key, decoded.problem));
      records.push(...decoded.records);
      commits++;
    }
    if (head <= this.progress.head) return;
    await this.checkpointed(() => Promise.all([...records, this.checkpoint(head)].map((record) => this.log.append(record))));
    this.host.apply(records);
    this.progress.advance(head);
    this.changesSinceCompaction += commits;
    if (this.changesSinceCompaction >= this.options.snapshotAfterChanges) this.compactWhenGrown();
  }

  /**
   * Queues the restore of the log's snapshot when it covers commits not applied here (they may be gone from etcd);
   * false when its chunks were replaced while they were read: the log must be listed again.
   */
  private async restoreWhenBehind(described: IKeyValue): Promise<boolean> {
    try {
      const meta = parseSnapshotMeta(described);
      if (meta.through <= this.progress.head) return true;
      const value = await readSnapshot(this.options.etcd, meta);
      if (value === null) return false;
      this.applying = this.applying.then(() => this.restore(meta, value));
    } catch (error) {
      if (!(error instanceof ClusterStateCorruptError)) throw error;
      this.damaged(error);
    }
    return true;
  }

  /** Replaces the state applied so far with the snapshot's, and the checkpoint with it. */
  private async restore(meta: SnapshotMeta, value: Buffer): Promise<void> {
    if (this.failure || meta.through <= this.progress.head) return;
    const { records, problem } = decodeRecords(value);
    if (problem) return this.damaged(new ClusterStateCorruptError(SNAPSHOT_KEY, problem));
    this.host.reset(records);
    await this.checkpointed(() => this.log.compact(() => [...records, this.checkpoint(meta.through)]));
    this.progress.advance(meta.through);
    this.options.logger.info({ through: meta.through, records: records.length }, "cluster: credentials restored from the log's snapshot");
  }

  /** Writes to the local checkpoint, until a write fails: then it stays as it was (the next start reads more from etcd). */
  private async checkpointed(write: () => Promise<unknown>): Promise<void> {
    if (!this.checkpointing) return;
    try {
      await write();
    } catch (error) {
      this.checkpointing = false;
      this.options.logger.error({ err: error }, 'cluster: writing the local checkpoint failed; the next start reads more from etcd');
    }
  }

  /** Stops applying the log: every change is refused from now on (docs/cluster.md, "Damage"). */
  private damaged(error: ClusterStateCorruptError): void {
    this.failure = error;
    this.options.logger.error({ err: error }, 'cluster: the credential log is damaged');
  }

  /** Compacts the log on etcd into a snapshot, in the background, when it has grown (etcd-snapshot.ts). */
  private compactWhenGrown(): void {
    if (this.compactingLog || this.closed) return;
    this.changesSinceCompaction = 0;
    const { etcd, node, snapshotAfterChanges, logger } = this.options;
    this.compactingLog = compactLog(etcd, { node, after: snapshotAfterChanges, take: () => this.taken() })
      .then(
        (done) => void (done && logger.info(done, 'cluster: the credential log was compacted into a snapshot')),
        (error: Error) => logger.warn({ err: error }, 'cluster: compacting the credential log failed; it is tried again later'),
      )
      .finally(() => (this.compactingLog = null));
  }

  /** The state applied so far, encoded as records, between two applied commits: the state through `head`. */
  private taken(): Promise<{ through: number; value: Buffer }> {
    const taken = this.applying.then(() => {
      if (this.failure) throw this.failure;
      return { through: this.progress.head, value: Buffer.concat(this.host.snapshot().map(encodeRecord)) };
    });
    this.applying = taken.then(() => undefined).catch(() => undefined);
    return taken;
  }
}

/** Throws ForeignStateError when the log on etcd ends before `revision`, through which the checkpoint was applied. */
async function checkHead(etcd: EtcdKeys, file: string, revision: number): Promise<void> {
  const head = await headRevision(etcd);
  if (head < revision) throw new ForeignStateError(file, `was applied through revision ${revision}, past the cluster's log at ${head} (etcd restored?)`);
}
