import t from 'tap';
import { resultTypeOf } from '../../src/query/plan.js';
import { parseQuery, type ParseOptions } from '../../src/query/parser.js';
import { QUERY_REGEX_INSTRUCTIONS } from '../../src/query/regex-checks.js';
import { QueryParseError } from '../../src/query/errors.js';
import type { QueryNode } from '../../src/query/ast.js';

const literal: ParseOptions = { regex: false, caseSensitive: false };
const regex: ParseOptions = { regex: true, caseSensitive: false };

/** Compact, readable rendering of a tree, for table-driven expectations. */
function show(node: QueryNode): string {
  switch (node.type) {
    case 'pattern': {
      const kind = { contentOrPath: '', content: 'content:', path: 'file:', symbol: 'sym:', repository: 'repo:', branch: 'rev:' }[node.target];
      return `${kind}${node.regex ? '/' : '"'}${node.value}${node.regex ? '/' : '"'}${node.caseSensitive ? 'c' : ''}`;
    }
    case 'and':
      return node.operands.length === 0 ? 'TRUE' : `(and ${node.operands.map(show).join(' ')})`;
    case 'or':
      return node.operands.length === 0 ? 'FALSE' : `(or ${node.operands.map(show).join(' ')})`;
    case 'not':
      return `(not ${show(node.operand)})`;
    case 'allBranches':
      return 'rev:*';
    case 'language':
      return `lang:${node.language}`;
    case 'context':
      return `context:${node.name}`;
    case 'repoSet':
      return `reposet:${node.names.join('|')}`;
    case 'archived':
    case 'fork':
    case 'visibility':
      return `${node.type}:${node.value}`;
    case 'resultType':
      return `type:${node.value}`;
  }
}

