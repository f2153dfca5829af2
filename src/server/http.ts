/**
 * The one handler template every route runs in (the uWebSockets.js rules):
 * read the request synchronously, register onAborted before any await, read
 * the body with a size cap, `cork` every write, stream with backpressure
 * (`write` + `onWritable`), and clean up exactly once, whether the response
 * ended or the client went away.
 */
import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { ApiError } from '../api/errors.js';
import { clientAddress } from './client-address.js';

export interface Request {
  /** Lower-case method. */
  method: string;
  path: string;
  /** The raw query string, without '?'. */
  query: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  requestId: string;
  remoteAddress: string;
  body: Buffer;
  /**
   * Calls `listener` once when the client disconnects before the response is
   * complete (at once if it already has). Not an AbortSignal (docs/design.md, "The hot path's memory").
   */
  onAborted(listener: () => void): void;
}

export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface TextReply {
  status: number;
  /**
   * The text, or its UTF-8 bytes, in one piece or several: a body over WHOLE_BODY_BYTES is written as the client
   * takes it (never copied; a client that takes nothing for `streamStallMs` is cut off).
   */
  text: string | Buffer | readonly Uint8Array[];
  contentType: string;
  headers?: Record<string, string>;
  /** Called once `text` is written (uWS has copied it, or the client took it) or will not be: memory reused after it. */
  release?: () => void;
}

/** A response written piece by piece; the function ends when the stream is complete. */
export interface StreamReply {
  /** Default 200. */
  status?: number;
  stream: (sink: StreamSink) => Promise<void>;
  contentType: string;
  headers?: Record<string, string>;
}

export type Reply = JsonReply | TextReply | StreamReply;

export interface StreamSink {
  /**
   * Writes a piece; resolves when the client can take more (at once unless it
   * is backpressured). A client that takes nothing for `streamStallMs`, or
   * whose unread bytes would pass STREAM_LIMITS.bufferedBytesInAll with every
   * other stream's, is cut off (the response is then aborted).
   */
  write(piece: string | Uint8Array): Promise<void>;
  /** Whether the response is over (complete or aborted): nothing more will be sent. */
  isClosed(): boolean;
  /** Cuts the client off: the connection is closed and the response aborted. */
  cut(): void;
}

/** Bounds on what streamed responses may hold in memory for clients that do not read. */
const STREAM_LIMITS = {
  /** Bytes written to all streaming clients and not yet taken by them. */
  bufferedBytesInAll: 256 << 20,
} as const;

/**
 * A body up to this size is ended at once (uWS copies what the socket does not take); a larger one is written as
 * the client takes it, never copied, and its client cut off when it takes nothing for `streamStallMs`.
 */
const WHOLE_BODY_BYTES = 1 << 20;

/** Bytes written to streaming clients that they have not taken yet, all connections together. */
let bufferedInAll = 0;

