/** POST /api/search and POST /api/stream_search (spec/api.md §3). */
import { ApiError } from '../../api/errors.js';
import type { Static } from '@sinclair/typebox';
import { LIMITS, SearchRequest, SearchResponse, StreamSearchEvent } from '../../api/schemas.js';
import { parseBody, validator } from '../../api/validate.js';
import type { QueryNode } from '../../query/ast.js';
import { queryClass } from '../../query/query-class.js';
import { mayMatchRepository } from '../../query/repository-scope.js';
import type { ClusterAnswer, Scope } from '../../cluster/fan-out.js';
import type { RepositoryConfig } from '../../config/config.js';
import type { SearchCall } from '../../search/pool.js';
import type { StreamPart, StreamSummary } from '../../search/sinks.js';
import { audit, type Caller } from '../access.js';
import { JSON_TYPE, type Reply, type Request, type StreamReply } from '../http.js';
import { EVENT_PARTS, JSON_PARTS, partsReply, type PartsFormat } from '../parts-reply.js';
import { callerKey } from '../rate-limit.js';
import { signalFor } from '../request-signal.js';
import type { Route, ServerContext } from '../route.js';

const body = validator(SearchRequest);

/** A search route's request: SearchRequest, `matches` within LIMITS.matches unless the search is exhaustive. */
function parseSearch(request: Request): Static<typeof SearchRequest> {
  const search = parseBody(body, request.body);
  if (!search.exhaustive && search.matches > LIMITS.matches) {
    throw new ApiError(
      'INVALID_REQUEST_BODY',
      `request body field \`matches\`: expected at most ${LIMITS.matches} unless \`exhaustive\` (got ${search.matches})`,
    );
  }
  return search;
}
const SEARCH_ERRORS = ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'SEARCH_CONTEXT_NOT_FOUND', 'NOT_AUTHENTICATED', 'SERVICE_UNAVAILABLE'] as const;

async function timedSearch<T>(context: ServerContext, query: QueryNode, run: () => Promise<T>): Promise<T> {
  const stop = context.metrics.searchSeconds.startTimer({ class: queryClass(query) });
  try {
    return await run();
  } finally {
    stop();
  }
}

export const searchRoute: Route = {
  method: 'post',
  path: '/api/search',
  operationId: 'search',
  tag: 'Search & Navigation',
  summary:
    'Search code: every matching file with its chunks, ranked, capped at `matches` match ranges; with `exhaustive`, every match, written as the client reads it',
  access: 'read',
  body: SearchRequest,
  response: { status: 200, schema: SearchResponse, description: 'The ranked results' },
  errors: [...SEARCH_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext): Promise<Reply> {
    const search = parseSearch(request);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from);
    if (search.exhaustive) return searchParts({ request, caller, context, search, query, from }, JSON_PARTS);
    const signal = signalFor(request);
    const call = { visible: caller.canSee, signal, caller: from };
    const scope = clusterScope(context, query, call);
    if (scope) {
      const { json, stats, missing } = await timedSearch(context, query, () => context.cluster!.search.searchJson(query, search, call, scope));
      strictly(context, missing);
      audit(context, caller, 'search', { id: null, type: null }, { query: search.query, matches: stats.actualMatchCount });
      const headers = missing.length > 0 ? { [MISSING_PARTITIONS_HEADER]: missing.join(',') } : undefined;
      return { status: 200, text: json, contentType: JSON_TYPE, headers };
    }
    const json = await timedSearch(context, query, () => context.pool.searchJson(query, search, call));
    try {
      audit(context, caller, 'search', { id: null, type: null }, { query: search.query, matches: json.stats.actualMatchCount });
    } catch (error) {
      json.release();
      throw error;
    }
    return { status: 200, text: json.body, contentType: JSON_TYPE, release: json.release };
  },
};

/** Names the partitions a search across a cluster could not ask (no live node served them): its answer lacks their repositories. */
const MISSING_PARTITIONS_HEADER = 'X-Trawl-Missing-Partitions';

/**
 * What a search across the cluster looks in (cluster/fan-out.ts `scope`): the repositories the caller may see and the
 * query may match (query/repository-scope.ts), by partition; null when this node is in no cluster or serves them all.
 */
function clusterScope(context: ServerContext, query: QueryNode, call: Pick<SearchCall, 'visible'>): Scope | null {
  if (!context.cluster) return null;
  const mayMatch = (repository: RepositoryConfig) => mayMatchRepository(query, repository, context.config.contexts);
  const scope = context.cluster.search.scope(call.visible, mayMatch, context.config.repos);
  return context.cluster.search.servesAll(scope) ? null : scope;
}

