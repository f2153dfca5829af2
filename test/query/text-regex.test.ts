import t from 'tap';
import { textsMatching } from '../../src/query/text-regex.js';

t.test('each text is tested with the flags given', async (t) => {
  t.same(textsMatching('^fix', 'iu', ['Fix the lexer', 'prefix', 'FIX']), { matched: Uint8Array.from([1, 0, 1]) });
  t.same(textsMatching('^fix', 'u', ['Fix the lexer', 'fix']), { matched: Uint8Array.from([0, 1]) });
  t.same(textsMatching('é', 'iu', ['CAFÉ']), { matched: Uint8Array.from([1]) }, 'Unicode case folding');
  t.same(textsMatching('x', 'iu', []), { matched: new Uint8Array(0) });
});

t.test('a pattern RE2 refuses is answered with its reason, every time', async (t) => {
  for (let i = 0; i < 2; i++) {
    const result = textsMatching('a(b', 'iu', ['a(b']);
    t.ok('invalid' in result && /missing \)/.test(result.invalid), JSON.stringify(result));
  }
  t.match(textsMatching('(?<=a)b', 'iu', []), { invalid: /invalid perl operator|lookbehind|(?:\(\?<)/ }, 'no lookbehind in RE2');
});

t.test('patterns beyond the kept few are compiled again, with the same answers', async (t) => {
  const patterns = Array.from({ length: 40 }, (_, i) => `^line ${i}$`);
  for (let round = 0; round < 2; round++) {
    for (const [i, pattern] of patterns.entries()) {
      t.same(textsMatching(pattern, 'u', [`line ${i}`, `line ${i + 1}`]), { matched: Uint8Array.from([1, 0]) });
    }
  }
});
