import t from 'tap';
import path from 'node:path';
import { ShardWriter } from '../../src/index/shard-writer.js';
import { Shard } from '../../src/index/shard-reader.js';
import type { DocumentSymbol } from '../../src/index/model.js';
import { packSymbols } from '../helpers/symbols.js';
import { tempDir } from '../helpers/tmp.js';

// A read that decodes only part of a document's records must agree with the full decode.
t.test('symbolsOverlapping agrees with the full decode', async (t) => {
  let seed = 5;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${'x'.repeat(Math.floor(random() * 40))}`);
  const content = Buffer.from(lines.join('\n') + '\n');
  const symbols: DocumentSymbol[] = [];
  for (let at = 0; at < content.length - 10; at += 1 + Math.floor(random() * 200))
    symbols.push({ start: at, end: at + 1 + Math.floor(random() * 8), kind: 'function' });
  // One long name: a symbol overlapping a range can start far before it.
  symbols.push({ start: 1000, end: 1900, kind: 'macro' });
  symbols.sort((a, b) => a.start - b.start);
  const writer = new ShardWriter({
    repository: { id: 1, name: 'r', codeHostType: 'genericGitHost', public: true, archived: false, fork: false },
    branches: [{ name: 'HEAD', commit: 'c'.repeat(40) }],
    shardIndex: 0,
  });
  writer.add({ path: 'a.txt', content, originalSize: content.length, language: '', branchMask: 1n, flags: 0, symbols: packSymbols(symbols) });
  const file = path.join(tempDir(t), 's.trawl');
  writer.write(file);
  const shard = Shard.open(file);
  const allSymbols = shard.symbols(0);
  let checked = 0;
  for (let trial = 0; trial < 200; trial++) {
    const ranges: number[] = [];
    for (let i = 0; i < 1 + Math.floor(random() * 6); i++) {
      const start = Math.floor(random() * content.length);
      ranges.push(start, start + 1 + Math.floor(random() * 30));
    }
    const overlapping = allSymbols.filter((symbol) => ranges.some((_, i) => i % 2 === 0 && ranges[i]! < symbol.end && symbol.start < ranges[i + 1]!));
    t.same(shard.symbolsOverlapping(0, ranges), overlapping, 'overlapping symbols');
    checked++;
  }
  t.equal(checked, 200);
  t.same(shard.symbolsOverlapping(0, []), [], 'no ranges, no symbols');
});
