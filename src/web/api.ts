import type { FileResult, Range } from '../api/types.js';

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

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return (await send('POST', path, body)).json() as Promise<T>;
}

/** A DELETE; resolves once it succeeded. */
export async function deleteAt(path: string): Promise<void> {
  await send('DELETE', path);
}

async function send(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<Response> {
  const response = await fetch(path, { method, headers: headers(body !== undefined, true), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!response.ok) throw await failure(response);
  return response;
}

/** The `data:` payloads of POST /api/stream_search as they arrive, parsed; ends at `[DONE]`. */
export async function* streamSearch(body: unknown, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  const response = await fetch('/api/stream_search', { method: 'POST', headers: headers(true, true), body: JSON.stringify(body), signal });
  if (!response.ok || !response.body) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!block.startsWith('data: ')) continue; // comments keep the connection warm
      const data = block.slice('data: '.length);
      if (data === '[DONE]') return;
      yield JSON.parse(data) as StreamEvent;
    }
  }
}

export type { ApiKeyInfo, AuditRecord, Chunk, CreatedApiKey, FileResult, InstanceSettings, LicenseInfo, Member, Position, Range, ScopedTokenInfo, SessionInfo, SessionState, TreeNode } from '../api/types.js';

export type StreamEvent =
  | { type: 'chunk'; files: FileResult[]; stats: { actualMatchCount: number } }
  | { type: 'final'; accumulatedStats: { actualMatchCount: number; totalMatchCount: number; fileCount: number; duration: number }; isSearchExhaustive: boolean }
  | { type: 'error'; error: { statusCode: number; errorCode: string; message: string } };

export interface Source {
  source: string;
  encoding: 'utf-8' | 'base64';
  language: string;
  path: string;
  repo: string;
  webUrl: string;
}

export interface Repository {
  repoName: string;
  repoDisplayName?: string;
  webUrl: string;
  defaultBranch: string;
  branches: string[];
  indexState: string;
}

export interface SymbolMatches {
  stats: { matchCount: number };
  files: { fileName: string; repository: string; webUrl: string; language: string; matches: { lineContent: string; range: Range }[] }[];
}
