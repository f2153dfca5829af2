// node-re2 is the oracle: its internalSource, and its refusals, for the patterns users write.
import t from 'tap';
import RE2 from 're2';
import { native } from '../../native/index.js';
import { re2Syntax } from '../../src/query/re2-syntax.js';

/** What node-re2 makes of `pattern`: its RE2 source, or its refusal. */
function nodeRe2(pattern: string, multiline: boolean): { source: string } | { refused: string } {
  try {
    return { source: new RE2(pattern, multiline ? 'mu' : 'u').internalSource };
  } catch (error) {
    return { refused: (error as Error).message };
  }
}

/** What the addon makes of the translation: the same source, or the same refusal. */
function addon(pattern: string, multiline: boolean): { source: string } | { refused: string } {
  const source = re2Syntax(pattern, multiline);
  try {
    native.freeRegex(native.compileRegex(source, true));
    return { source };
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return { refused: error.message };
  }
}

const CASES = [
  '',
  'plain',
  'a/b',
  '\\/',
  '\\\\',
  '\\\\c',
  'x\\',
  '\\',
  '\\cA',
  '\\cZ',
  '\\c@',
  '\\ca',
  '\\c',
  '\\u00e9',
  '\\u12345',
  '\\uG',
  '\\u',
  '\\u{1F600}',
  '\\u{',
  '\\p{Letter}',
  '\\P{Uppercase_Letter}',
  '[\\p{L}\\p{N}]',
  '\\p{Lu}',
  '\\p{Script=Greek}',
  '\\p{sc=Latin}',
  '\\p{Script=}',
  '\\p{sc=}',
  '\\p{Greek}',
  '\\p{Nope}',
  '\\p{L',
  '\\pL',
  '\\p',
  '(?<name>x)\\k<name>',
  '(?<a>x)(?<a>y)',
  '(?P<a>x)',
  '(?<=a)b',
  '(?<!a)b',
  '(?<',
  '(?',
  'a(b',
  '(?i)abc',
  '\\d+\\s\\w\\b',
  '^$',
  'é\\é',
  '😀+',
  '\\😀',
  '[^]',
  'a{2,1}',
  'x{1001}',
  '\\Q.*\\E',
  '(?s).',
  '\\x41\\x{42}',
  '\\0',
  '\\1',
  '\\n\\t',
  '\\/\\(',
];

t.test("the translation is node-re2's, and the addon refuses what node-re2 refuses with its message", async (t) => {
  for (const pattern of CASES) {
    for (const multiline of [false, true])
      t.same(addon(pattern, multiline), nodeRe2(pattern, multiline), `${JSON.stringify(pattern)}${multiline ? ' (m)' : ''}`);
  }
});

t.test('random patterns of the characters the translation looks at agree with node-re2', async (t) => {
  const pieces = [
    '\\',
    'c',
    'A',
    'Z',
    'z',
    'u',
    '{',
    '}',
    '0',
    'f',
    'G',
    'p',
    'P',
    'L',
    'Letter',
    'Script=',
    'sc=',
    'Greek',
    '(',
    ')',
    '?',
    '<',
    '>',
    '=',
    '!',
    '/',
    '[',
    ']',
    '^',
    '$',
    '.',
    '*',
    '|',
    'é',
    '😀',
    '\n',
    'd',
    'w',
    'k',
  ];
  let seed = 34;
  const random = (below: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % below);
  let disagreements = 0;
  for (let i = 0; i < 4000; i++) {
    const pattern = Array.from({ length: random(10) }, () => pieces[random(pieces.length)]).join('');
    const multiline = random(2) === 1;
    if (JSON.stringify(addon(pattern, multiline)) !== JSON.stringify(nodeRe2(pattern, multiline)) && disagreements++ < 5) {
      t.same(addon(pattern, multiline), nodeRe2(pattern, multiline), JSON.stringify(pattern));
    }
  }
  t.equal(disagreements, 0, 'every one agrees');
});
