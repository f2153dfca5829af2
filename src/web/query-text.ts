/** `text` as a regex matching it literally, in a query the app builds (the daemon's own is query/escape.ts; the app reaches the daemon through its API only). */
export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/** A filter's value as the query language reads it: quoted (`\` and `"` escaped) when it holds a space or a quote, else as it is. */
export function queryValue(text: string): string {
  return /[\s"]/.test(text) ? `"${text.replace(/["\\]/g, '\\$&')}"` : text;
}
