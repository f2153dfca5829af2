/**
 * What the nodes of a cluster ask each other: a search of this node's partitions, whether it applied the credential log
 * that far, its audit records, and the shards it built, for a replica to copy (docs/cluster.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../../api/errors.js';
import { listedRepository } from '../../search/catalog.js';
import { LIMITS, SearchResponse } from '../../api/schemas.js';
import { parseBody, validator } from '../../api/validate.js';
import {
  PeerApplied,
  PeerAppliedRequest,
  PeerAuditPage,
  PeerAuditRequest,
  PeerSearchRequest,
  PeerShardOffer,
  PeerShardRequest,
  PeerShardsRequest,
} from '../../api/cluster-schemas.js';
import { APPLIED_WAIT_MS } from '../../cluster/confirm-applied.js';
import type { PeerSearch } from '../../cluster/fan-out.js';
import { encodeFiles, PEER_FILES_TYPE } from '../../cluster/peer-files.js';
import { encodeFailure, encodeFinal, encodePart, PEER_PARTS_OPENING, PEER_PARTS_TYPE } from '../../cluster/peer-parts.js';
import type { RepositoryConfig } from '../../config/config.js';
import { placeFreeFingerprint, repositoryFingerprint } from '../../indexer/fingerprint.js';
import { checkClusterKey } from '../access.js';
import { JSON_TYPE, type Request, type StreamSink } from '../http.js';
import { partsReply, type PartsFormat, type PartsReader } from '../parts-reply.js';
import type { Route, ServerContext } from '../route.js';
import { signalFor } from '../request-signal.js';

const body = validator(PeerSearchRequest);
const appliedBody = validator(PeerAppliedRequest);
const auditBody = validator(PeerAuditRequest);
const shardsBody = validator(PeerShardsRequest);
const shardBody = validator(PeerShardRequest);

/** The cluster this request's peer belongs to: refused unless this node is in a cluster and the request presents its key. */
function clusterOf(context: ServerContext, request: Request) {
  const { cluster } = context;
  if (!cluster) throw new ApiError('NOT_FOUND', 'this node is not in a cluster');
  checkClusterKey(context, request);
  return cluster;
}

/** An exhaustive peer search's parts, as cluster/peer-parts.ts reads them. */
const PEER_PARTS: PartsFormat = {
  contentType: PEER_PARTS_TYPE,
  opening: PEER_PARTS_OPENING,
  part: encodePart,
  joined: (bytes) => bytes,
  final: (summary) => encodeFinal(summary),
  failed: (error) => encodeFailure(error.toBody()),
};

/** The node that asks decided what its caller may see, and checks the caller's credential as it relays the parts. */
const PEER_READER: PartsReader = { stillValid: () => true, maySee: () => true };

