/** Loopback hosts, and the URLs trusted without TLS because they never leave the machine. */

const LOOPBACK_HOST = /^(127(\.\d{1,3}){3}|::1|\[::1\]|localhost)$/i;

/** 127.0.0.0/8, ::1 (bracketed, as in a URL, or not), localhost. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_HOST.test(host);
}

/** https, or http to a loopback host (a provider or a native app's redirect on the same machine, RFC 8252). */
export function secureOrLoopback(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
}
