/**
 * The audit trail of a cluster: each node keeps its own, and `GET /api/ee/audit` on any node answers from all of
 * them, newest first, as one trail (docs/cluster.md, "Audit"). Each other live node is asked for its newest records
 * of the window through POST /api/cluster/audit; a node that does not answer is named in X-Trawl-Missing-Nodes.
 */
import { ApiError } from '../api/errors.js';
import type { AuditEntry } from '../auth/audit.js';
import { PEER_GRACE_MS } from '../cluster/fan-out.js';
import type { ServerContext } from './route.js';

/** A page of a cluster's trail ends at most this many records from the newest: past it, narrow the window. */
export const CLUSTER_AUDIT_DEPTH = 10_000;

export interface AuditWindow {
  since?: number;
  until?: number;
}

/** Records `offset` to `offset + limit` of every live node's trail merged, newest first; the total; the nodes that did not answer. */
export async function clusterAuditPage(
  context: ServerContext,
  window: AuditWindow,
  offset: number,
  limit: number,
): Promise<{ total: number; entries: AuditEntry[]; missing: string[] }> {
  const { node } = context.cluster!;
  const depth = offset + limit;
  if (depth > CLUSTER_AUDIT_DEPTH)
    throw new ApiError('INVALID_QUERY_PARAMS', `in a cluster a page ends at most ${CLUSTER_AUDIT_DEPTH} records from the newest: narrow with since and until`);
  const missing: string[] = [];
  const pages = await Promise.all([
    context.audit.page(window.since, window.until, 0, depth),
    ...node.peers().map(async (peer) => {
      try {
        const body = { ...window, limit: depth };
        return await node.ask<{ total: number; entries: AuditEntry[] }>(peer, '/api/cluster/audit', body, AbortSignal.timeout(PEER_GRACE_MS * 5));
      } catch (error) {
        context.logger.warn({ node: peer.node, err: error }, 'cluster: a node did not answer for its audit trail');
        missing.push(peer.node);
        return { total: 0, entries: [] };
      }
    }),
  ]);
  const entries = pages.flatMap((page) => page.entries).sort((a, b) => (a.timestamp < b.timestamp ? 1 : a.timestamp > b.timestamp ? -1 : a.id < b.id ? 1 : -1));
  return { total: pages.reduce((sum, page) => sum + page.total, 0), entries: entries.slice(offset, depth), missing };
}
