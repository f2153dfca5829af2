/**
 * A revocation reaches every node before it is acknowledged: the node that committed it asks each other live node
 * to confirm it has applied the credential log that far (POST /api/cluster/applied; docs/cluster.md, "Credentials").
 */
import type { Logger } from '../obs/logger.js';
import { CLUSTER_KEY_HEADER } from './fan-out.js';
import type { ClusterNode } from './node.js';
import { askPeer } from './peer-client.js';

/** How long a node waits, when asked, for its log to reach a revision; the asking node waits a little longer. */
export const APPLIED_WAIT_MS = 2_000;
const ASK_MS = APPLIED_WAIT_MS + 500;

/** Resolves once every other live member confirmed `revision`, or failed to in time (logged: docs/cluster.md says what that leaves). */
export async function confirmApplied(node: ClusterNode, revision: number, logger: Logger): Promise<void> {
  const peers = node.members().filter((member) => member.node !== node.config.node);
  const body = Buffer.from(JSON.stringify({ revision }));
  const late: string[] = [];
  await Promise.all(
    peers.map(async (peer) => {
      try {
        const answer = await askPeer(`${peer.url}/api/cluster/applied`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CLUSTER_KEY_HEADER]: node.peerKey },
          body,
          signal: AbortSignal.timeout(ASK_MS),
        });
        if (answer.status !== 200) late.push(peer.node);
      } catch {
        late.push(peer.node);
      }
    }),
  );
  if (late.length > 0) logger.warn({ nodes: late, revision }, 'cluster: nodes did not confirm a revocation in time');
}
