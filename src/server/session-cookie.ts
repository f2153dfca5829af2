/**
 * The sign-in session's cookie (docs/sessions.md): `HttpOnly`, `SameSite=Lax`,
 * `Path=/`; when `publicUrl` is https also `Secure`, under the `__Host-`
 * name prefix (a browser then refuses it from plain http or a subdomain).
 */

const NAME = 'trawl_session';
const SECURE_NAME = `__Host-${NAME}`;
/** A Cookie header longer than this is not read (a browser sends a few KiB at most). */
const MAX_COOKIE_HEADER = 16 << 10;

/** Whether cookies are marked Secure: the daemon is reached over https. */
export function secureCookies(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

function cookieName(secure: boolean): string {
  return secure ? SECURE_NAME : NAME;
}

/** The session secret a request's Cookie header carries, if any. */
export function sessionSecretOf(headers: Record<string, string>, secure: boolean): string | undefined {
  const header = headers.cookie;
  if (header === undefined || header.length > MAX_COOKIE_HEADER) return undefined;
  const name = cookieName(secure);
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === name) return pair.slice(equals + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value that hands a browser its session for `maxAgeSeconds`. */
export function sessionCookie(secret: string, maxAgeSeconds: number, secure: boolean): string {
  return `${cookieName(secure)}=${secret}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that makes a browser forget its session. */
export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}
