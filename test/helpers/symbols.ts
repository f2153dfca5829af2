/** Symbols written as objects, packed as the shard writer takes them (in the order given). */
import type { DocumentSymbol, PackedSymbols } from '../../src/index/model.js';
import { StringTable } from '../../src/index/string-table.js';

export function packSymbols(symbols: readonly DocumentSymbol[]): PackedSymbols {
  const strings = new StringTable();
  const fields = symbols.flatMap((symbol) => [
    symbol.start,
    symbol.end,
    strings.intern(symbol.kind),
    symbol.parent ? 1 + strings.intern(symbol.parent.symbol) : 0,
    symbol.parent ? 1 + strings.intern(symbol.parent.kind) : 0,
  ]);
  return { fields: Uint32Array.from(fields), strings: strings.values };
}
