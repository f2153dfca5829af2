/**
 * A read of a repository this node has no copy of, in a cluster: the request as it came, sent to a node serving the
 * repository's partition with the cluster key and the caller's identity, and that node's answer returned as it is
 * (docs/cluster.md, "Reads"). This node decided what its caller may see; the other node only reads.
 */
import { ApiError } from '../api/errors.js';
import { ON_BEHALF_OF_HEADER, PEER_GRACE_MS } from '../cluster/fan-out.js';
import type { Member } from '../cluster/membership.js';
import { askPeer, CLUSTER_KEY_HEADER } from '../cluster/peer-client.js';
import { actorOf, type Caller } from './access.js';
import { JSON_TYPE, type Reply, type Request } from './http.js';
import type { ServerContext } from './route.js';

/** Thrown where a repository would be read from disk: `peers` serve it (their turn's first first). */
export class RepositoryElsewhere extends Error {
  constructor(
    readonly repository: string,
    readonly peers: readonly Member[],
  ) {
    super(`repository ${JSON.stringify(repository)} is read by another node`);
    this.name = 'RepositoryElsewhere';
  }
}

/** The headers of the other node's answer that are part of the read's answer: a listing's page (pagination.ts), a 503's advice. */
const RELAYED_HEADERS = ['x-total-count', 'link', 'retry-after'] as const;

/** `request` answered by the first of the peers that answers; SERVICE_UNAVAILABLE when none does. */
export async function forwardToPeer(context: ServerContext, request: Request, caller: Caller, elsewhere: RepositoryElsewhere): Promise<Reply> {
  const cluster = context.cluster!;
  for (const peer of elsewhere.peers) {
    try {
      const answer = await askPeer(`${peer.url}${request.path}${request.query ? `?${request.query}` : ''}`, {
        method: request.method.toUpperCase(),
        headers: {
          'content-type': request.headers['content-type'] ?? JSON_TYPE,
          [CLUSTER_KEY_HEADER]: cluster.node.peerKey,
          [ON_BEHALF_OF_HEADER]: JSON.stringify(actorOf(caller)),
        },
        body: request.method === 'get' || request.method === 'head' ? undefined : request.body,
        signal: AbortSignal.timeout(context.config.server.searchTimeBudgetMs + PEER_GRACE_MS),
      });
      const headers = Object.fromEntries(RELAYED_HEADERS.flatMap((name) => (typeof answer.headers[name] === 'string' ? [[name, answer.headers[name]]] : [])));
      return { status: answer.status, text: answer.body, contentType: answer.contentType ?? JSON_TYPE, headers };
    } catch (error) {
      context.logger.warn({ node: peer.node, requestId: request.requestId, err: error }, 'cluster: a node did not answer a forwarded read; trying the next');
    }
  }
  throw new ApiError('SERVICE_UNAVAILABLE', `no live node serves repository ${JSON.stringify(elsewhere.repository)} now`, { 'Retry-After': '5' });
}
