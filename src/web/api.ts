import type { Range, StreamSearchEvent } from '../api/types.js';

/**
 * The daemon's HTTP API, as the page uses it: every request carries the API
 * key from session storage when there is one, else the browser sends the
 * sign-in cookie and writes carry the session's CSRF token; errors keep the
 * API's error object so the page can show its message as it is.
 */
const KEY_STORAGE = 'trawl.apiKey';
let csrfToken: string | null = null;

/** The signed-in session's CSRF token (from sign-in or GET /api/auth/session), sent on every write. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function setApiKey(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
}

function headers(json: boolean, write: boolean): Record<string, string> {
  const result: Record<string, string> = {};
  if (json) result['Content-Type'] = 'application/json';
  const key = apiKey();
  if (key) result.Authorization = `Bearer ${key}`;
  else if (write && csrfToken) result['X-CSRF-Token'] = csrfToken;
  return result;
}

async function failure(response: Response): Promise<ApiFailure> {
  try {
    const body = (await response.json()) as { errorCode?: string; message?: string };
    return new ApiFailure(response.status, body.errorCode ?? 'UNEXPECTED_ERROR', body.message ?? response.statusText);
  } catch {
    return new ApiFailure(response.status, 'UNEXPECTED_ERROR', response.statusText);
  }
}

export async function getJson<T>(path: string, params: Record<string, string> = {}): Promise<T> {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(query ? `${path}?${query}` : path, { headers: headers(false, false) });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

export async function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  return (await send('POST', path, body, signal)).json() as Promise<T>;
}

/** A POST answered with server-sent events: each event's data, parsed, to `onEvent`, up to `[DONE]`. */
export async function postEvents(path: string, body: unknown, signal: AbortSignal, onEvent: (event: StreamSearchEvent) => void): Promise<void> {
  const response = await send('POST', path, body, signal);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!block.startsWith('data: ')) continue; // a comment
      const data = block.slice('data: '.length);
      if (data === '[DONE]') return;
      onEvent(JSON.parse(data) as StreamSearchEvent);
    }
  }
}

/** A DELETE; resolves once it succeeded. */
export async function deleteAt(path: string): Promise<void> {
  await send('DELETE', path);
}

async function send(method: 'POST' | 'DELETE', path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  const response = await fetch(path, {
    method,
    headers: headers(body !== undefined, true),
    signal,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await failure(response);
  return response;
}

export type {
  ApiKeyInfo,
  AuditRecord,
  BlameResponse,
  Chunk,
  Commit,
  ConnectionListing,
  CreatedApiKey,
  DiffResponse,
  FileResult,
  InstanceSettings,
  LicenseInfo,
  Member,
  Position,
  Range,
  RepositoryListing,
  ScopedTokenInfo,
  SearchResponse,
  SessionInfo,
  SessionState,
  TreeNode,
} from '../api/types.js';

export interface Source {
  source: string;
  encoding: 'utf-8' | 'base64';
  language: string;
  path: string;
  repo: string;
  webUrl: string;
}

export interface SymbolMatches {
  stats: { matchCount: number };
  files: { fileName: string; repository: string; webUrl: string; language: string; matches: { lineContent: string; range: Range }[] }[];
}