export interface HandlerHooks {
  maxBodyBytes: number;
  /** A streaming client that takes nothing for this long is cut off. */
  streamStallMs: number;
  /** Called once per request when it is over (answered or aborted). */
  finished(request: Request, status: number, aborted: boolean): void;
  /** Called before answering 500: for errors that are not ApiErrors, and for ApiErrors of status 500. */
  unexpected(request: Request, error: unknown): void;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  302: 'Found',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * uWS closes a connection idle for 8–12 s (its compiled-in 10 s, checked every 4 s): announced lower, so that a
 * pooled client that honours the hint (undici, Node's agent) never sends on a connection as it closes.
 */
const KEEP_ALIVE = 'timeout=5';

/** A percent-encoded path segment, or null when its encoding is malformed (`%zz`, a lone surrogate). */
export function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Runs `handle` for one uWS request under the template. */
export function serve(res: HttpResponse, req: HttpRequest, hooks: HandlerHooks, handle: (request: Request) => Promise<Reply>): void {
  const headers: Record<string, string> = {};
  // A repeated header is joined as RFC 9110 §5.3 says (cookies with '; '), so that none is silently dropped.
  req.forEach((key, value) => {
    const earlier = headers[key];
    headers[key] = earlier === undefined ? value : `${earlier}${key === 'cookie' ? '; ' : ', '}${value}`;
  });
  let done = false;
  let aborted = false;
  let abortListeners: (() => void)[] = [];
  const offered = headers['x-request-id'];
  const request: Request = {
    method: req.getMethod(),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    requestId: offered && REQUEST_ID.test(offered) ? offered : randomUUID(),
    remoteAddress: clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString()),
    body: Buffer.alloc(0),
    onAborted: (listener) => {
      if (aborted) listener();
      else if (!done) abortListeners.push(listener);
    },
  };
  let status = 0;
  let drained: (() => void) | null = null;
  const finish = (clientGone: boolean) => {
    if (done) return;
    done = true;
    aborted = clientGone;
    const listeners = abortListeners;
    abortListeners = [];
    if (aborted) for (const listener of listeners) listener();
    drained?.();
    hooks.finished(request, status, aborted);
  };
  res.onAborted(() => finish(true));

  const writeHead = (code: number, contentType: string, extra: Record<string, string> = {}) => {
    status = code;
    res.writeStatus(`${code} ${STATUS_TEXT[code] ?? ''}`);
    res.writeHeader('Content-Type', contentType);
    res.writeHeader('X-Request-Id', request.requestId);
    res.writeHeader('X-Content-Type-Options', 'nosniff');
    res.writeHeader('Keep-Alive', KEEP_ALIVE);
    for (const [key, value] of Object.entries(extra)) res.writeHeader(key, value);
  };
  const endWith = (code: number, contentType: string, body: string | Uint8Array, extra?: Record<string, string>, closeConnection = false) => {
    if (done) return;
    res.cork(() => {
      writeHead(code, contentType, extra);
      res.end(body, closeConnection);
    });
    finish(false);
  };
  /** Resolves when the client can take more, or the response is over; cuts the client off after streamStallMs. */
  const writable = () =>
    new Promise<void>((resolve) => {
      const stalled = setTimeout(cut, hooks.streamStallMs);
      drained = () => {
        drained = null;
        clearTimeout(stalled);
        resolve();
      };
      res.onWritable(() => {
        drained?.();
        return true;
      });
    });
  /** `pieces` as the body (Content-Length their sum), each written from where the socket stopped taking it. */
  const endWithPieces = async (code: number, contentType: string, pieces: readonly Uint8Array[], extra?: Record<string, string>) => {
    if (done) return;
    const total = pieces.reduce((sum, piece) => sum + piece.byteLength, 0);
    let index = 0;
    let pieceStart = 0; // where pieces[index] starts in the body
    let ended = false;
    const writeOn = () => {
      for (; index < pieces.length; pieceStart += pieces[index++]!.byteLength) {
        const [taken, responded] = res.tryEnd(pieces[index]!.subarray(res.getWriteOffset() - pieceStart), total);
        ended = responded;
        if (!taken || responded) return;
      }
    };
    res.cork(() => {
      writeHead(code, contentType, extra);
      if (total === 0) {
        res.end();
        ended = true;
      } else {
        writeOn();
      }
    });
    while (!ended && !done) {
      await writable();
      if (!done) res.cork(writeOn);
    }
    if (ended) finish(false);
  };
  const fail = (error: unknown, closeConnection = false) => {
    const apiError = error instanceof ApiError ? error : new ApiError('UNEXPECTED_ERROR', `unexpected error (request id ${request.requestId})`);
    // A known server fault (a damaged repository, a failed blame) is the operator's to see as much as an unknown one.
    if (!(error instanceof ApiError) || apiError.statusCode === 500) hooks.unexpected(request, error);
    endWith(apiError.statusCode, JSON_TYPE, JSON.stringify(apiError.toBody()), apiError.headers, closeConnection);
  };

  // A method, not a getter (docs/design.md, "The hot path's memory").
  const cut = () => {
    if (done) return;
    res.close(); // calls onAborted: the response ends as aborted
  };
  const sink: StreamSink = {
    isClosed: () => done,
    cut,
    write(piece) {
      if (done) return Promise.resolve();
      let ok = true;
      res.cork(() => {
        ok = res.write(piece);
      });
      if (ok) return Promise.resolve();
      // uWS holds what the client has not taken: count it until it drains, and wait at most streamStallMs.
      const held = typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
      bufferedInAll += held;
      if (bufferedInAll > STREAM_LIMITS.bufferedBytesInAll) {
        bufferedInAll -= held;
        cut();
        return Promise.resolve();
      }
      return writable().then(() => {
        bufferedInAll -= held;
      });
    },
  };

  const respond = async () => {
    request.body = await readBody(res, request.method, hooks.maxBodyBytes);
    const reply = await handle(request);
    if ('text' in reply) {
      try {
        // Nothing when the client is gone. A small body goes whole: uWS copies what the socket does not take.
        const { text } = reply;
        if (typeof text === 'string') {
          endWith(reply.status, reply.contentType, text, reply.headers);
        } else {
          const pieces = Buffer.isBuffer(text) ? [text] : text;
          if (pieces.length === 1 && pieces[0]!.byteLength <= WHOLE_BODY_BYTES) endWith(reply.status, reply.contentType, pieces[0]!, reply.headers);
          else await endWithPieces(reply.status, reply.contentType, pieces, reply.headers);
        }
      } finally {
        reply.release?.();
      }
      return;
    }
    if (done) return;
    if ('stream' in reply) {
      res.cork(() => writeHead(reply.status ?? 200, reply.contentType, reply.headers));
      await reply.stream(sink);
      if (!done) {
        res.cork(() => res.end());
        finish(false);
      }
    } else if (reply.status === 204) {
      if (done) return;
      res.cork(() => {
        writeHead(204, JSON_TYPE, reply.headers);
        res.endWithoutBody();
      });
      finish(false);
    } else {
      endWith(reply.status, JSON_TYPE, JSON.stringify(reply.body), reply.headers);
    }
  };
  respond().catch((error: unknown) => {
    if (done) return;
    if (status !== 0) {
      // Headers already went out (a stream): all that can be done is to end it.
      res.cork(() => res.end());
      finish(false);
      return;
    }
    // A body far over the limit is answered before it was read to the end: close the connection.
    fail(error, error instanceof BodyTooLargeError && !error.drained);
  });
}

class BodyTooLargeError extends ApiError {
  constructor(
    limit: number,
    /** False when the body was not read to its end: the connection must then be closed. */
    readonly drained: boolean,
  ) {
    super('INVALID_REQUEST_BODY', `the request body is over the limit of ${limit} bytes`);
  }
}

/**
 * Bodies over the limit are still read to the end (and discarded) before the
 * 400 goes out, up to this multiple of the limit: a client that is still
 * writing when the server answers and closes gets EPIPE instead of the
 * answer. Past it the connection is closed at once.
 */
const DRAIN_LIMIT_FACTOR = 16;

/** The whole body (empty for methods without one), refused past `limit` bytes. */
function readBody(res: HttpResponse, method: string, limit: number): Promise<Buffer> {
  if (method === 'get' || method === 'head' || method === 'delete') return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let length = 0;
    let settled = false;
    res.onData((chunk, isLast) => {
      if (settled) return;
      length += chunk.byteLength;
      if (length > limit * DRAIN_LIMIT_FACTOR) {
        settled = true;
        reject(new BodyTooLargeError(limit, false));
      } else if (length > limit) {
        if (isLast) reject(new BodyTooLargeError(limit, true));
      } else {
        parts.push(Buffer.from(chunk.slice(0))); // uWS reuses the chunk's memory after the callback
        if (isLast) resolve(Buffer.concat(parts));
      }
    });
  });
}