/** The search across the cluster (cluster/fan-out.ts); with `cluster.strict`, refused when a partition is missing. */
async function clusterSearch(
  context: ServerContext,
  query: QueryNode,
  search: Static<typeof SearchRequest>,
  call: SearchCall,
  scope: Scope,
): Promise<ClusterAnswer> {
  const answer = await context.cluster!.search.search(query, search, call, scope);
  strictly(context, answer.missing);
  return answer;
}

/** With `cluster.strict`, a search lacking partitions is refused. */
function strictly(context: ServerContext, missing: readonly number[]): void {
  if (missing.length > 0 && context.config.cluster?.strict) {
    throw new ApiError('SERVICE_UNAVAILABLE', `no live node serves partitions ${missing.join(', ')} (cluster.strict)`, { 'Retry-After': '5' });
  }
}

/** The search answered as objects: by this node's pool, or across the cluster when this node is in one. */
export async function searchObjects(
  context: ServerContext,
  query: QueryNode,
  search: Static<typeof SearchRequest>,
  call: SearchCall,
): Promise<Static<typeof SearchResponse>> {
  const scope = clusterScope(context, query, call);
  return scope ? (await clusterSearch(context, query, search, call, scope)).response : context.pool.search(query, search, call);
}

/**
 * The search across the cluster as parts: an exhaustive one's every part as its node sent it (cluster/fan-out.ts
 * `parts`); a capped one's merged answer as one part.
 */
async function clusterParts(
  context: ServerContext,
  query: QueryNode,
  search: Static<typeof SearchRequest>,
  call: SearchCall,
  scope: Scope,
  onPart: (part: StreamPart) => void,
  abandoned: AbortSignal,
): Promise<StreamSummary> {
  if (search.exhaustive) {
    const { summary, missing } = await context.cluster!.search.parts({ query, request: search, call, scope, abandoned }, onPart);
    strictly(context, missing);
    return summary;
  }
  const { response } = await clusterSearch(context, query, search, call, scope);
  const { files, ...rest } = response;
  onPart({ ...rest, files: Buffer.from(JSON.stringify(files)) });
  return { accumulatedStats: response.stats, isSearchExhaustive: response.isSearchExhaustive };
}

interface PartsSearch {
  request: Request;
  caller: Caller;
  context: ServerContext;
  search: Static<typeof SearchRequest>;
  query: QueryNode;
  from: string;
}

/** The caller's search answered as parts (server/parts-reply.ts): by this node's pool, or across the cluster. */
function searchParts({ request, caller, context, search, query, from }: PartsSearch, format: PartsFormat): StreamReply {
  audit(
    context,
    caller,
    'search',
    { id: null, type: null },
    search.exhaustive ? { query: search.query, exhaustive: true } : { query: search.query, stream: true },
  );
  const scope = clusterScope(context, query, { visible: caller.canSee });
  // Refused before the first byte when partitions are known to be missing; a node lost later ends the stream with the error.
  if (scope && search.exhaustive) strictly(context, context.cluster!.search.unserved(scope));
  const configured = new Map(context.config.repos.map((repo) => [repo.name, repo]));
  const reader = {
    stillValid: () => caller.stillValid(),
    maySee: (name: string) => {
      const repo = configured.get(name);
      return repo !== undefined && caller.canSee(repo);
    },
  };
  return partsReply({
    request,
    context,
    format,
    reader,
    paced: search.exhaustive === true,
    search: (onPart, { signal, ready, abandoned }) => {
      const call = { visible: caller.canSee, signal, caller: from, ready };
      return timedSearch(context, query, () =>
        scope ? clusterParts(context, query, search, call, scope, onPart, abandoned) : context.pool.stream(query, search, call, onPart),
      );
    },
  });
}

export const streamSearchRoute: Route = {
  method: 'post',
  path: '/api/stream_search',
  operationId: 'streamSearch',
  tag: 'Search & Navigation',
  summary:
    'Search code, streamed as server-sent events: `{"type":"chunk",files,repositoryInfo,stats}` per shard group as it completes (with `exhaustive`, every match, as the client reads them), then `{"type":"final",accumulatedStats,isSearchExhaustive}`, then `[DONE]`',
  access: 'read',
  body: SearchRequest,
  response: {
    status: 200,
    contentType: 'text/event-stream',
    schema: StreamSearchEvent,
    description: "A stream of server-sent events; the schema is that of each event's `data`",
  },
  errors: [...SEARCH_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const search = parseSearch(request);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from); // errors before the first byte are ordinary JSON errors
    return searchParts({ request, caller, context, search, query, from }, EVENT_PARTS);
  },
};
