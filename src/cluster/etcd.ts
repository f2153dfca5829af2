/**
 * The one way trawl opens etcd, and reads the key the nodes share. etcd: the etcd3 client with its silent retries and circuit breaker off (a retried write
 * could be stored twice, and an open breaker kept a client failing after etcd came back), every call bounded in
 * time, and a receive limit large enough for a watch over a long backlog (docs/cluster.md, "etcd"); its keys
 * under the cluster's `keyPrefix`, which the callers never see. The client's modules (gRPC, protobuf) load at the
 * first `openEtcd`: a daemon outside a cluster never loads them (docs/design.md, "Start").
 */
import type { Namespace } from 'etcd3';
import type { ClusterConfig } from '../config/config.js';
import { readSecretFile } from '../config/secret-file.js';

/** How long one etcd call may take before it fails (a watch or keep-alive stream is not bounded). */
export const ETCD_CALL_MS = 2_000;
/** A watch that catches up over a long backlog receives messages this large. */
const RECEIVE_BYTES = 64 << 20;

/** A cluster's keys in etcd: every key read, written or watched is under the cluster's prefix. */
export type EtcdKeys = Namespace & { close(): void };

export async function openEtcd(config: Pick<ClusterConfig, 'etcd' | 'keyPrefix'>): Promise<EtcdKeys> {
  const [{ ConstantBackoff, noop }, { Etcd3 }] = await Promise.all([import('cockatiel'), import('etcd3')]);
  const client = new Etcd3({
    hosts: [...config.etcd],
    dialTimeout: ETCD_CALL_MS,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + ETCD_CALL_MS }),
    faultHandling: { host: () => noop, global: noop, watchBackoff: new ConstantBackoff(250).next() },
    grpcOptions: { 'grpc.max_receive_message_length': RECEIVE_BYTES },
  });
  return Object.assign(client.namespace(config.keyPrefix), { close: () => client.close() });
}

/** The cluster key is at least this long: it is all that stands between a node's search endpoint and the network. */
const MIN_KEY_LENGTH = 32;

/** The key the nodes share (cluster.keyFile); throws when the file is readable by others or the key too short. */
export function readClusterKey(config: Pick<ClusterConfig, 'keyFile'>): Buffer {
  const key = Buffer.from(readSecretFile(config.keyFile, 'cluster.keyFile'));
  if (key.length < MIN_KEY_LENGTH) throw new Error(`${config.keyFile} (cluster.keyFile) must hold at least ${MIN_KEY_LENGTH} characters`);
  return key;
}

/** Whether `error` is the etcd client's: etcd did not answer (a gRPC error: not an EtcdError), or refused the call. */
export async function isEtcdError(error: unknown): Promise<boolean> {
  const { EtcdError, GRPCGenericError, ClientRuntimeError } = await import('etcd3'); // loaded by openEtcd
  return error instanceof EtcdError || error instanceof GRPCGenericError || error instanceof ClientRuntimeError;
}

/** What a node says when etcd does not answer as it starts. */
export function unreachable(config: Pick<ClusterConfig, 'etcd'>, error: unknown): Error {
  return new Error(`cluster: cannot join through etcd at ${config.etcd.join(', ')}: ${(error as Error).message}`, { cause: error });
}
