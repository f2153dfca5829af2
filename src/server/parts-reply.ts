/**
 * A search answered as parts written as they come (/api/stream_search, an exhaustive /api/search, a peer's
 * exhaustive search): each part through the stream's backlog (stream-backlog.ts) to the client at its pace,
 * checked against its reader's credential and view when it is written, not when it was found.
 */
import { ApiError } from '../api/errors.js';
import type { RepositoryInfo } from '../api/types.js';
import type { StreamPart, StreamSummary } from '../search/sinks.js';
import { cancelSearch, createSignal, type SearchSignal } from '../search/signal.js';
import { JSON_TYPE, type Request, type StreamReply } from './http.js';
import { asApiError } from './known-errors.js';
import type { ServerContext } from './route.js';

/** How a search's parts are written: the bytes before them, each part's (after another: `joined`), and the end (after a failure: null cuts the client off). */
export interface PartsFormat {
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
export const EVENT_PARTS: PartsFormat = {
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
export const JSON_PARTS: PartsFormat = {
  contentType: JSON_TYPE,
  opening: '{"files":[',
  // `files` is a JSON array: its members, after a comma unless they are the first sent.
  part: ({ files }) => (files.length <= 2 ? null : files.subarray(1, files.length - 1)),
  joined: (bytes) => Buffer.concat([COMMA, bytes]),
  final: ({ accumulatedStats, isSearchExhaustive }, repositoryInfo) =>
    `],"repositoryInfo":${JSON.stringify(repositoryInfo)},"stats":${JSON.stringify(accumulatedStats)},"isSearchExhaustive":${isSearchExhaustive}}`,
  failed: () => null,
};

/** Who the parts are written for, asked as each is written: whether its credential still lives, and whether it may see a repository now. */
export interface PartsReader {
  stillValid(): boolean;
  maySee(repository: string): boolean;
}

/** What a search answered as parts is run with: its signal, its backlog's pace, and `abandoned`, aborted with the signal (the client gone, the stream cut). */
export interface PartsCall {
  signal: SearchSignal;
  ready: () => Promise<void>;
  abandoned: AbortSignal;
}

export interface PartsReplyOptions {
  request: Request;
  context: ServerContext;
  format: PartsFormat;
  reader: PartsReader;
  /** Whether the search is exhaustive: its parts wait for the client (paced) instead of cutting it off past the backlog's bound. */
  paced: boolean;
  /** Runs the search, handing its parts to `onPart` as they come. */
  search(onPart: (part: StreamPart) => void, call: PartsCall): Promise<StreamSummary>;
}

/** The search answered as parts written as `format` says, each as it comes (see the module's comment). */
export function partsReply({ request, context, format, reader, paced, search }: PartsReplyOptions): StreamReply {
  const signal = createSignal(); // cancelled by `stop`, which the client going away calls
  const backlog = context.streamBacklogs.open();
  const abandon = new AbortController();
  const stop = () => {
    cancelSearch(signal);
    backlog.close();
    abandon.abort();
  };
  request.onAborted(stop);
  return {
    contentType: format.contentType,
    headers: { 'Cache-Control': 'no-cache' },
    async stream(sink) {
      // Writes wait for the client (backpressure); a capped search keeps its own pace, an exhaustive one the client's.
      // Once the credential dies (revoked, expired, its user removed), what is not yet sent is dropped: the stream ends with an error.
      let credentialDied = false;
      const readerStillValid = () => {
        if (!credentialDied && !reader.stillValid()) {
          credentialDied = true;
          stop();
        }
        return !credentialDied;
      };
      const unsubscribe = context.auth.onChange(() => void readerStillValid());
      let writing = sink.write(format.opening);
      const write = (produce: () => string | Uint8Array | null) =>
        (writing = writing.then(() => {
          const piece = produce();
          return piece === null ? undefined : sink.write(piece);
        }));
      const repositoryInfo = new Map<number, RepositoryInfo>();
      let partsSent = 0;
      let partsDropped = false;
      let last: (() => string | null) | undefined;
      try {
        const onPart = (part: StreamPart) => {
          if (sink.isClosed()) return;
          const bytes = format.part(part);
          if (bytes === null) return;
          if (!backlog.add(bytes.length, !paced)) {
            stop();
            sink.cut();
            return;
          }
          write(() => {
            backlog.taken(bytes.length);
            // The reader's view now, not when the results were found: a credential that expired since, or a grant
            // removed. A part that shows a repository the reader can no longer see is not sent at all.
            if (!readerStillValid()) return null;
            if (!part.repositoryInfo.every((info) => reader.maySee(info.name))) {
              partsDropped = true;
              return null;
            }
            for (const info of part.repositoryInfo) repositoryInfo.set(info.id, info);
            return partsSent++ === 0 ? bytes : format.joined(bytes);
          });
        };
        const summary = await search(onPart, { signal, ready: backlog.ready, abandoned: abandon.signal });
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
        const end = readerStillValid() ? last() : format.failed(died);
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
