/**
 * The score of a matching file, higher first: a match on a symbol
 * definition beats a whole-word match, which beats a match inside a word; a
 * match in the file name counts more than any content match; ties go to the
 * document's static rank (its position in the shard). See docs/query-syntax.md.
 */
import type { DocumentSymbol } from '../../index/model.js';
import { SymbolSpans } from '../symbol-spans.js';

export const Score = {
  fileNameMatch: 5000,
  baseNameMatch: 2000,
  symbolDefinition: 1000,
  wholeSymbolName: 500,
  wholeWord: 200,
  wordBoundary: 50,
  match: 10,
  /** Per additional match, up to `maxCountedMatches`. */
  extraMatch: 1,
  maxCountedMatches: 100,
  staticRank: 5,
} as const;

export interface ScoreInput {
  content: Buffer;
  /** Flattened content ranges. */
  ranges: number[];
  path: Buffer;
  /** Flattened path ranges. */
  pathRanges: number[];
  symbols: DocumentSymbol[];
  /** Position of the document in its shard, and the shard's size. */
  doc: number;
  documentCount: number;
}

export function scoreFile(input: ScoreInput): number {
  let best = 0;
  const spans = new SymbolSpans(input.symbols);
  for (let i = 0; i < input.ranges.length; i += 2) best = Math.max(best, scoreRange(input.content, spans, input.ranges[i]!, input.ranges[i + 1]!));
  if (input.pathRanges.length > 0) {
    const baseNameStart = input.path.lastIndexOf(0x2f) + 1;
    let inBaseName = false;
    for (let i = 0; i < input.pathRanges.length; i += 2) if (input.pathRanges[i]! >= baseNameStart) inBaseName = true;
    best += Score.fileNameMatch + (inBaseName ? Score.baseNameMatch : 0);
  }
  const matches = (input.ranges.length + input.pathRanges.length) / 2;
  const extra = Math.min(matches, Score.maxCountedMatches) * Score.extraMatch;
  const staticRank = Score.staticRank * (1 - input.doc / Math.max(1, input.documentCount));
  return best + extra + staticRank;
}

function scoreRange(content: Buffer, spans: SymbolSpans, start: number, end: number): number {
  let score = Score.match;
  const before = isWordByte(content[start - 1]);
  const after = isWordByte(content[end]);
  if (!before && !after) score += Score.wholeWord;
  else if (!before || !after) score += Score.wordBoundary;
  const symbol = spans.containing(start, end);
  if (symbol) score += Score.symbolDefinition + (symbol.start === start && symbol.end === end ? Score.wholeSymbolName : 0);
  return score;
}

function isWordByte(byte: number | undefined): boolean {
  return (
    byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x5f || byte >= 0x80)
  );
}

/**
 * The ranking's one order, wherever files are ranked: higher score first, then by repository name, then path.
 * `repository` and `path` are asked only on a tie of scores (decoding a path costs more than the comparison).
 */
export function compareRanks<T extends { score: number }>(a: T, b: T, repository: (file: T) => string, path: (file: T) => string): number {
  return b.score - a.score || repository(a).localeCompare(repository(b)) || path(a).localeCompare(path(b));
}
