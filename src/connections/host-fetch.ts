/**
 * Requests to a code host's API, bounded: only to the connection's own origin (a redirect elsewhere is an
 * error, never followed), each within a time budget, a body of at most MAX_BODY_BYTES, and rate limits
 * waited out when the host says for how long (Retry-After, X-RateLimit-Reset, RateLimit-Reset) and that is
 * short; a longer wait fails the sync with the time it may resume (docs/connections.md, "Bounds").
 */
import { deadline } from '../git/deadline.js';
import { ConnectionError, RateLimitedError } from './errors.js';

/** A page of a host's listing is far below this; a body past it is refused. */
export const MAX_BODY_BYTES = 32 << 20;
/** The longest rate-limit wait a sync sits through; past it the sync fails and the next one resumes. */
const MAX_RATE_LIMIT_WAIT_MS = 60_000;
const MAX_ATTEMPTS = 4;
/** Same-origin redirects followed at most (a host moving its API path). */
const MAX_REDIRECTS = 3;

export interface HostFetchOptions {
  /** Requests may go to this origin only. */
  origin: string;
  timeoutMs: number;
  /** Ends every request of the sync (the daemon stopping). */
  signal: AbortSignal;
  /** Sent with every request (authorization). */
  headers: Record<string, string>;
}

export type HostFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A `fetch` bound to one host: what every host client (and octokit) calls. */
export function hostFetch(options: HostFetchOptions): HostFetch {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : null;
    let url = new URL(request ? request.url : input.toString());
    const headers = new Headers(request?.headers ?? init.headers);
    for (const [name, value] of Object.entries(options.headers)) headers.set(name, value);
    for (let attempt = 1, redirects = 0; ;) {
      if (url.origin !== options.origin) throw new ConnectionError(`the host sent trawl to ${url.origin}, not ${options.origin}; not followed`);
      const response = await send(url, { method: init.method ?? request?.method ?? 'GET', headers, body: init.body ?? null }, options);
      if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
        if (++redirects > MAX_REDIRECTS) throw new ConnectionError(`more than ${MAX_REDIRECTS} redirects from ${safeUrl(url)}`);
        url = new URL(response.headers.get('location')!, url);
        continue;
      }
      const waitMs = rateLimitWait(response);
      if (waitMs === null) return response;
      if (waitMs > MAX_RATE_LIMIT_WAIT_MS || attempt >= MAX_ATTEMPTS) throw new RateLimitedError(new Date(Date.now() + waitMs));
      attempt++;
      await sleep(waitMs, options.signal);
    }
  };
}

/** One request; its body read whole, up to MAX_BODY_BYTES. */
async function send(url: URL, init: { method: string; headers: Headers; body: BodyInit | null }, options: HostFetchOptions): Promise<Response> {
  const limit = deadline(options.signal, options.timeoutMs);
  try {
    return await sendWithin(url, init, options, limit.signal);
  } finally {
    limit.clear();
  }
}

/** `send`'s request, ended once `signal` fires (the sync stopped, or its time is up). */
async function sendWithin(
  url: URL,
  init: { method: string; headers: Headers; body: BodyInit | null },
  options: HostFetchOptions,
  signal: AbortSignal,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal });
  } catch (error) {
    if (options.signal.aborted) throw error;
    const reason = signal.aborted
      ? `no answer within ${options.timeoutMs / 1000} s`
      : (((error as Error).cause as Error | undefined)?.message ?? (error as Error).message);
    throw new ConnectionError(`${init.method} ${safeUrl(url)}: ${reason}`);
  }
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    await response.body?.cancel();
    throw new ConnectionError(`${safeUrl(url)} answered ${declared} bytes, over ${MAX_BODY_BYTES}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) throw new ConnectionError(`${safeUrl(url)} answered more than ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    await response.body?.cancel().catch(() => {});
    if (error instanceof ConnectionError || options.signal.aborted) throw error;
    throw new ConnectionError(
      `${safeUrl(url)}: the answer broke off (${signal.aborted ? `no answer within ${options.timeoutMs / 1000} s` : (error as Error).message})`,
    );
  }
  const nullBody = response.status === 204 || response.status === 304;
  const answer = new Response(nullBody ? null : Buffer.concat(chunks), { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(answer, 'url', { value: url.toString() });
  return answer;
}

/** How long the host asks to wait before the next request, or null when `response` is not a rate limit. */
export function rateLimitWait(response: Response, now = Date.now()): number | null {
  const limited =
    response.status === 429 || (response.status === 403 && (response.headers.get('x-ratelimit-remaining') === '0' || response.headers.has('retry-after')));
  if (!limited) return null;
  const retryAfter = response.headers.get('retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    return Number.isFinite(seconds) ? Math.max(0, seconds * 1000) : Math.max(0, Date.parse(retryAfter) - now || 0);
  }
  const reset = Number(response.headers.get('x-ratelimit-reset') ?? response.headers.get('ratelimit-reset'));
  // An epoch in seconds (GitHub, GitLab), or else seconds from now (the IETF draft).
  if (Number.isFinite(reset) && reset > 0) return reset > 1e9 ? Math.max(0, reset * 1000 - now) : reset * 1000;
  return 60_000;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** A URL as it may be shown: no user, password or query string (a token might ride in either). */
export function safeUrl(url: URL | string): string {
  const shown = new URL(url.toString());
  shown.username = '';
  shown.password = '';
  shown.search = '';
  return shown.toString();
}
