/** What the nodes of a cluster ask each other: a search of this node's partitions, and whether it applied the credential log that far (docs/cluster.md). */
import { ApiError } from '../../api/errors.js';
import { LIMITS, SearchResponse } from '../../api/schemas.js';
import { parseBody, validator } from '../../api/validate.js';
import { PeerApplied, PeerAppliedRequest, PeerAuditPage, PeerAuditRequest, PeerSearchRequest } from '../../api/cluster-schemas.js';
import { APPLIED_WAIT_MS } from '../../cluster/confirm-applied.js';
import type { PeerSearch } from '../../cluster/fan-out.js';
import { checkClusterKey } from '../access.js';
import { JSON_TYPE, type Request } from '../http.js';
import type { Route, ServerContext } from '../route.js';
import { signalFor } from './search.js';

const body = validator(PeerSearchRequest);
const appliedBody = validator(PeerAppliedRequest);
const auditBody = validator(PeerAuditRequest);

/** The cluster this request's peer belongs to: refused unless this node is in a cluster and the request presents its key. */
function clusterOf(context: ServerContext, request: Request) {
  const { cluster } = context;
  if (!cluster) throw new ApiError('NOT_FOUND', 'this node is not in a cluster');
  checkClusterKey(context, request);
  return cluster;
}

export const peerSearchRoute: Route = {
  method: 'post',
  path: '/api/cluster/search',
  operationId: 'peerSearch',
  tag: 'Cluster',
  summary: "A node's search of some of this node's partitions, ranked, for a search across the cluster; nodes only (the cluster key)",
  access: 'public',
  body: PeerSearchRequest,
  response: { status: 200, schema: SearchResponse, description: 'The ranked results of those partitions' },
  errors: ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'NOT_AUTHENTICATED', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handle(request, _caller, context) {
    const { node } = clusterOf(context, request);
    const search = parseBody(body, request.body) as PeerSearch;
    if (search.request.exhaustive || search.request.matches > LIMITS.matches)
      throw new ApiError('INVALID_REQUEST_BODY', 'a peer search is capped, never exhaustive');
    const notServed = search.partitions.filter((partition) => !node.servesPartition(partition));
    if (notServed.length > 0) throw new ApiError('SERVICE_UNAVAILABLE', `this node does not serve partitions ${notServed.join(', ')}`);
    const partitions = new Set(search.partitions);
    const repositories = new Set(search.repositories.filter((name) => partitions.has(node.partitionOf(name))));
    const json = await context.pool.searchJson(search.query, search.request, {
      visible: (repository) => repositories.has(repository.name),
      signal: signalFor(request),
    });
    return { status: 200, text: json.body, contentType: JSON_TYPE, release: json.release };
  },
};

export const peerAppliedRoute: Route = {
  method: 'post',
  path: '/api/cluster/applied',
  operationId: 'peerApplied',
  tag: 'Cluster',
  summary:
    "Answers once this node has applied the cluster's credential log through a revision (a revocation made on another node); nodes only (the cluster key)",
  access: 'public',
  body: PeerAppliedRequest,
  response: { status: 200, schema: PeerApplied, description: 'The revision is applied here' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handle(request, _caller, context) {
    clusterOf(context, request);
    const { revision } = parseBody(appliedBody, request.body);
    if (!(await context.auth.log.reached(revision, APPLIED_WAIT_MS)))
      throw new ApiError('SERVICE_UNAVAILABLE', `revision ${revision} of the credential log is not applied here yet`);
    return { status: 200, body: { revision } };
  },
};

export const peerAuditRoute: Route = {
  method: 'post',
  path: '/api/cluster/audit',
  operationId: 'peerAudit',
  tag: 'Cluster',
  summary: "This node's newest audit records in a window, for GET /api/ee/audit on another node; nodes only (the cluster key)",
  access: 'public',
  body: PeerAuditRequest,
  response: { status: 200, schema: PeerAuditPage, description: "The node's records, newest first, and how many the window holds" },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'NOT_FOUND'],
  async handle(request, _caller, context) {
    clusterOf(context, request);
    const { since, until, limit } = parseBody(auditBody, request.body);
    return { status: 200, body: await context.audit.page(since, until, 0, limit) };
  },
};
