import t from 'tap';
import { symbolsFromTags, type CtagsTag } from '../../src/index/symbols.js';
import { symbolRows } from '../helpers/symbols.js';

/** The rows of `text` tagged with `tags`. */
function tagged(text: string, tags: CtagsTag[]): string[][] {
  const content = Buffer.from(text);
  return symbolRows(content, symbolsFromTags(content, tags));
}

t.test('tags become byte ranges of their names on their lines, by start, with their parents', async (t) => {
  const content = Buffer.from('struct größe {\n  int wert;\n};\nint größe_of(void);\n');
  const symbols = symbolsFromTags(content, [
    { name: 'größe_of', line: 4, kind: 'prototype' },
    { name: 'wert', line: 2, kind: 'member', scope: 'größe', scopeKind: 'struct' },
    { name: 'größe', line: 1, kind: 'struct' },
  ]);
  t.same(symbolRows(content, symbols), [
    ['größe', 'struct'],
    ['wert', 'member', 'größe', 'struct'],
    ['größe_of', 'prototype'],
  ]);
  t.equal(symbols.fields[0], 7, 'byte offsets, not characters');
  t.same(symbols.strings, ['prototype', 'member', 'größe', 'struct'], 'each string once');
});

t.test('a tag whose name is not on its line, or whose line does not exist, is dropped', async (t) => {
  const text = '#define A(x) x##_gen\nA(foo)\n';
  const tags = [
    { name: 'foo_gen', line: 2, kind: 'function' },
    { name: '__anon1', line: 1, kind: 'struct' },
    { name: 'A', line: 9, kind: 'macro' },
    { name: 'A', line: 0, kind: 'macro' },
    { name: 'A', line: 1, kind: 'macro' },
  ];
  t.same(tagged(text, tags), [['A', 'macro']]);
  t.same(tagged(text, []), []);
});

t.test('symbols at the same start are ordered by end, ties in the order ctags gave', async (t) => {
  const tags = [
    { name: 'ab', line: 1, kind: 'second' },
    { name: 'a', line: 1, kind: 'first' },
    { name: 'ab', line: 1, kind: 'third' },
  ];
  t.same(tagged('ab\n', tags), [
    ['a', 'first'],
    ['ab', 'second'],
    ['ab', 'third'],
  ]);
});
