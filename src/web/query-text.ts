/** `text` as a regex matching it literally, in a query the app builds (the daemon's own is query/escape.ts; the app reaches the daemon through its API only). */
export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
