/**
 * Chunks of a file result: the lines around each match, `contextLines` on
 * either side, merged when their windows overlap or touch, with the match
 * ranges and the ctags definitions the matches fall in.
 */
import type { Chunk, Range, SymbolInfo } from '../api/types.js';
import type { DocumentSymbol } from '../index/model.js';
import type { LineIndex } from './positions.js';
import { rangePairs } from './ranges.js';

export interface ChunkInput {
  content: Buffer;
  lines: LineIndex;
  /** Flattened [start, end, …] byte ranges, in any order. */
  ranges: number[];
  contextLines: number;
  symbols: DocumentSymbol[];
}

export function buildChunks({ content, lines, ranges, contextLines, symbols }: ChunkInput): Chunk[] {
  const pairs = rangePairs(ranges).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const lastLine = lines.lineCount;
  const groups: { first: number; last: number; ranges: [number, number][] }[] = [];
  for (const [start, end] of pairs) {
    const first = Math.max(1, lines.lineOf(start) - contextLines);
    const last = Math.min(lastLine, lines.lineOf(Math.max(start, end - 1)) + contextLines);
    const current = groups[groups.length - 1];
    if (current && first <= current.last + 1) {
      current.last = Math.max(current.last, last);
      current.ranges.push([start, end]);
    } else {
      groups.push({ first, last, ranges: [[start, end]] });
    }
  }
  return groups.map((group) => {
    const from = lines.lineStart(group.first);
    const chunk: Chunk = {
      content: content.toString('utf8', from, lines.lineEnd(group.last)),
      matchRanges: group.ranges.map(([start, end]): Range => ({ start: lines.position(start), end: lines.position(end) })),
      contentStart: lines.position(from),
    };
    const definitions = symbolsAt(content, symbols, group.ranges);
    if (definitions.length > 0) chunk.symbols = definitions;
    return chunk;
  });
}

/** The distinct definitions whose names overlap any of the ranges. */
function symbolsAt(content: Buffer, symbols: DocumentSymbol[], ranges: [number, number][]): SymbolInfo[] {
  const found: SymbolInfo[] = [];
  for (const symbol of symbols) {
    if (!ranges.some(([start, end]) => start < symbol.end && symbol.start < end)) continue;
    const info: SymbolInfo = { symbol: content.toString('utf8', symbol.start, symbol.end), kind: symbol.kind };
    if (symbol.parent) info.parent = symbol.parent;
    found.push(info);
  }
  return found;
}
