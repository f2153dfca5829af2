import t from 'tap';
import RE2 from 're2';
import { requiredLiterals, staysWithinLines, type LiteralTree } from '../../src/query/literals.js';

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
  ['(a|b)(c|d)(e|f)(g|h)(i|j)', sensitive, `(and (or ${['a', 'b'].flatMap((x) => ['c', 'd'].flatMap((y) => ['e', 'f'].flatMap((z) => ['g', 'h'].map((w) => `"${x}${y}${z}${w}"`)))).join(' ')}) (or "i" "j"))`],
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
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
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
        t.fail(`${JSON.stringify(pattern)} (${caseSensitive ? 'case-sensitive' : 'case-insensitive'}) matches ${JSON.stringify(text)} but requires ${show(tree)}`);
        return;
      }
    }
  }
  t.ok(matched > 5000, `${matched} matching texts checked`);
  t.ok(constrained > 500, `${constrained} of 3000 patterns constrain the search`);
});

t.test('staysWithinLines: a regex none of whose matches can hold a newline', async (t) => {
  const within = ['[A-Z]+_RESUME', 'kmalloc\\(sizeof\\(\\*\\w+\\)', 'a.*b', '^\\S+$', '\\bint\\b \\d+', '[^\\n]+x', '[^\\sa]x', '[^\\Wa]', '(?i:ab)c', '(?<n>a)|b{2,}'];
  const across = ['a\\s+b', 'a\\nb', '[^"]*x', '\\Wx', '\\Dx', '\\p{L}x', '(?s:.)x', '[\\x00-\\x20]', '[\\s]', 'a(?=\\n)', '(?i)abc', '[[:space:]]', '\\Qa\\E'];
  for (const pattern of within) t.ok(staysWithinLines(pattern), `${pattern} stays within lines`);
  for (const pattern of across) t.notOk(staysWithinLines(pattern), `${pattern} may not`);
});

t.test('soundness: no text RE2 matches for a regex that stays within lines holds a newline', async (t) => {
  let seed = 77;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const atoms = ['a', 'b', '.', '\\s', '\\S', '\\w', '\\W', '\\d', '\\D', '[^a]', '[^\\n]', '[a\\n]', '[\\t-\\r]', '\\n', '$', '^', '\\b', ' '];
  const regex = (depth: number): string => {
    const roll = random();
    if (depth > 2 || roll < 0.4) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(atoms)).join('');
    if (roll < 0.6) return `(${regex(depth + 1)}|${regex(depth + 1)})`;
    if (roll < 0.8) return `(${regex(depth + 1)})${pick(['?', '*', '+', '{2}'])}`;
    return regex(depth + 1) + regex(depth + 1);
  };
  const alphabet = ['a', 'b', ' ', '\n', '\t', '1', 'é'];
  let within = 0;
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const pattern = regex(0);
    if (!staysWithinLines(pattern)) continue;
    within++;
    const re = new RE2(pattern, 'gmu');
    for (let j = 0; j < 10; j++) {
      const text = Array.from({ length: Math.floor(random() * 24) }, () => pick(alphabet)).join('');
      for (const match of text.matchAll(re)) {
        checked++;
        if (match[0].includes('\n')) {
          t.fail(`${JSON.stringify(pattern)} matched ${JSON.stringify(match[0])} in ${JSON.stringify(text)}`);
          return;
        }
      }
    }
  }
  t.ok(within > 300, `${within} of 3000 patterns stay within lines`);
  t.ok(checked > 3000, `${checked} matches checked`);
});
