/**
 * Which hosts and origins a request may name (docs/operations.md, "Limits
 * and defences"). DNS rebinding: a web page whose name an attacker points at
 * this server's address could read it with a visitor's browser, so whatever
 * the listen address the `Host` header must be one the operator named:
 * `publicUrl`'s host, an entry of `server.allowedHosts`, or a loopback name
 * with the bound port. Two `Host` headers are a malformed request.
 * Cross-site requests: a browser's `Origin`, when sent, must be this
 * server's (an allowed host's, or `publicUrl`'s origin), as the MCP
 * specification asks of its servers.
 */
import { ApiError } from '../api/errors.js';

export interface OriginPolicy {
  /** The bound port. */
  port(): number;
  publicUrl(): string;
  /** `server.allowedHosts`, lower case. */
  allowedHosts(): readonly string[];
}

/** The allowed `Host` values, made again only when publicUrl, the list or the port changes (a reload), not per request. */
let cached: { publicUrl: string; list: readonly string[]; port: number; publicOrigin: string; hosts: Set<string> } | null = null;
function allowed(policy: OriginPolicy): { publicOrigin: string; hosts: Set<string> } {
  const publicUrl = policy.publicUrl();
  const list = policy.allowedHosts();
  const port = policy.port();
  if (cached?.publicUrl === publicUrl && cached.list === list && cached.port === port) return cached;
  const url = new URL(publicUrl);
  const hosts = new Set<string>([url.host.toLowerCase()]);
  // A name without a port is reachable on the bound port, and on the scheme's default port behind a proxy.
  for (const name of ['127.0.0.1', 'localhost', '[::1]', ...list]) {
    hosts.add(/:\d+$/.test(name) ? name : `${name}:${port}`);
    if (list.includes(name) || port === 80) hosts.add(name);
  }
  cached = { publicUrl, list, port, publicOrigin: url.origin, hosts };
  return cached;
}

/** Throws when the request's Host or Origin is not this server's: 400 for two Host headers, 403 otherwise. */
export function checkHostAndOrigin(headers: Record<string, string>, policy: OriginPolicy): void {
  const host = headers.host?.toLowerCase();
  const { publicOrigin, hosts } = allowed(policy);
  if (host !== undefined && !hosts.has(host)) {
    if (host.includes(',')) throw new ApiError('INVALID_REQUEST_HEADERS', 'the request has more than one Host header');
    const port = policy.port();
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `Host ${JSON.stringify(host)} is not this server's: use publicUrl's host, 127.0.0.1:${port} or localhost:${port} from this machine, or list the name in server.allowedHosts`,
    );
  }
  const origin = headers.origin;
  if (origin === undefined) return;
  let originUrl: URL | null = null;
  try {
    originUrl = new URL(origin);
  } catch {
    // 'null' (a sandboxed page or a file) and anything malformed are no origin of this server's.
  }
  if (originUrl && (originUrl.origin === publicOrigin || (host !== undefined && originUrl.host.toLowerCase() === host))) return;
  throw new ApiError('INSUFFICIENT_PERMISSIONS', `Origin ${JSON.stringify(origin)} is not this server's: cross-site requests are refused`);
}