// Every example of docs/query-syntax.md, and the rules around them.
const parses: [query: string, options: ParseOptions, expected: string][] = [
  ['foo bar', literal, '(and "foo" "bar")'],
  ['"foo bar"', literal, '"foo bar"'],
  ['foo or bar', literal, '(or "foo" "bar")'],
  ['lang:go -file:_test\\.go$ http.Handler', literal, '(and lang:Go (not file:/_test\\.go$/) "http.Handler")'],
  ['repo:^github\\.com/acme/ sym:Parse', literal, '(and repo:/^github\\.com/acme// sym:/Parse/)'],
  ['rev:* TODO', literal, '(and rev:* "TODO")'],
  ['(a or b) -(c d)', literal, '(and (or "a" "b") (not (and "c" "d")))'],
  ['content:"func main"', literal, 'content:"func main"'],
  ['file:README', literal, 'file:/README/'],
  ['test(', literal, '"test("'],
  ['--verbose', literal, '"--verbose"'],
  ['-1', literal, '"-1"'],
  ['-foo', literal, '"-foo"'],
  ['foo(bar)', literal, '"foo(bar)"'],
  ['a b or c', literal, '(or (and "a" "b") "c")'],
  ['OR and AND not', literal, '(and "OR" "and" "AND" "not")'],
  ['"or"', literal, '"or"'],
  ['', literal, 'FALSE'],
  ['   \t ', literal, 'FALSE'],
  ['ab', literal, '"ab"'],
  ['abcfile:x', literal, '"abcfile:x"'],
  ['http://example.com', literal, '"http://example.com"'],
  ['(foo', literal, '"(foo"'],
  ['foo)', literal, '"foo)"'],
  ['(a (b or c))', literal, '(and "a" (or "b" "c"))'],
  ['(a)b', literal, '"(a)b"'],
  ['()', literal, '"()"'],
  ['(foo(bar))', literal, '"foo(bar)"'],
  ['(x foo(bar))', literal, '(and "x" "foo(bar)")'],
  ['(x bar))', literal, '(and "x" "bar)")'],
  ['(a)(b)(c)', literal, '(and "a" "b" "c")'],
  ['(abc)(de)', literal, '(and "abc" "de")'],
  ['((a)(b)) c', literal, '(and "a" "b" "c")'],
  ['(a or b)(c)', literal, '(and (or "a" "b") "c")'],
  ['(repo:x)(lang:go)', regex, '(and repo:/x/ lang:Go)'],
  ['(a)(b)', regex, '/(a)(b)/'],
  ['(type:file x y', literal, '(and "(type:file" "x" "y")'],
  ['x -(a or b)', literal, '(and "x" (not (or "a" "b")))'],
  ['"a \\"quoted\\" \\\\ word"', literal, '"a "quoted" \\ word"'],
  ['content:"x"', literal, 'content:"x"'],
  ['c:x f:y r:z b:main t:file', literal, '(and content:"x" file:/y/ repo:/z/ rev:/main/ type:file)'],
  ['branch:release/.*', literal, 'rev:/release/.*/'],
  ['lang:ts lang:TypeScript lang:c++', literal, '(and lang:TypeScript lang:TypeScript lang:C++)'],
  ['reposet:github.com/a/b,github.com/c/d', literal, 'reposet:github.com/a/b|github.com/c/d'],
  ['archived:no fork:only visibility:public', literal, '(and archived:no fork:only visibility:public)'],
  ['context:backend foo', literal, '(and context:backend "foo")'],
  ['type:repo', literal, 'type:repo'],
  ['sym:"Parse Tree"', literal, 'sym:/Parse Tree/'],
  // regex mode
  ['(foo|bar)', regex, '/(foo|bar)/'],
  ['(foo|bar) baz', regex, '(and /(foo|bar)/ /baz/)'],
  ['(a or b)', regex, '(or /a/ /b/)'],
  ['(a|b)c', regex, '/(a|b)c/'],
  ['\\w+_RESUME', regex, '/\\w+_RESUME/'],
  ['content:fo+', regex, 'content:/fo+/'],
  ['"foo bar"', regex, '/foo bar/'],
  ['[(]x', regex, '/[(]x/'],
  // regex mode: a group that begins with a query expression is a group (Sourcebot's clients append filters so)
  ['"parse(Int|Float)\\(" (repo:github\\.com/acme/api)', regex, '(and /parse(Int|Float)\\(/ repo:/github\\.com/acme/api/)'],
  ['foo (lang:Go)', regex, '(and /foo/ lang:Go)'],
  ['foo (file:src/)', regex, '(and /foo/ file:/src//)'],
  ['foo -(file:_test)', regex, '(and /foo/ (not file:/_test/))'],
  ['(sym:X)', regex, 'sym:/X/'],
  ['foo (repo:a or repo:b)', regex, '(and /foo/ (or repo:/a/ repo:/b/))'],
  ['foo ( rev:main )', regex, '(and /foo/ rev:/main/)'],
  ['("a b" c)', regex, '(and /a b/ /c/)'],
  ['(-file:x y)', regex, '(and (not file:/x/) /y/)'],
  ['((repo:a) b)', regex, '(and repo:/a/ /b/)'],
  ['(abc:x|y)', regex, '/(abc:x|y)/'],
  ['((foo|bar))', regex, '/((foo|bar))/'],
  // case
  ['Foo', { regex: false, caseSensitive: true }, '"Foo"c'],
  ['case:yes foo', literal, '"foo"c'],
  ['case:no Foo', { regex: false, caseSensitive: true }, '"Foo"'],
  ['case:auto Foo bar', literal, '(and "Foo"c "bar")'],
  ['case:auto \\Sfoo', regex, '/\\Sfoo/'],
  ['(case:yes a) b', literal, '(and "a"c "b")'],
  ['a (case:yes b or c)', literal, '(and "a" (or "b"c "c"c))'],
  ['case:yes a (b)', literal, '(and "a"c "b"c)'],
  ['case:yes', literal, 'TRUE'],
  ['file:X', { regex: false, caseSensitive: true }, 'file:/X/c'],
];

for (const [query, options, expected] of parses) {
  t.equal(show(parseQuery(query, options)), expected, `${options.regex ? 'regex' : 'literal'}: ${query || '(empty)'}`);
}

