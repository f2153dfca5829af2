import t from 'tap';
import { textsMatching } from '../../src/query/text-regex.js';

t.test('each text is tested ignoring case, ^ and $ at its ends, an empty match counting', async (t) => {
  t.same(textsMatching('^fix', ['Fix the lexer', 'prefix', 'FIX']), { matched: Uint8Array.from([1, 0, 1]) });
  t.same(textsMatching('é', ['CAFÉ']), { matched: Uint8Array.from([1]) }, 'Unicode case folding');
  t.same(textsMatching('lexer$', ['fix the lexer\nand more', 'fix the lexer']), { matched: Uint8Array.from([0, 1]) });
  t.same(textsMatching('x*', ['abc', '']), { matched: Uint8Array.from([1, 1]) }, 'as RegExp.test: an empty match is a match');
  t.same(textsMatching('x', []), { matched: new Uint8Array(0) });
});

t.test('a pattern RE2 refuses is answered with its reason, every time', async (t) => {
  for (let i = 0; i < 2; i++) t.same(textsMatching('a(b', ['a(b']), { invalid: 'missing ): a(b' });
  t.match(textsMatching('(?<=a)b', []), { invalid: /invalid perl operator/ }, 'no lookbehind in RE2');
});

t.test('patterns beyond the kept few are compiled again, with the same answers', async (t) => {
  const patterns = Array.from({ length: 40 }, (_, i) => `^line ${i}$`);
  for (let round = 0; round < 2; round++) {
    for (const [i, pattern] of patterns.entries()) {
      t.same(textsMatching(pattern, [`LINE ${i}`, `line ${i + 1}`]), { matched: Uint8Array.from([1, 0]) });
    }
  }
});
