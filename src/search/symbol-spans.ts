/**
 * Lookups in a file's definitions (ordered by start offset, as the shard
 * stores them) that cost a binary search, not a pass over every definition:
 * a file with thousands of matches and of definitions would otherwise cost
 * their product (docs/design.md, "Per-file work is linear").
 */
import type { DocumentSymbol } from '../index/model.js';

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

  /**
   * The definitions whose names overlap any of `count` ranges, given as
   * ascending starts `starts(i)` and `furthestEnd(i)`, the largest end among
   * ranges 0…i.
   */
  overlapping(count: number, starts: (i: number) => number, furthestEnd: (i: number) => number): DocumentSymbol[] {
    const found: DocumentSymbol[] = [];
    if (count === 0) return found;
    const lowest = starts(0);
    const highest = furthestEnd(count - 1);
    for (let i = this.firstStartingFrom(lowest - this.longest + 1); i < this.symbols.length; i++) {
      const symbol = this.symbols[i]!;
      if (symbol.start >= highest) break;
      if (symbol.end <= lowest) continue;
      // The ranges starting before the name ends: one of them must end after it starts.
      let low = 0;
      let high = count;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (starts(mid) < symbol.end) low = mid + 1;
        else high = mid;
      }
      if (low > 0 && furthestEnd(low - 1) > symbol.start) found.push(symbol);
    }
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
