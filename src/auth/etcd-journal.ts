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
import type { EtcdKeys } from '../cluster/etcd.js';
import type { Logger } from '../obs/logger.js';
import { ClusterStateCorruptError, ClusterStateUnavailableError, ForeignStateError } from './cluster-errors.js';
import {
  HEAD_KEY,
  headRevision,
  MAX_COMMIT_BYTES,
  MAX_KEYS_PER_TRANSACTION,
  readIdentity,
  RECORDS_PREFIX,
  seed,
  SNAPSHOT_KEY,
  STATE_PREFIX,
} from './etcd-log.js';
import { Freshness } from './etcd-freshness.js';
import { compactLog, firstState, parseSnapshotMeta, readSnapshot, type SnapshotMeta } from './etcd-snapshot.js';
import { StaleDecisionError, type Journal, type JournalHost } from './journal.js';
import { derivedKey, loadInstanceKey, storeInstanceKey } from './secrets.js';
import { STATE_LOG_FILE, StateLog, type TailRepair } from './state-log.js';
import { decodeRecords, encodeRecord, type StateRecord } from './state-record.js';

/** The local checkpoint's last record: the cluster and the revision its records were applied through. */
const CHECKPOINT = 'cluster.applied';
/** A commit that etcd has not confirmed this long after it was made is refused (503). */
const COMMIT_BUDGET_MS = 6_000;
const RETRY_MS = 250;
/** A watch that failed (its revision compacted away) is started again after this long. */
const REWATCH_MS = 500;
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
  private head = 0;
  private readonly waiters: { revision: number; resolve(): void }[] = [];
  private pending: PendingCommit[] = [];
  private flushing = false;
  private applying: Promise<void> = Promise.resolve();
  private watcher: Watcher | null = null;
  /** Set when the log cannot be applied any more (a damaged commit): every change is refused with it. */
  private failure: Error | null = null;
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
      let identity = await readIdentity(options.etcd, sealingKey);
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
        const head = await headRevision(options.etcd);
        if (head < from) throw new ForeignStateError(file, `was applied through revision ${from}, past the cluster's log at ${head} (etcd restored?)`);
      } else if (local.length > 0) {
        throw new ForeignStateError(file, NOT_OURS);
      }
      storeInstanceKey(options.directory, identity.instanceKey);
      const journal = new EtcdJournal(options, host, log, identity.id, identity.instanceKey);
      journal.head = from;
      // The checkpoint ends at its last cluster.applied record: records after it (a crash between them) come again from etcd.
      if (checkpoint?.clusterId !== identity.id || last !== records.length - 1) await log.compact(() => [...host.snapshot(), journal.checkpoint()]);
      await journal.follow();
      journal.freshness = new Freshness(options.etcd, (revision, timeoutMs) => journal.reached(revision, timeoutMs));
      journal.compactWhenGrown();
      return { journal, repair };
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  get position(): number {
    return this.head;
  }

  async commit(records: StateRecord[], decidedOn: number | null): Promise<number> {
    if (this.failure) throw this.failure;
    const value = Buffer.concat(records.map(encodeRecord));
    if (value.length > MAX_COMMIT_BYTES) throw new RangeError(`a change of ${value.length} bytes is over the cluster's limit of ${MAX_COMMIT_BYTES}`);
    const key = RECORDS_PREFIX + randomUUID();
    const revision =
      decidedOn !== null
        ? await this.write([key], [value], decidedOn)
        : await new Promise<number>((resolve, reject) => {
            this.pending.push({ key, value, resolve, reject });
            queueMicrotask(() => this.flush());
          });
    await this.applied(revision);
    return revision;
  }

  /** Resolves once everything committed before the call is applied here (ClusterStateUnavailableError when etcd does not answer). */
  async catchUp(): Promise<void> {
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
  private checkpoint(revision = this.head): StateRecord {
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
    this.write(
      batch.map((commit) => commit.key),
      batch.map((commit) => commit.value),
      null,
    )
      .then(
        (revision) => batch.forEach((commit) => commit.resolve(revision)),
        (error: Error) => batch.forEach((commit) => commit.reject(error)),
      )
      .finally(() => {
        this.flushing = false;
        this.flush();
      });
  }

  /**
   * Creates `keys` (with `values`) and moves head, in one transaction, retried until etcd answers or the budget is
   * spent; `decidedOn`: only if head is still there (StaleDecisionError otherwise). Returns the revision.
   */
  private async write(keys: string[], values: Buffer[], decidedOn: number | null): Promise<number> {
    const { etcd, node } = this.options;
    const deadline = Date.now() + COMMIT_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        // A retry of a transaction that was applied finds its first key created: that is its answer.
        let transaction = etcd.if(keys[0]!, 'Create', '==', 0);
        if (decidedOn !== null) transaction = transaction.and(HEAD_KEY, 'Mod', '==', decidedOn);
        const result = await transaction.then(...keys.map((key, i) => etcd.put(key).value(values[i]!)), etcd.put(HEAD_KEY).value(node)).commit();
        if (result.succeeded) return Number(result.header.revision);
        const existing = await etcd.get(keys[0]!).exec();
        if (existing.kvs.length > 0) return Number(existing.kvs[0]!.mod_revision);
        throw new StaleDecisionError();
      } catch (error) {
        if (error instanceof StaleDecisionError) throw error;
        if (this.closed || Date.now() + RETRY_MS >= deadline) {
          throw new ClusterStateUnavailableError(`etcd did not answer within ${COMMIT_BUDGET_MS / 1000} s (${(error as Error).message})`, error);
        }
        if (attempt === 0) this.options.logger.warn({ err: error }, 'cluster: a credential change was not confirmed by etcd; retrying');
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** Resolves once the commit at `revision` is applied here; rejects when that takes longer than the budget. */
  private async applied(revision: number): Promise<void> {
    if (!(await this.reached(revision, COMMIT_BUDGET_MS)))
      throw this.failure ?? new ClusterStateUnavailableError(`revision ${revision} was committed but not yet received from etcd`);
  }

  reached(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.head >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
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
        .minModRevision(this.head + 1)
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
      .filter((kv) => Number(kv.mod_revision) > this.head)
      .sort((a, b) => Number(a.mod_revision) - Number(b.mod_revision) || Buffer.compare(a.key, b.key));
    if (commits.length === 0) return;
    this.applying = this.applying.then(() => this.apply(commits));
  }

  /** Checkpoints and applies commits (in order), then wakes the commits waiting for them. */
  private async apply(received: IKeyValue[]): Promise<void> {
    if (this.failure) return;
    const records: StateRecord[] = [];
    let head = this.head;
    let commits = 0;
    // A listing after a failed watch can repeat what the watch had queued.
    for (const kv of received.filter((kv) => Number(kv.mod_revision) > this.head)) {
      head = Math.max(head, Number(kv.mod_revision));
      const key = kv.key.toString();
      if (!key.startsWith(RECORDS_PREFIX)) continue;
      const decoded = decodeRecords(kv.value);
      if (decoded.problem) return this.damaged(new ClusterStateCorruptError(key, decoded.problem));
      records.push(...decoded.records);
      commits++;
    }
    if (head <= this.head) return;
    await this.checkpointed(() => Promise.all([...records, this.checkpoint(head)].map((record) => this.log.append(record))));
    this.host.apply(records);
    this.advance(head);
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
      if (meta.through <= this.head) return true;
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
    if (this.failure || meta.through <= this.head) return;
    const { records, problem } = decodeRecords(value);
    if (problem) return this.damaged(new ClusterStateCorruptError(SNAPSHOT_KEY, problem));
    this.host.reset(records);
    await this.checkpointed(() => this.log.compact(() => [...records, this.checkpoint(meta.through)]));
    this.advance(meta.through);
    this.options.logger.info({ through: meta.through, records: records.length }, "cluster: credentials restored from the log's snapshot");
  }

  /** The state applied through `head`: a commit waiting for it, or deciding on it, sees it applied. */
  private advance(head: number): void {
    this.head = head;
    for (const waiter of this.waiters.filter((waiter) => waiter.revision <= head)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
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
      return { through: this.head, value: Buffer.concat(this.host.snapshot().map(encodeRecord)) };
    });
    this.applying = taken.then(() => undefined).catch(() => undefined);
    return taken;
  }
}
