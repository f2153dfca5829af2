/** POST /api/search and POST /api/stream_search (spec/api.md §3). */
import { ApiError } from '../../api/errors.js';
import type { RepositoryInfo } from '../../api/types.js';
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
import { cancelSearch, createSignal } from '../../search/signal.js';
import { audit, type Caller } from '../access.js';
import { JSON_TYPE, type Reply, type Request, type StreamReply } from '../http.js';
import { asApiError } from '../known-errors.js';
import { callerKey } from '../rate-limit.js';
import type { Route, ServerContext } from '../route.js';

const body = validator(SearchRequest);

/** A search route's request: SearchRequest, `matches` within LIMITS.matches unless the search is exhaustive. */
function parseSearch(request: Request, context: ServerContext): Static<typeof SearchRequest> {
  const search = parseBody(body, request.body);
  if (search.exhaustive && context.cluster)
    throw new ApiError('INVALID_REQUEST_BODY', 'request body field `exhaustive`: not yet answered across a cluster (docs/cluster.md)');
  if (!search.exhaustive && search.matches > LIMITS.matches) {
    throw new ApiError(
      'INVALID_REQUEST_BODY',
      `request body field \`matches\`: expected at most ${LIMITS.matches} unless \`exhaustive\` (got ${search.matches})`,
    );
  }
  return search;
}
const SEARCH_ERRORS = ['INVALID_REQUEST_BODY', 'FAILED_TO_PARSE_QUERY', 'SEARCH_CONTEXT_NOT_FOUND', 'NOT_AUTHENTICATED', 'SERVICE_UNAVAILABLE'] as const;