export const peerSearchRoute: Route = {
  method: 'post',
  path: '/api/cluster/search',
  operationId: 'peerSearch',
  tag: 'Cluster',
  summary:
    "A node's search of some of this node's partitions, ranked, for a search across the cluster (`files`: its files with their ranks, `application/x-trawl-files`; exhaustive: its parts as they come, `application/x-trawl-parts`); nodes only (the cluster key)",
  access: 'public',
  body: PeerSearchRequest,
  response: { status: 200, schema: SearchResponse, description: 'The ranked results of those partitions' },
  errors: ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'NOT_AUTHENTICATED', 'NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handle(request, _caller, context) {
    const { node } = clusterOf(context, request);
    const search = parseBody(body, request.body) as PeerSearch;
    if (!search.request.exhaustive && search.request.matches > LIMITS.matches)
      throw new ApiError('INVALID_REQUEST_BODY', `request body field \`request.matches\`: expected at most ${LIMITS.matches} unless \`exhaustive\``);
    const notServed = search.partitions.filter((partition) => !node.servesPartition(partition));
    if (notServed.length > 0) throw new ApiError('SERVICE_UNAVAILABLE', `this node does not serve partitions ${notServed.join(', ')}`);
    const partitions = new Set(search.partitions);
    const inPartitions = (name: string) => partitions.has(node.partitionOf(name));
    const named = search.repositories && new Set(search.repositories.filter(inPartitions));
    const visible = (repository: RepositoryConfig) => (named ? named.has(repository.name) : inPartitions(repository.name));
    if (search.request.exhaustive) {
      return partsReply({
        request,
        context,
        format: PEER_PARTS,
        reader: PEER_READER,
        paced: true,
        search: (onPart, { signal, ready }) => context.pool.stream(search.query, search.request, { visible, signal, ready }, onPart),
      });
    }
    if (search.files) {
      const { parts } = await context.pool.searchFiles(search.query, search.request, { visible, signal: signalFor(request) });
      return { status: 200, text: encodeFiles(parts), contentType: PEER_FILES_TYPE };
    }
    const json = await context.pool.searchJson(search.query, search.request, { visible, signal: signalFor(request) });
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

export const peerShardsRoute: Route = {
  method: 'post',
  path: '/api/cluster/shards',
  operationId: 'peerShards',
  tag: 'Cluster',
  summary:
    'The shards this node built of a repository, what they were built from and their sha256, for a replica to copy instead of building them; nodes only (the cluster key)',
  access: 'public',
  body: PeerShardsRequest,
  response: { status: 200, schema: PeerShardOffer, description: 'The shards offered' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'NOT_FOUND'],
  async handle(request, _caller, context) {
    clusterOf(context, request);
    const { repository } = parseBody(shardsBody, request.body);
    const listed = listedRepository(context.catalog(), repository);
    const entry = listed?.entry;
    // Only shards built here for the config as it is now, with the sums recorded as they were built, all on disk.
    if (
      !listed ||
      entry?.state !== 'ready' ||
      entry.sha256?.length !== entry.shards.length ||
      entry.fingerprint !== repositoryFingerprint(context.config, listed.config) ||
      listed.shards.some((shard) => shard.bytes === 0)
    )
      throw new ApiError('NOT_FOUND', `this node offers no shards of ${repository}`);
    const shards = entry.shards.map((file, i) => ({ file, bytes: listed.shards[i]!.bytes, sha256: entry.sha256![i]! }));
    const { id, branches, documents, contentBytes, warnings } = entry;
    return { status: 200, body: { id, fingerprint: placeFreeFingerprint(context.config, listed.config), branches, shards, documents, contentBytes, warnings } };
  },
};

export const peerShardRoute: Route = {
  method: 'post',
  path: '/api/cluster/shard',
  operationId: 'peerShard',
  tag: 'Cluster',
  summary: 'The bytes of a shard file this node offers (POST /api/cluster/shards); nodes only (the cluster key)',
  access: 'public',
  body: PeerShardRequest,
  response: { status: 200, contentType: 'application/octet-stream', description: 'The shard file' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'NOT_FOUND'],
  async handle(request, _caller, context) {
    clusterOf(context, request);
    const { file } = parseBody(shardBody, request.body);
    const offered = context
      .catalog()
      .repositories.flatMap((listed) => (listed.entry?.sha256 ? listed.shards : []))
      .find((shard) => shard.bytes > 0 && path.basename(shard.path) === file);
    if (!offered) throw new ApiError('NOT_FOUND', `${file} is not a shard this node offers`);
    return { contentType: 'application/octet-stream', stream: (sink) => sendFile(offered.path, offered.bytes, sink) };
  },
};

/** Reads a MiB at a time, each sent before the next is read; a file that cannot be read cuts the response off (the receiver checks the length). */
async function sendFile(file: string, bytes: number, sink: StreamSink): Promise<void> {
  let handle: fs.promises.FileHandle | undefined;
  try {
    handle = await fs.promises.open(file);
    for (let at = 0; at < bytes && !sink.isClosed();) {
      const length = Math.min(SEND_CHUNK_BYTES, bytes - at);
      const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(length), 0, length, at);
      if (bytesRead === 0) throw new Error(`${file} ended at ${at} of ${bytes} bytes`);
      at += bytesRead;
      await sink.write(buffer.subarray(0, bytesRead));
    }
  } catch {
    sink.cut();
  } finally {
    await handle?.close();
  }
}

const SEND_CHUNK_BYTES = 1 << 20;
