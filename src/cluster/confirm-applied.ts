/**
 * A revocation reaches every node before it is acknowledged: the node that committed it asks each other live node
 * to confirm it has applied the credential log that far (POST /api/cluster/applied; docs/cluster.md, "Credentials").
 */
import type { Logger } from '../obs/logger.js';
import type { ClusterNode } from './node.js';

/** How long a node waits, when asked, for its log to reach a revision; the asking node waits a little longer. */
export const APPLIED_WAIT_MS = 2_000;
const ASK_MS = APPLIED_WAIT_MS + 500;

/** Resolves once every other live member confirmed `revision`, or failed to in time (logged: docs/cluster.md says what that leaves). */
export async function confirmApplied(node: ClusterNode, revision: number, logger: Logger): Promise<void> {
  const late: string[] = [];
  await Promise.all(
    node.peers().map(async (peer) => {
      try {
        await node.ask(peer, '/api/cluster/applied', { revision }, AbortSignal.timeout(ASK_MS));
      } catch {
        late.push(peer.node);
      }
    }),
  );
  if (late.length > 0) logger.warn({ nodes: late, revision }, 'cluster: nodes did not confirm a revocation in time');
}