/** A search signal cancelled when the client goes away. */
export function signalFor(request: Request) {
  const signal = createSignal();
  request.onAborted(() => cancelSearch(signal));
  return signal;
}

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
    const search = parseSearch(request, context);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from);
    if (search.exhaustive) return partsReply({ request, caller, context, search, query, from }, JSON_PARTS);
    const signal = signalFor(request);
    const call = { visible: caller.canSee, signal, caller: from };
    const scope = clusterScope(context, query, call);
    if (scope) {
      const { response, missing } = await timedSearch(context, query, () => clusterSearch(context, query, search, call, scope));
      audit(context, caller, 'search', { id: null, type: null }, { query: search.query, matches: response.stats.actualMatchCount });
      return { status: 200, body: response, headers: missing.length > 0 ? { [MISSING_PARTITIONS_HEADER]: missing.join(',') } : {} };
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
function clusterScope(context: ServerContext, query: QueryNode, call: SearchCall): Scope | null {
  if (!context.cluster) return null;
  const visible = (repository: RepositoryConfig) => call.visible(repository) && mayMatchRepository(query, repository, context.config.contexts);
  const scope = context.cluster.search.scope(visible, context.config.repos);
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
  if (answer.missing.length > 0 && context.config.cluster?.strict) {
    throw new ApiError('SERVICE_UNAVAILABLE', `no live node serves partitions ${answer.missing.join(', ')} (cluster.strict)`, { 'Retry-After': '5' });
  }
  return answer;
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

/** The search across the cluster as a stream: its merged answer as one part. */
async function clusterStream(
  context: ServerContext,
  query: QueryNode,
  search: Static<typeof SearchRequest>,
  call: SearchCall,
  scope: Scope,
  onPart: (part: StreamPart) => void,
): Promise<StreamSummary> {
  const { response } = await clusterSearch(context, query, search, call, scope);
  const { files, ...rest } = response;
  onPart({ ...rest, files: Buffer.from(JSON.stringify(files)) });
  return { accumulatedStats: response.stats, isSearchExhaustive: response.isSearchExhaustive };
}

/** How a search's parts are written: the bytes before them, each part's (after another: `joined`), and the end (after a failure: null cuts the client off). */
interface PartsFormat {
  contentType: string;
  opening: string;
  part(part: StreamPart): Uint8Array | null;
  joined(bytes: Uint8Array): Uint8Array;
  final(summary: StreamSummary, repositoryInfo: RepositoryInfo[]): string;
  failed(error: ApiError): string | null;
}

const DONE = 'data: [DONE]\n\n';
const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const CHUNK_OPENING = Buffer.from('data: {"type":"chunk","files":');

/** /api/stream_search's server-sent events (spec/api.md §3). */
const EVENT_PARTS: PartsFormat = {
  contentType: 'text/event-stream',
  opening: ': search started\n\n',
  part: ({ files, repositoryInfo, stats }) =>
    Buffer.concat([CHUNK_OPENING, files, Buffer.from(`,"repositoryInfo":${JSON.stringify(repositoryInfo)},"stats":${JSON.stringify(stats)}}\n\n`)]),
  joined: (bytes) => bytes,
  final: (summary) => event({ type: 'final', ...summary }) + DONE,
  failed: (error) => event({ type: 'error', error: error.toBody() }) + DONE,
};

const COMMA = Buffer.from(',');

/**
 * An exhaustive /api/search's SearchResponse, its files written as they are found: `{"files":[…],"repositoryInfo",
 * "stats","isSearchExhaustive"}`. A failure after the first byte cuts the client off: the body is then not valid JSON.
 */
const JSON_PARTS: PartsFormat = {
  contentType: JSON_TYPE,
  opening: '{"files":[',
  // `files` is a JSON array: its members, after a comma unless they are the first sent.
  part: ({ files }) => (files.length <= 2 ? null : files.subarray(1, files.length - 1)),
  joined: (bytes) => Buffer.concat([COMMA, bytes]),
  final: ({ accumulatedStats, isSearchExhaustive }, repositoryInfo) =>
    `],"repositoryInfo":${JSON.stringify(repositoryInfo)},"stats":${JSON.stringify(accumulatedStats)},"isSearchExhaustive":${isSearchExhaustive}}`,
  failed: () => null,
};

interface PartsSearch {
  request: Request;
  caller: Caller;
  context: ServerContext;
  search: Static<typeof SearchRequest>;
  query: QueryNode;
  from: string;
}

/** The search answered as parts written as `format` says, each as it comes: every part of an exhaustive search, as the client reads them. */
function partsReply({ request, caller, context, search, query, from }: PartsSearch, format: PartsFormat): StreamReply {
  const signal = signalFor(request);
  const backlog = context.streamBacklogs.open();
  const stop = () => {
    cancelSearch(signal);
    backlog.close();
  };
  request.onAborted(() => backlog.close());
  audit(
    context,
    caller,
    'search',
    { id: null, type: null },
    search.exhaustive ? { query: search.query, exhaustive: true } : { query: search.query, stream: true },
  );
  return {
    contentType: format.contentType,
    headers: { 'Cache-Control': 'no-cache' },
    async stream(sink) {
      // Writes wait for the client (backpressure); a capped search keeps its own pace, an exhaustive one the client's.
      // Once the credential dies (revoked, expired, its user removed), what is not yet sent is dropped: the stream ends with an error.
      let credentialDied = false;
      const callerStillValid = () => {
        if (!credentialDied && !caller.stillValid()) {
          credentialDied = true;
          stop();
        }
        return !credentialDied;
      };
      const unsubscribe = context.auth.onChange(() => void callerStillValid());
      let writing = sink.write(format.opening);
      const write = (produce: () => string | Uint8Array | null) =>
        (writing = writing.then(() => {
          const piece = produce();
          return piece === null ? undefined : sink.write(piece);
        }));
      const configured = new Map(context.config.repos.map((repo) => [repo.name, repo]));
      const stillVisible = (name: string) => {
        const repo = configured.get(name);
        return repo !== undefined && caller.canSee(repo);
      };
      const repositoryInfo = new Map<number, RepositoryInfo>();
      let partsSent = 0;
      let partsDropped = false;
      let last: (() => string | null) | undefined;
      try {
        const onPart = (part: StreamPart) => {
          if (sink.isClosed()) return;
          const bytes = format.part(part);
          if (bytes === null) return;
          if (!backlog.add(bytes.length, !search.exhaustive)) {
            stop();
            sink.cut();
            return;
          }
          write(() => {
            backlog.taken(bytes.length);
            // The caller's view now, not when the results were found: a credential that expired since, or a grant
            // removed. A part that shows a repository the caller can no longer see is not sent at all.
            if (!callerStillValid()) return null;
            if (!part.repositoryInfo.every((info) => stillVisible(info.name))) {
              partsDropped = true;
              return null;
            }
            for (const info of part.repositoryInfo) repositoryInfo.set(info.id, info);
            return partsSent++ === 0 ? bytes : format.joined(bytes);
          });
        };
        const call = { visible: caller.canSee, signal, caller: from, ready: backlog.ready };
        const scope = clusterScope(context, query, call);
        const summary = await timedSearch(context, query, () =>
          scope ? clusterStream(context, query, search, call, scope, onPart) : context.pool.stream(query, search, call, onPart),
        );
        last = () => {
          summary.isSearchExhaustive &&= !partsDropped;
          return format.final(summary, [...repositoryInfo.values()]);
        };
      } catch (error) {
        const known = asApiError(error);
        if (!(known instanceof ApiError)) context.logger.error({ requestId: request.requestId, err: error }, 'stream search failed');
        const failure = known instanceof ApiError ? known : new ApiError('UNEXPECTED_ERROR', `unexpected error (request id ${request.requestId})`);
        last = () => format.failed(failure);
      }
      const died = new ApiError('NOT_AUTHENTICATED', 'the credential of this stream was revoked, or its user removed');
      write(() => {
        const end = callerStillValid() ? last() : format.failed(died);
        if (end === null) sink.cut();
        return end;
      });
      try {
        await writing;
      } finally {
        unsubscribe();
      }
    },
  };
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
    const search = parseSearch(request, context);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from); // errors before the first byte are ordinary JSON errors
    return partsReply({ request, caller, context, search, query, from }, EVENT_PARTS);
  },
};
