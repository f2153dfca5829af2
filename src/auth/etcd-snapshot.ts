/**
 * The snapshot that bounds the cluster's credential log on etcd (docs/cluster.md, "The log's snapshot"): once the
 * log holds `snapshotAfterChanges` commits, one node (holding the compactor key under a lease) writes the state
 * it applied through revision R as chunks, then the snapshot key naming them (R, their count, length and
 * sha256), then deletes the commits through R and every older snapshot's chunks. A node that lists the log from
 * a position before R restores the snapshot instead of the commits it covers.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IKeyValue } from 'etcd3';
import type { EtcdKeys } from '../cluster/etcd.js';
import { ClusterStateCorruptError } from './cluster-errors.js';
import { CHUNKS_PREFIX, headRevision, MAX_COMMIT_BYTES, MAX_KEYS_PER_TRANSACTION, RECORDS_PREFIX, SNAPSHOT_KEY } from './etcd-log.js';

const COMPACTOR_KEY = 'trawl/state-compactor';
/** A compactor that dies leaves the key to the next one this long after its last keep-alive. */
const COMPACTOR_LEASE_SECONDS = 10;

export interface SnapshotMeta {
  /** The state is the log applied through this revision (stored: absent for the first node's state, written with the log's identity: the revision it was written at). */
  through: number;
  id: string;
  chunks: number;
  bytes: number;
  sha256: string;
}

/** The snapshot key's value; ClusterStateCorruptError when it is not one. */
export function parseSnapshotMeta(kv: IKeyValue): SnapshotMeta {
  let meta: Partial<Record<keyof SnapshotMeta, unknown>> = {};
  try {
    meta = JSON.parse(kv.value.toString()) as typeof meta;
  } catch {
    // Named below.
  }
  const { through = Number(kv.mod_revision), id, chunks, bytes, sha256 } = meta;
  if (
    !Number.isSafeInteger(through) ||
    typeof id !== 'string' ||
    !/^[0-9a-f-]{36}$/.test(id) ||
    !Number.isSafeInteger(chunks) ||
    !Number.isSafeInteger(bytes) ||
    typeof sha256 !== 'string'
  )
    throw new ClusterStateCorruptError(SNAPSHOT_KEY, 'not a snapshot description');
  return { through, id, chunks, bytes, sha256 } as SnapshotMeta;
}

/**
 * The log as `trawl cluster status` shows it: its last commit's revision, the commits etcd holds, and the snapshot
 * before them (what is wrong with its description, when it is damaged).
 */
export interface LogSummary {
  head: number;
  commits: number;
  snapshot: { through: number; bytes: number } | { damaged: string } | null;
}

/** The log's summary as etcd holds it now. */
export async function readLogSummary(etcd: EtcdKeys): Promise<LogSummary> {
  const [head, commits, found] = await Promise.all([headRevision(etcd), etcd.getAll().prefix(RECORDS_PREFIX).count(), etcd.get(SNAPSHOT_KEY).exec()]);
  return { head, commits, snapshot: found.kvs[0] ? snapshotSummary(found.kvs[0]) : null };
}

function snapshotSummary(kv: IKeyValue): NonNullable<LogSummary['snapshot']> {
  try {
    const { through, bytes } = parseSnapshotMeta(kv);
    return { through, bytes };
  } catch (error) {
    if (error instanceof ClusterStateCorruptError) return { damaged: error.message };
    throw error;
  }
}

function chunkKey(id: string, index: number): string {
  return `${CHUNKS_PREFIX}${id}/${String(index).padStart(6, '0')}`;
}

/**
 * The snapshot's bytes, checked against its length and sha256 (ClusterStateCorruptError when they differ), or null
 * when a chunk is gone: a newer snapshot replaced it, and the log must be listed again.
 */
export async function readSnapshot(etcd: EtcdKeys, meta: SnapshotMeta): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < meta.chunks; i++) {
    const chunk = await etcd.get(chunkKey(meta.id, i)).buffer();
    if (chunk === null) return null;
    chunks.push(chunk);
  }
  const value = Buffer.concat(chunks);
  if (value.length !== meta.bytes || createHash('sha256').update(value).digest('hex') !== meta.sha256)
    throw new ClusterStateCorruptError(chunkKey(meta.id, 0), `the snapshot through revision ${meta.through} does not match its length and sha256`);
  return value;
}

