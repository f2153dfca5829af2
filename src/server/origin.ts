/**
 * Which hosts and origins a request may name (docs/operations.md, "Limits
 * and defences"). DNS rebinding: a web page whose name resolves to
 * 127.0.0.1 could read a developer's daemon with the browser's help, so on
 * a loopback address the `Host` header must be a loopback name with the
 * bound port, or `publicUrl`'s host. Cross-site requests: a browser's
 * `Origin`, when sent, must be this server's (the request's own host, or
 * `publicUrl`'s origin), as the MCP specification asks of its servers.
 */
import { ApiError } from '../api/errors.js';
import { isLoopback } from '../config/loopback.js';

export interface OriginPolicy {
  /** The listen address. */
  host: string;
  /** The bound port. */
  port(): number;
  publicUrl(): string;
}


/** `publicUrl` parsed once per value (it changes only with a reload), not per request. */
let parsed: { text: string; url: URL } | null = null;
function parsedUrl(text: string): URL {
  if (parsed?.text !== text) parsed = { text, url: new URL(text) };
  return parsed.url;
}

/** Throws INSUFFICIENT_PERMISSIONS when the request's Host or Origin is not this server's. */
export function checkHostAndOrigin(headers: Record<string, string>, policy: OriginPolicy): void {
  const host = headers.host?.toLowerCase();
  const publicUrl = parsedUrl(policy.publicUrl());
  if (host !== undefined && isLoopback(policy.host)) {
    const port = policy.port();
    const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, publicUrl.host.toLowerCase(), ...(port === 80 ? ['127.0.0.1', 'localhost', '[::1]'] : [])]);
    if (!allowed.has(host)) {
      throw new ApiError('INSUFFICIENT_PERMISSIONS', `Host ${JSON.stringify(host)} is not this server's (it listens on loopback: use 127.0.0.1:${port}, localhost:${port} or publicUrl's host)`);
    }
  }
  const origin = headers.origin;
  if (origin === undefined) return;
  let originUrl: URL | null = null;
  try {
    originUrl = new URL(origin);
  } catch {
    // 'null' (a sandboxed page or a file) and anything malformed are no origin of this server's.
  }
  if (originUrl && (originUrl.origin === publicUrl.origin || (host !== undefined && originUrl.host.toLowerCase() === host))) return;
  throw new ApiError('INSUFFICIENT_PERMISSIONS', `Origin ${JSON.stringify(origin)} is not this server's: cross-site requests are refused`);
}
