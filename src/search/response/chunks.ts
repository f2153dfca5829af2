/**
 * Chunks of a file result: the lines around each match, `contextLines` on
 * either side, merged when their windows overlap or touch, with the match
 * ranges and the ctags definitions the matches fall in.
 */
import type { Chunk, Range, SymbolInfo } from '../../api/types.js';
import type { DocumentSymbol } from '../../index/model.js';
import { LineIndex, NEWLINE } from './positions.js';
import { byStart } from '../../index/ranges.js';
import { SymbolSpans } from '../symbol-spans.js';

export interface ChunkInput {
  content: Buffer;
  /** Flattened [start, end, …] byte ranges, in any order. */
  ranges: readonly number[];
  contextLines: number;
  /** The file's definitions by start offset (only those overlapping `ranges` are needed). */
  symbols: DocumentSymbol[];
}

export function buildChunks({ content, ranges, contextLines, symbols }: ChunkInput): Chunk[] {
  const lines = new LineIndex(content);
  const sorted = byStart(ranges);
  // A group's byte bounds are found as soon as its lines are known: LineIndex walks from the
  // offset it last counted to, which is then the group's latest range.
  // A group's ranges are sorted[2·firstPair …], as many as its matchRanges.
  const groups: { last: number; from: number; to: number; startLine: number; firstPair: number; matchRanges: Range[] }[] = [];
  for (let i = 0; i < sorted.length; i += 2) {
    const start = sorted[i]!;
    const end = sorted[i + 1]!;
    const range: Range = { start: lines.position(start), end: lines.position(end) };
    const first = Math.max(1, range.start.lineNumber - contextLines);
    // A range ending with a '\n' ends on that newline's line. Past the last line, lineEnd is
    // the end of the content, so `last` needs no clamp.
    const last = range.end.lineNumber - (end > start && content[end - 1] === NEWLINE ? 1 : 0) + contextLines;
    const current = groups[groups.length - 1];
    if (current && first <= current.last + 1) {
      if (last > current.last) {
        current.last = last;
        current.to = lines.lineEnd(last);
      }
      current.matchRanges.push(range);
    } else {
      groups.push({ last, from: lines.lineStart(first), to: lines.lineEnd(last), startLine: first, firstPair: i / 2, matchRanges: [range] });
    }
  }
  const spans = new SymbolSpans(symbols);
  return groups.map((group) => {
    const chunk: Chunk = {
      content: content.toString('utf8', group.from, group.to),
      matchRanges: group.matchRanges,
      contentStart: { byteOffset: group.from, lineNumber: group.startLine, column: 1 },
    };
    if (symbols.length > 0) {
      const definitions = symbolsAt(content, spans.overlapping(sorted, group.firstPair, group.firstPair + group.matchRanges.length));
      if (definitions.length > 0) chunk.symbols = definitions;
    }
    return chunk;
  });
}

/** What a chunk says of the definitions its ranges overlap. */
function symbolsAt(content: Buffer, overlapping: readonly DocumentSymbol[]): SymbolInfo[] {
  return overlapping.map((symbol) => {
    const info: SymbolInfo = { symbol: content.toString('utf8', symbol.start, symbol.end), kind: symbol.kind };
    if (symbol.parent) info.parent = symbol.parent;
    return info;
  });
}
