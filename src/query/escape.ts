/** `text` as an RE2 (and JavaScript) regex matching it literally: for queries built from names (symbols, MCP scopes). */
export function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
