import t from 'tap';
import RE2 from 're2';
import { regexSize, requiredLiterals, separatorOf, type LiteralTree } from '../../src/query/literals.js';

function show(tree: LiteralTree): string {
  switch (tree.type) {
    case 'any':
      return 'ANY';
    case 'literal':
      return JSON.stringify(tree.text);
    case 'and':
    case 'or':
      return `(${tree.type} ${tree.operands.map(show).join(' ')})`;
  }
}

const sensitive = { regex: true, caseSensitive: true };
const insensitive = { regex: true, caseSensitive: false };

const cases: [pattern: string, options: { regex: boolean; caseSensitive: boolean }, expected: string][] = [
  ['PM_RESUME', { regex: false, caseSensitive: true }, '"PM_RESUME"'],
  ['a.b*c', { regex: false, caseSensitive: false }, '"a.b*c"'],
  ['', { regex: false, caseSensitive: false }, 'ANY'],
  ['Grüße Welt', { regex: false, caseSensitive: false }, '(and "Gr" "e Welt")'],
  ['Grüße', { regex: false, caseSensitive: true }, '"Grüße"'],
  ['PM_RESUME', sensitive, '"PM_RESUME"'],
  ['[A-Z]+_RESUME', sensitive, '"_RESUME"'],
  ['\\w{5}\\s+\\w{5}', sensitive, 'ANY'],
  ['foo|bar', sensitive, '(or "foo" "bar")'],
  ['(abc|abd)ef', sensitive, '(or "abcef" "abdef")'],
  ['hello.*world', sensitive, '(and "hello" "world")'],
  ['colou?r', sensitive, '(or "color" "colour")'],
  ['ab[cd]ef', sensitive, '(or "abcef" "abdef")'],
  ['x[a-z]y', sensitive, '(and "x" "y")'],
  ['^func\\s+main\\b', sensitive, '(and "func" "main")'],
  ['(foo)+bar', sensitive, '(and "foo" "bar")'],
  ['(foo)*bar', sensitive, '"bar"'],
  ['a(b|c.*)d', sensitive, '(and "a" (or "b" "c") "d")'],
  ['(?i)abc', sensitive, 'ANY'],
  ['(?i:straße)x', sensitive, '(and "stra" "ex")'],
  ['(?i:foo)bar', sensitive, '"foobar"'],
  ['(?P<name>abc)d', sensitive, '"abcd"'],
  ['\\Qa.b\\E', sensitive, 'ANY'],
  ['[[:alpha:]]abc', sensitive, 'ANY'],
  ['Ünïcode', insensitive, '(and "n" "code")'],
  [
    '(a|b)(c|d)(e|f)(g|h)(i|j)',
    sensitive,
    `(and (or ${['a', 'b'].flatMap((x) => ['c', 'd'].flatMap((y) => ['e', 'f'].flatMap((z) => ['g', 'h'].map((w) => `"${x}${y}${z}${w}"`)))).join(' ')}) (or "i" "j"))`,
  ],
];

for (const [pattern, options, expected] of cases) {
  t.equal(show(requiredLiterals(pattern, options)), expected, `${options.regex ? 'regex' : 'literal'} ${pattern}`);
}

/** Does `text` satisfy the tree? Case-insensitive literals match in any ASCII casing, as the index looks them up. */
function satisfied(tree: LiteralTree, text: string): boolean {
  const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  switch (tree.type) {
    case 'any':
      return true;
    case 'literal':
      return tree.caseSensitive ? text.includes(tree.text) : fold(text).includes(fold(tree.text));
    case 'and':
      return tree.operands.every((operand) => satisfied(operand, text));
    case 'or':
      return tree.operands.some((operand) => satisfied(operand, text));
  }
}

t.test('soundness: every text RE2 matches satisfies the required literals', async (t) => {
  let seed = 2024;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const atoms = ['a', 'b', 'c', 'A', 'é', 'É', '.', '\\d', '[ab]', '[a-c]', '[^a]', '\\b', '^', '$', ' '];
  const regex = (depth: number): string => {
    const roll = random();
    if (depth > 2 || roll < 0.4) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(atoms)).join('');
    if (roll < 0.6) return `(${regex(depth + 1)}|${regex(depth + 1)})`;
    if (roll < 0.8) return `(${regex(depth + 1)})${pick(['?', '*', '+', '{2}', '{1,3}'])}`;
    return regex(depth + 1) + regex(depth + 1);
  };
  const alphabet = ['a', 'b', 'c', 'A', 'B', 'é', 'É', '1', ' ', '\n'];
  let matched = 0;
  let constrained = 0;
  for (let i = 0; i < 3000; i++) {
    const pattern = regex(0);
    const caseSensitive = random() < 0.5;
    const tree = requiredLiterals(pattern, { regex: true, caseSensitive });
    if (tree.type !== 'any') constrained++;
    const re = new RE2(pattern, caseSensitive ? 'u' : 'iu');
    for (let j = 0; j < 20; j++) {
      const text = Array.from({ length: Math.floor(random() * 16) }, () => pick(alphabet)).join('');
      if (!re.test(text)) continue;
      matched++;
      if (!satisfied(tree, text)) {
        t.fail(
          `${JSON.stringify(pattern)} (${caseSensitive ? 'case-sensitive' : 'case-insensitive'}) matches ${JSON.stringify(text)} but requires ${show(tree)}`,
        );
        return;
      }
    }
  }
  t.ok(matched > 5000, `${matched} matching texts checked`);
  t.ok(constrained > 500, `${constrained} of 3000 patterns constrain the search`);
});

