/**
 * Lookups in a file's definitions (ordered by start offset, as the shard
 * stores them) that cost a binary search, not a pass over every definition:
 * a file with thousands of matches and of definitions would otherwise cost
 * their product (docs/design.md, "Per-file work is linear").
 */
import type { DocumentSymbol } from '../index/model.js';
import { forEachOverlapping, type SpansByStart } from '../index/ranges.js';

export class SymbolSpans {
  /** The longest name's length in bytes: a name overlapping offset x starts after x − longest. */
  private readonly longest: number;

  constructor(readonly symbols: readonly DocumentSymbol[]) {
    let longest = 0;
    for (const symbol of symbols) longest = Math.max(longest, symbol.end - symbol.start);
    this.longest = longest;
  }

  /** The first definition, in start order, whose name contains [start, end). */
  containing(start: number, end: number): DocumentSymbol | undefined {
    for (let i = this.firstStartingFrom(end - this.longest); i < this.symbols.length; i++) {
      const symbol = this.symbols[i]!;
      if (symbol.start > start) return undefined;
      if (symbol.end >= end) return symbol;
    }
    return undefined;
  }

  /** The definitions whose names overlap one of the ranges sorted[2·from … 2·to) (flattened, by start), in start order. */
  overlapping(sorted: readonly number[], from: number, to: number): DocumentSymbol[] {
    const found: DocumentSymbol[] = [];
    const { symbols } = this;
    const spans: SpansByStart = { first: 0, end: symbols.length, longest: this.longest, startOf: (i) => symbols[i]!.start, endOf: (i) => symbols[i]!.end };
    forEachOverlapping(spans, sorted, from, to, (i) => found.push(symbols[i]!));
    return found;
  }

  /** Index of the first definition starting at or after `offset`. */
  private firstStartingFrom(offset: number): number {
    let low = 0;
    let high = this.symbols.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.symbols[mid]!.start < offset) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
