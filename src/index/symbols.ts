/**
 * Turns ctags tags (name + 1-based line) into byte ranges inside a document:
 * the first occurrence of the name on its line. Tags whose name is not on
 * that line (macro-generated, qualified or anonymous names) are dropped, as
 * Zoekt does, because a range the user cannot see in the text is worse than none.
 * The ranges come packed for the shard writer (PackedSymbols).
 */
import { SYMBOL_RECORD_WORDS } from './format.js';
import type { PackedSymbols } from './model.js';
import { StringTable } from './string-table.js';

export interface CtagsTag {
  name: string;
  line: number;
  kind: string;
  scope?: string;
  scopeKind?: string;
}

/** No symbols (a fresh value: a symbols' array buffer may be transferred to another thread). */
export function noSymbols(): PackedSymbols {
  return { fields: new Uint32Array(0), strings: [] };
}

export function symbolsFromTags(content: Buffer, tags: readonly CtagsTag[]): PackedSymbols {
  if (tags.length === 0) return noSymbols();
  const lineStarts = [0];
  for (let at = content.indexOf(10); at !== -1; at = content.indexOf(10, at + 1)) lineStarts.push(at + 1);
  const strings = new StringTable();
  const found: number[] = [];
  for (const tag of tags) {
    if (!tag.name || !Number.isInteger(tag.line) || tag.line < 1 || tag.line > lineStarts.length) continue;
    const lineStart = lineStarts[tag.line - 1]!;
    const lineEnd = tag.line < lineStarts.length ? lineStarts[tag.line]! - 1 : content.length;
    const name = Buffer.from(tag.name, 'utf8');
    const at = content.subarray(lineStart, lineEnd).indexOf(name);
    if (at === -1) continue;
    const parent = tag.scope !== undefined && tag.scope !== '';
    found.push(
      lineStart + at,
      lineStart + at + name.length,
      strings.intern(tag.kind),
      parent ? 1 + strings.intern(tag.scope!) : 0,
      parent ? 1 + strings.intern(tag.scopeKind ?? '') : 0,
    );
  }
  return { fields: byStartAndEnd(found), strings: strings.values };
}

/** Records (SYMBOL_RECORD_WORDS numbers each) ordered by start, then end; ties keep their order. */
function byStartAndEnd(records: number[]): Uint32Array {
  const before = (a: number, b: number) => records[a]! - records[b]! || records[a + 1]! - records[b + 1]!;
  let ordered = true;
  for (let at = SYMBOL_RECORD_WORDS; ordered && at < records.length; at += SYMBOL_RECORD_WORDS) ordered = before(at - SYMBOL_RECORD_WORDS, at) <= 0;
  if (ordered) return Uint32Array.from(records);
  const order = Array.from({ length: records.length / SYMBOL_RECORD_WORDS }, (_, i) => i * SYMBOL_RECORD_WORDS).sort(before);
  const fields = new Uint32Array(records.length);
  let to = 0;
  for (const from of order) for (let word = 0; word < SYMBOL_RECORD_WORDS; word++) fields[to++] = records[from + word]!;
  return fields;
}