// Every error of docs/query-syntax.md.
const errors: [query: string, options: ParseOptions, message: RegExp, column: number][] = [
  ['"unbalanced', literal, /^unbalanced quote/, 1],
  ['foo "bar', literal, /^unbalanced quote/, 5],
  ['content:"x', literal, /^unbalanced quote/, 9],
  ['or foo', literal, /^'or' needs an expression before it/, 1],
  ['foo or', literal, /^'or' needs an expression after it/, 5],
  ['foo or or bar', literal, /^'or' needs an expression before it/, 8],
  ['(a or) b', literal, /^'or' needs an expression after it/, 4],
  ['sym:', literal, /^sym: needs a value/, 1],
  ['foo sym: bar', literal, /^sym: needs a value/, 5],
  ['file:(', literal, /^file: has an invalid regex "\(" \(missing \)/, 1],
  ['x foo[', regex, /^invalid regex "foo\[" \(missing \]/, 3],
  ['repo:a{2000}', literal, /^repo: has an invalid regex "a\{2000\}" \(invalid repetition size/, 1],
  ['lang:klingon', literal, /^unknown language "klingon" in lang:/, 1],
  ['case:maybe x', literal, /^case: must be yes, no or auto, not "maybe"/, 1],
  ['archived:perhaps', literal, /^archived: must be yes, no or only, not "perhaps"/, 1],
  ['fork:sure', literal, /^fork: must be yes, no or only/, 1],
  ['visibility:secret', literal, /^visibility: must be public, private or any/, 1],
  ['type:symbol', literal, /^type: must be file or repo/, 1],
  ['-', literal, /^'-' must be followed by a prefix expression or a group/, 1],
  ['foo - bar', literal, /^'-' must be followed/, 5],
  ['(a -)', literal, /^'-' must be followed/, 4],
  ['-case:yes a', literal, /^case: cannot be negated/, 1],
  ['-type:file', literal, /^type: cannot be negated/, 1],
  ['type:file a or type:repo b', literal, /^type:repo after type:file: type: applies to the whole query/, 16],
  ['reposet:a,,b', literal, /^reposet: has an empty repository name/, 1],
  ['"a"b', literal, /^unexpected text after a quoted value/, 4],
];

for (const [query, options, message, column] of errors) {
  t.test(`error: ${query}`, async (t) => {
    let caught: unknown;
    try {
      parseQuery(query, options);
    } catch (error) {
      caught = error;
    }
    t.ok(caught instanceof QueryParseError, 'a QueryParseError');
    const error = caught as QueryParseError;
    t.match(error.problem, message);
    t.equal(error.position + 1, column, 'points at the offending token');
    t.ok(error.message.includes(JSON.stringify(query)), 'the message quotes the query');
    t.ok(error.message.includes(`column ${column}`), 'the message says where');
  });
}

t.test('fuzz: random queries parse or fail with a QueryParseError, never anything else', async (t) => {
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pieces = [
    'a',
    'Foo',
    ' ',
    ' ',
    '(',
    ')',
    '"',
    '\\',
    '-',
    'or',
    ' or ',
    'file:',
    'sym:',
    'case:',
    'lang:',
    'lang:go',
    'rev:*',
    '[',
    ']',
    '|',
    '*',
    '+',
    '{',
    '}',
    '.',
    'é',
    '日',
    ':',
    ',',
    'reposet:',
    'type:',
  ];
  let parsed = 0;
  let rejected = 0;
  for (let i = 0; i < 20000; i++) {
    const length = Math.floor(random() * 12);
    const query = Array.from({ length }, () => pieces[Math.floor(random() * pieces.length)]).join('');
    for (const options of [literal, regex]) {
      try {
        parseQuery(query, options);
        parsed++;
      } catch (error) {
        if (!(error instanceof QueryParseError)) {
          t.fail(`${JSON.stringify(query)} threw ${String(error)}`);
          return;
        }
        rejected++;
      }
    }
  }
  t.ok(parsed > 1000 && rejected > 1000, `both outcomes occur (${parsed} parsed, ${rejected} rejected)`);
});

t.test('deep nesting is bounded, not a stack overflow', async (t) => {
  t.throws(() => parseQuery(`${'('.repeat(100)}a${')'.repeat(100)}`, literal), { name: 'QueryParseError', message: /nested deeper than 64/ });
  t.equal(show(parseQuery(`${'('.repeat(30)}a${')'.repeat(30)}`, literal)), '"a"');
  const unclosed = `${'('.repeat(2000)}a`;
  const started = Date.now();
  t.throws(() => parseQuery(unclosed, literal), QueryParseError);
  t.ok(Date.now() - started < 2000, 'a long run of unclosed parentheses is handled quickly');
});

t.test('the regexes of a query compile to a bounded program together', async (t) => {
  const costly = (letter: string) => `[\\p{L}\\p{N}]{300}${letter}`; // ≈ 400,000 RE2 instructions each
  t.doesNotThrow(() => parseQuery(`${costly('a')} or ${costly('b')}`, regex), 'two as costly as that');
  const query = ['a', 'b', 'c'].map(costly).join(' or ');
  t.throws(
    () => parseQuery(query, regex),
    {
      name: 'QueryParseError',
      problem: `invalid regex ${JSON.stringify(costly('c'))} (the query's regexes compile to more than ${QUERY_REGEX_INSTRUCTIONS.toLocaleString('en-US')} RE2 instructions together)`,
      position: query.indexOf(costly('c')),
    },
    'a third is refused, naming it',
  );
});

t.test('type: applies to the whole query wherever it stands, as in Zoekt', async (t) => {
  for (const query of ['type:repo foo or bar', 'foo or bar type:repo', '(foo type:repo) or bar', 'x (y or (z type:repo))']) {
    t.equal(resultTypeOf(parseQuery(query, literal)), 'repo', query);
  }
  t.equal(resultTypeOf(parseQuery('foo or bar', literal)), undefined, 'none without it');
});
