/**
 * The cookies of signing in (docs/sessions.md): the session's, and the
 * state of a single sign-on under way. Both `HttpOnly`, `SameSite=Lax`,
 * `Path=/`; when `publicUrl` is https also `Secure`, under the `__Host-`
 * name prefix (a browser then refuses them from plain http or a subdomain).
 */

export const SESSION_COOKIE = 'trawl_session';
export const SIGN_IN_STATE_COOKIE = 'trawl_sign_in_state';
type CookieName = typeof SESSION_COOKIE | typeof SIGN_IN_STATE_COOKIE;

/** A Cookie header longer than this is not read (a browser sends a few KiB at most). */
const MAX_COOKIE_HEADER = 16 << 10;

/** Whether cookies are marked Secure: the daemon is reached over https. */
export function secureCookies(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

const fullName = (name: CookieName, secure: boolean) => (secure ? `__Host-${name}` : name);

/** The value of cookie `name` in a request's Cookie header, if any. */
export function cookieValue(headers: Record<string, string>, name: CookieName, secure: boolean): string | undefined {
  const header = headers.cookie;
  if (header === undefined || header.length > MAX_COOKIE_HEADER) return undefined;
  const wanted = fullName(name, secure);
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals !== -1 && pair.slice(0, equals).trim() === wanted) return pair.slice(equals + 1).trim();
  }
  return undefined;
}

/** The session secret a request's Cookie header carries, if any. */
export function sessionSecretOf(headers: Record<string, string>, secure: boolean): string | undefined {
  return cookieValue(headers, SESSION_COOKIE, secure);
}

/** The Set-Cookie value that gives a browser cookie `name` for `maxAgeSeconds` (0: forget it). */
export function setCookie(name: CookieName, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${fullName(name, secure)}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}
