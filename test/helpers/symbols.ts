/** Symbols written as objects, packed as the shard writer takes them (in the order given), and read back as rows. */
import { SYMBOL_RECORD_WORDS } from '../../src/index/format.js';
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

/** The packed symbols as readable rows: [name as it stands in the content, kind, parent name, parent kind]. */
export function symbolRows(content: Buffer, { fields, strings }: PackedSymbols): string[][] {
  const out: string[][] = [];
  for (let at = 0; at < fields.length; at += SYMBOL_RECORD_WORDS) {
    const [start, end, kind, parentName, parentKind] = fields.subarray(at, at + SYMBOL_RECORD_WORDS);
    const row = [content.subarray(start, end).toString(), strings[kind!]!];
    if (parentName) row.push(strings[parentName - 1]!, strings[parentKind! - 1]!);
    out.push(row);
  }
  return out;
}
