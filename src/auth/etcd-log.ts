/**
 * The cluster's credential log as etcd keeps it (docs/cluster.md, "Credentials"), under the cluster's prefix:
 * `trawl/state/identity` (the log's id and the sealed instance key), `trawl/state/head` (written by every commit),
 * a key per commit under `trawl/state/records/`, `trawl/state/snapshot` and its chunks under `trawl/state-snapshots/`
 * (etcd-snapshot.ts).
 */
import { randomUUID } from 'node:crypto';
import type { EtcdKeys } from '../cluster/etcd.js';
import type { Logger } from '../obs/logger.js';
import { ClusterStateUnavailableError } from './cluster-errors.js';
import { StaleDecisionError } from './journal.js';
import { seal, unseal } from './secrets.js';

export const STATE_PREFIX = 'trawl/state/';
/** The cluster's state id and its instance key, sealed under the cluster key. */
const IDENTITY_KEY = `${STATE_PREFIX}identity`;
export const HEAD_KEY = `${STATE_PREFIX}head`;
export const RECORDS_PREFIX = `${STATE_PREFIX}records/`;
/** Under the log's prefix, so that a node listing the log from an old position sees it. */
export const SNAPSHOT_KEY = `${STATE_PREFIX}snapshot`;
/** A snapshot's chunks, under `<id>/`: outside the log's prefix, so that the watches do not carry them. */
export const CHUNKS_PREFIX = 'trawl/state-snapshots/';
/** etcd refuses requests over 1.5 MiB and transactions of over 128 operations (its defaults). */
export const MAX_COMMIT_BYTES = 1 << 20;
export const MAX_KEYS_PER_TRANSACTION = 64;
/** A commit that etcd has not confirmed this long after it was made is refused (503). */
export const COMMIT_BUDGET_MS = 6_000;
const RETRY_MS = 250;

/** The revision of the log's last commit (head's), as etcd has it now; `deadline` bounds the call (default: every call's bound). */
export async function headRevision(etcd: EtcdKeys, deadline?: number): Promise<number> {
  const read = etcd.get(HEAD_KEY);
  const found = await (deadline === undefined ? read : read.options({ deadline })).exec();
  return Number(found.kvs[0]?.mod_revision ?? 0);
}

/** The cluster's state id and instance key, or null when the log has not been started. */
export async function readIdentity(etcd: EtcdKeys, sealingKey: Buffer): Promise<{ id: string; instanceKey: Buffer } | null> {
  const value = await etcd.get(IDENTITY_KEY).string();
  if (value === null) return null;
  const { id, key } = JSON.parse(value) as { id: string; key: string };
  const opened = unseal(sealingKey, IDENTITY_KEY, key);
  if (opened === null) throw new Error(`${IDENTITY_KEY} in etcd is sealed under another cluster key: every node needs the same cluster.keyFile`);
  return { id, instanceKey: Buffer.from(opened, 'base64') };
}

/**
 * Starts the cluster's log with `identity` and this node's state: its records as the first commit, or, when they are
 * over one commit's limit, the description of a snapshot whose chunks are written (etcd-snapshot.ts). Its revision,
 * or 0 when another node started the log first (the snapshot's chunks are deleted then: nothing names them).
 */
export async function seed(
  etcd: EtcdKeys,
  node: string,
  sealingKey: Buffer,
  identity: { id: string; instanceKey: Buffer },
  state: { records: Buffer } | { snapshot: { id: string } },
): Promise<number> {
  const sealed = seal(sealingKey, IDENTITY_KEY, identity.instanceKey.toString('base64'));
  const first =
    'snapshot' in state
      ? [etcd.put(SNAPSHOT_KEY).value(JSON.stringify(state.snapshot))]
      : state.records.length > 0
        ? [etcd.put(RECORDS_PREFIX + randomUUID()).value(state.records)]
        : [];
  const result = await etcd
    .if(IDENTITY_KEY, 'Create', '==', 0)
    .then(etcd.put(IDENTITY_KEY).value(JSON.stringify({ id: identity.id, key: sealed })), ...first, etcd.put(HEAD_KEY).value(node))
    .commit();
  if (result.succeeded) return Number(result.header.revision);
  if ('snapshot' in state) await etcd.delete().prefix(`${CHUNKS_PREFIX}${state.snapshot.id}/`);
  return 0;
}

/**
 * Creates `keys` (with `values`) and moves head to them, in one transaction, retried until etcd answers, the budget
 * is spent or `stopped()`; `decidedOn`: only if head is still there (StaleDecisionError otherwise). Returns the
 * revision. A retry of a transaction that was applied finds its first key created: that is its answer.
 */
export async function commitKeys(
  etcd: EtcdKeys,
  node: string,
  change: { keys: string[]; values: Buffer[]; decidedOn: number | null },
  { logger, stopped }: { logger: Logger; stopped: () => boolean },
): Promise<number> {
  const { keys, values, decidedOn } = change;
  const deadline = Date.now() + COMMIT_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      let transaction = etcd.if(keys[0]!, 'Create', '==', 0);
      if (decidedOn !== null) transaction = transaction.and(HEAD_KEY, 'Mod', '==', decidedOn);
      const result = await transaction.then(...keys.map((key, i) => etcd.put(key).value(values[i]!)), etcd.put(HEAD_KEY).value(node)).commit();
      if (result.succeeded) return Number(result.header.revision);
      const existing = await etcd.get(keys[0]!).exec();
      if (existing.kvs.length > 0) return Number(existing.kvs[0]!.mod_revision);
      throw new StaleDecisionError();
    } catch (error) {
      if (error instanceof StaleDecisionError) throw error;
      if (stopped() || Date.now() + RETRY_MS >= deadline) {
        throw new ClusterStateUnavailableError(`etcd did not answer within ${COMMIT_BUDGET_MS / 1000} s (${(error as Error).message})`, error);
      }
      if (attempt === 0) logger.warn({ err: error }, 'cluster: a credential change was not confirmed by etcd; retrying');
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
