/**
 * The one way trawl opens etcd: the etcd3 client with its silent retries and circuit breaker off (a retried write
 * could be stored twice, and an open breaker kept a client failing after etcd came back), every call bounded in
 * time, and a receive limit large enough for a watch over a long backlog (docs/cluster.md, "etcd").
 */
import { ConstantBackoff, noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';

/** How long one etcd call may take before it fails (a watch or keep-alive stream is not bounded). */
export const ETCD_CALL_MS = 2_000;
/** A watch that catches up over a long backlog receives messages this large. */
const RECEIVE_BYTES = 64 << 20;

export function openEtcd(endpoints: readonly string[]): Etcd3 {
  return new Etcd3({
    hosts: [...endpoints],
    dialTimeout: ETCD_CALL_MS,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + ETCD_CALL_MS }),
    faultHandling: { host: () => noop, global: noop, watchBackoff: new ConstantBackoff(250).next() },
    grpcOptions: { 'grpc.max_receive_message_length': RECEIVE_BYTES },
  });
}