/** This node's state, `records`, as the cluster log's first: one commit, or over a commit's limit, a snapshot (`seed`). */
export async function firstState(etcd: EtcdKeys, records: Buffer): Promise<{ records: Buffer } | { snapshot: Omit<SnapshotMeta, 'through'> }> {
  return records.length > MAX_COMMIT_BYTES ? { snapshot: await writeChunks(etcd, records) } : { records };
}

/**
 * Writes `value` as a new snapshot's chunks: what its description names but the revision it is the state through.
 * Chunks that no description comes to name are deleted by their writer, else by the next compaction.
 */
async function writeChunks(etcd: EtcdKeys, value: Buffer): Promise<Omit<SnapshotMeta, 'through'>> {
  const id = randomUUID();
  const chunks = Math.max(1, Math.ceil(value.length / MAX_COMMIT_BYTES));
  for (let i = 0; i < chunks; i++) await etcd.put(chunkKey(id, i)).value(value.subarray(i * MAX_COMMIT_BYTES, (i + 1) * MAX_COMMIT_BYTES));
  return { id, chunks, bytes: value.length, sha256: createHash('sha256').update(value).digest('hex') };
}

export interface CompactionOptions {
  node: string;
  /** Commits the log holds before it is compacted. */
  after: number;
  /** The state applied so far, encoded as records, and the revision it is applied through. */
  take(): Promise<{ through: number; value: Buffer }>;
}

/**
 * Compacts the log when it holds `after` commits or more and no other node is compacting it: what was done (and how
 * long it took), or null when nothing was.
 */
export async function compactLog(etcd: EtcdKeys, options: CompactionOptions): Promise<{ through: number; deleted: number; bytes: number; ms: number } | null> {
  const started = performance.now();
  if ((await etcd.getAll().prefix(RECORDS_PREFIX).count()) < options.after) return null;
  const lease = etcd.lease(COMPACTOR_LEASE_SECONDS, { autoKeepAlive: true });
  try {
    const leaseId = await lease.grant();
    const held = await etcd.if(COMPACTOR_KEY, 'Create', '==', 0).then(etcd.put(COMPACTOR_KEY).value(options.node).lease(leaseId)).commit();
    if (!held.succeeded) return null;
    const previous = (await etcd.get(SNAPSHOT_KEY).exec()).kvs[0];
    const { through, value } = await options.take();
    if (previous && parseSnapshotMeta(previous).through >= through) return null;
    const meta: SnapshotMeta = { through, ...(await writeChunks(etcd, value)) };
    const stillHeld = () => etcd.if(COMPACTOR_KEY, 'Lease', '==', leaseId);
    const named = await stillHeld()
      .and(SNAPSHOT_KEY, 'Mod', '==', previous?.mod_revision ?? 0)
      .then(etcd.put(SNAPSHOT_KEY).value(JSON.stringify(meta)))
      .commit();
    if (!named.succeeded) {
      await stillHeld()
        .then(etcd.delete().prefix(`${CHUNKS_PREFIX}${meta.id}/`))
        .commit();
      return null;
    }
    const covered = await etcd.getAll().prefix(RECORDS_PREFIX).maxModRevision(through).keys();
    for (let i = 0; i < covered.length; i += MAX_KEYS_PER_TRANSACTION)
      await stillHeld()
        .then(...covered.slice(i, i + MAX_KEYS_PER_TRANSACTION).map((key) => etcd.delete().key(key)))
        .commit();
    const stale = new Set((await etcd.getAll().prefix(CHUNKS_PREFIX).keys()).map((key) => key.slice(CHUNKS_PREFIX.length).split('/')[0]!));
    stale.delete(meta.id);
    // Each only while the key is this node's: a chunk being written is another compactor's, which holds the key.
    for (const id of stale)
      await stillHeld()
        .then(etcd.delete().prefix(`${CHUNKS_PREFIX}${id}/`))
        .commit();
    return { through, deleted: covered.length, bytes: value.length, ms: Math.round(performance.now() - started) };
  } finally {
    await lease.revoke().catch(() => undefined);
  }
}