t.test('separatorOf: a byte no match of the regex can hold, a newline first', async (t) => {
  const cases: [pattern: string, separator: string | undefined][] = [
    ['[A-Z]+_RESUME', '\n'],
    ['kmalloc\\(sizeof\\(\\*\\w+\\)', '\n'],
    ['a.*b', '\n'],
    ['^\\S+$', '\n'],
    ['[^\\n]+x', '\n'],
    ['[^\\sa]x', '\n'],
    ['[^\\Wa]', '\n'],
    ['(?i:ab)c', '\n'],
    ['(?<n>a)|b{2,}', '\n'],
    ['\\w+\\s*=\\s*kzalloc\\(', ';'],
    ['a\\nb', ';'],
    ['(?s:.)x', undefined],
    ['[^"]*x', '"'],
    ['\\s[;]', '}'],
    ['[\\s;}{),"]', undefined],
    ['\\Wx', undefined],
    ['\\Dx', undefined],
    ['\\p{L}x', undefined],
    ['.\\s', undefined],
    ['[\\x00-\\x7f]', undefined],
    ['a(?=\\n)', undefined],
    ['(?i)abc', undefined],
    ['[[:space:]]', undefined],
    ['\\Qa\\E', undefined],
  ];
  for (const [pattern, separator] of cases) t.equal(separatorOf(pattern), separator?.charCodeAt(0), `${pattern}: ${JSON.stringify(separator)}`);
});

t.test('soundness: no text RE2 matches holds the separator found for its regex', async (t) => {
  let seed = 77;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const atoms = [
    'a',
    'b',
    '.',
    '\\s',
    '\\S',
    '\\w',
    '\\W',
    '\\d',
    '\\D',
    '[^a]',
    '[^\\n]',
    '[a\\n]',
    '[\\t-\\r]',
    '\\n',
    ';',
    '[^;\\n]',
    '[;-=]',
    '\\}',
    '$',
    '^',
    '\\b',
    ' ',
  ];
  const regex = (depth: number): string => {
    const roll = random();
    if (depth > 2 || roll < 0.4) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(atoms)).join('');
    if (roll < 0.6) return `(${regex(depth + 1)}|${regex(depth + 1)})`;
    if (roll < 0.8) return `(${regex(depth + 1)})${pick(['?', '*', '+', '{2}'])}`;
    return regex(depth + 1) + regex(depth + 1);
  };
  const alphabet = ['a', 'b', ' ', '\n', '\t', '\v', '1', 'é', ';', '}', '{', ')', ',', '"', '_'];
  const bySeparator = new Map<string, number>();
  let checked = 0;
  for (let i = 0; i < 4000; i++) {
    const pattern = regex(0);
    const separator = separatorOf(pattern);
    if (separator === undefined) continue;
    const byte = String.fromCharCode(separator);
    bySeparator.set(byte, (bySeparator.get(byte) ?? 0) + 1);
    const re = new RE2(pattern, 'gmu');
    for (let j = 0; j < 10; j++) {
      const text = Array.from({ length: Math.floor(random() * 24) }, () => pick(alphabet)).join('');
      for (const match of text.matchAll(re)) {
        checked++;
        if (match[0].includes(byte)) {
          t.fail(`${JSON.stringify(pattern)} matched ${JSON.stringify(match[0])} in ${JSON.stringify(text)}, holding ${JSON.stringify(byte)}`);
          return;
        }
      }
    }
  }
  t.ok((bySeparator.get('\n') ?? 0) > 300, `${bySeparator.get('\n')} patterns split at newlines`);
  t.ok((bySeparator.get(';') ?? 0) + (bySeparator.get('}') ?? 0) > 300, `${bySeparator.get(';')} at semicolons, ${bySeparator.get('}')} at closing braces`);
  t.ok(checked > 3000, `${checked} matches checked`);
});

t.test('regexSize: characters, with quantifiers multiplying; Infinity for what costs RE2 more than it tells', async (t) => {
  t.equal(regexSize('Kconfig\\.debug$'), 14, 'a character, an escape and an anchor each count one');
  t.equal(regexSize('a{3}(bc){2,4}d*'), 3 + 8 + 1, 'an unbounded quantifier counts its minimum and one more');
  t.equal(regexSize('(x{3}){4}'), 12, 'nested quantifiers multiply');
  t.equal(regexSize('[a-z_0-9]\\w.\\s[^\\n]'), 5, 'ASCII classes, negated or not, and `.` count one');
  t.equal(regexSize('é+'), 2, 'a character past ASCII is one');
  for (const costly of ['[a-zé]', '\\p{L}', '[\\p{L}\\p{N}]{200}', '(?i)abc', '[[:alpha:]]', 'a{2']) {
    t.equal(regexSize(costly), Infinity, `${costly}: Infinity`);
  }
});
