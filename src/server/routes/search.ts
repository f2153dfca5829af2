/** POST /api/search and POST /api/stream_search (spec/api.md §3). */
import { ApiError } from '../../api/errors.js';
import { SearchRequest, SearchResponse, StreamSearchEvent } from '../../api/schemas.js';
import { parseBody, validator } from '../../api/validate.js';
import type { QueryNode } from '../../query/ast.js';
import { queryClass } from '../../query/query-class.js';
import type { StreamPart } from '../../search/sinks.js';
import { cancelSearch, createSignal } from '../../search/signal.js';
import { audit, type Caller } from '../access.js';
import { JSON_TYPE, type Request } from '../http.js';
import { asApiError } from '../known-errors.js';
import { callerKey } from '../rate-limit.js';
import type { Route, ServerContext } from '../route.js';

const body = validator(SearchRequest);
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
  summary: 'Search code: every matching file with its chunks, ranked, capped at `matches` match ranges',
  access: 'read',
  body: SearchRequest,
  response: { status: 200, schema: SearchResponse, description: 'The ranked results' },
  errors: [...SEARCH_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const search = parseBody(body, request.body);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from);
    const signal = signalFor(request);
    const json = await timedSearch(context, query, () => context.pool.searchJson(query, search, { visible: caller.canSee, signal, caller: from }));
    try {
      audit(context, caller, 'search', { id: null, type: null }, { query: search.query, matches: json.stats.actualMatchCount });
    } catch (error) {
      json.release();
      throw error;
    }
    return { status: 200, text: json.body, contentType: JSON_TYPE, release: json.release };
  },
};

const DONE = 'data: [DONE]\n\n';
const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const CHUNK_OPENING = Buffer.from('data: {"type":"chunk","files":');

/** A part's chunk event, `{"type":"chunk",files,repositoryInfo,stats}`, its files' JSON as the pool made it. */
function chunkEvent({ files, repositoryInfo, stats }: StreamPart): Buffer {
  return Buffer.concat([CHUNK_OPENING, files, Buffer.from(`,"repositoryInfo":${JSON.stringify(repositoryInfo)},"stats":${JSON.stringify(stats)}}\n\n`)]);
}

/** Bytes of events one stream may hold for a client that is behind; past it the client is cut off and its search stopped. */
const STREAM_BACKLOG_BYTES = 32 << 20;

export const streamSearchRoute: Route = {
  method: 'post',
  path: '/api/stream_search',
  operationId: 'streamSearch',
  tag: 'Search & Navigation',
  summary:
    'Search code, streamed as server-sent events: `{"type":"chunk",files,repositoryInfo,stats}` per shard group as it completes, then `{"type":"final",accumulatedStats,isSearchExhaustive}`, then `[DONE]`',
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
    const search = parseBody(body, request.body);
    const from = callerKey(caller, request);
    const query = await context.pool.plan(search, from); // errors before the first byte are ordinary JSON errors
    const signal = signalFor(request);
    audit(context, caller, 'search', { id: null, type: null }, { query: search.query, stream: true });
    return {
      contentType: 'text/event-stream',
      headers: { 'Cache-Control': 'no-cache' },
      async stream(sink) {
        // Writes wait for the client (backpressure); the search keeps its own pace, its results are capped.
        // Once the credential dies (revoked, expired, its user removed), what is not yet sent is dropped: the stream ends with an error.
        let credentialDied = false;
        const callerStillValid = () => {
          if (!credentialDied && !caller.stillValid()) {
            credentialDied = true;
            cancelSearch(signal);
          }
          return !credentialDied;
        };
        const unsubscribe = context.auth.onChange(() => void callerStillValid());
        let writing = sink.write(': search started\n\n');
        const write = (produce: () => string | Buffer | null) =>
          (writing = writing.then(() => {
            const piece = produce();
            return piece === null ? undefined : sink.write(piece);
          }));
        // Chunk events are made as results arrive and wait for the client: their bytes are bounded.
        let backlog = 0;
        const configured = new Map(context.config.repos.map((repo) => [repo.name, repo]));
        const stillVisible = (name: string) => {
          const repo = configured.get(name);
          return repo !== undefined && caller.canSee(repo);
        };
        let last: unknown;
        try {
          const onPart = (part: StreamPart) => {
            if (sink.isClosed()) return;
            const bytes = chunkEvent(part);
            backlog += bytes.length;
            if (backlog > STREAM_BACKLOG_BYTES) {
              cancelSearch(signal);
              sink.cut();
              return;
            }
            write(() => {
              backlog -= bytes.length;
              // The caller's view now, not when the results were found: a credential that expired since, or a grant
              // removed. A part that shows a repository the caller can no longer see is not sent at all.
              if (!callerStillValid()) return null;
              return part.repositoryInfo.every((info) => stillVisible(info.name)) ? bytes : null;
            });
          };
          const summary = await timedSearch(context, query, () => context.pool.stream(query, search, { visible: caller.canSee, signal, caller: from }, onPart));
          last = { type: 'final', ...summary };
        } catch (error) {
          const known = asApiError(error);
          if (!(known instanceof ApiError)) context.logger.error({ requestId: request.requestId, err: error }, 'stream search failed');
          const failure = known instanceof ApiError ? known : new ApiError('UNEXPECTED_ERROR', `unexpected error (request id ${request.requestId})`);
          last = { type: 'error', error: failure.toBody() };
        }
        const died = { type: 'error', error: new ApiError('NOT_AUTHENTICATED', 'the credential of this stream was revoked, or its user removed').toBody() };
        write(() => event(callerStillValid() ? last : died));
        write(() => DONE);
        try {
          await writing;
        } finally {
          unsubscribe();
        }
      },
    };
  },
};
