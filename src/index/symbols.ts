/**
 * Turns ctags tags (name + 1-based line) into byte ranges inside a document:
 * the first occurrence of the name on its line. Tags whose name is not on
 * that line (macro-generated, qualified or anonymous names) are dropped, as
 * Zoekt does, because a range the user cannot see in the text is worse than none.
 */
import type { DocumentSymbol } from './model.js';

export interface CtagsTag {
  name: string;
  line: number;
  kind: string;
  scope?: string;
  scopeKind?: string;
}

export function symbolsFromTags(content: Buffer, tags: readonly CtagsTag[]): DocumentSymbol[] {
  if (tags.length === 0) return [];
  const lineStarts = [0];
  for (let at = content.indexOf(10); at !== -1; at = content.indexOf(10, at + 1)) lineStarts.push(at + 1);
  const symbols: DocumentSymbol[] = [];
  for (const tag of tags) {
    if (!tag.name || !Number.isInteger(tag.line) || tag.line < 1 || tag.line > lineStarts.length) continue;
    const lineStart = lineStarts[tag.line - 1]!;
    const lineEnd = tag.line < lineStarts.length ? lineStarts[tag.line]! - 1 : content.length;
    const name = Buffer.from(tag.name, 'utf8');
    const at = content.subarray(lineStart, lineEnd).indexOf(name);
    if (at === -1) continue;
    const symbol: DocumentSymbol = { start: lineStart + at, end: lineStart + at + name.length, kind: tag.kind };
    if (tag.scope) symbol.parent = { symbol: tag.scope, kind: tag.scopeKind ?? '' };
    symbols.push(symbol);
  }
  return symbols.sort((a, b) => a.start - b.start || a.end - b.end);
}
