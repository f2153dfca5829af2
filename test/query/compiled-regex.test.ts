import t from 'tap';
import RE2 from 're2';
import { native, type NativeRegex } from '../../native/index.js';
import { checkedRegex, compiledRegex, freeRetiredRegexes, KEPT_REGEXES, checkedPattern } from '../../src/query/compiled-regex.js';

const text = Buffer.from('one\nTwo\n');
const found = (regex: NativeRegex) => native.findRegex(regex, text, 0, new Uint32Array(8));

t.test('a pattern is compiled once per options and kept; the least recently used goes first and is freed when the next task starts', async (t) => {
  freeRetiredRegexes();
  const insensitive = { caseSensitive: false, multiline: true };
  const sensitive = { caseSensitive: true, multiline: true };
  const first = checkedRegex('^two$', insensitive);
  t.equal(found(first), 1, 'multi-line, case-insensitive');
  t.equal(checkedRegex('^two$', insensitive), first, 'kept');
  const other = checkedRegex('^two$', sensitive);
  t.not(other, first, 'other options, another regex');
  t.equal(found(other), 0, 'case-sensitive');
  t.equal(found(checkedRegex('^two$', { caseSensitive: false, multiline: false })), 0, '^ and $ only at the ends');
  checkedRegex('^two$', insensitive); // the most recently used again
  for (let i = 0; i < KEPT_REGEXES - 1; i++) checkedRegex(`filler ${i}`, sensitive);
  t.equal(checkedRegex('^two$', insensitive), first, 'used last, still kept');
  t.equal(found(other), 0, 'a dropped regex still works until the next task starts');
  freeRetiredRegexes();
  t.throws(() => found(other), { message: /the regex was freed/ }, 'then it is freed');
  t.not(checkedRegex('^two$', sensitive), other, 'and compiled anew when asked again');
  t.throws(() => checkedRegex('a(b', sensitive), { message: /does not compile: missing \)/ }, 'a refusal where none was expected is a fault');
});

t.test("a refusal carries node-re2's message for the pattern, and is kept too", async (t) => {
  for (const pattern of ['a(b', '(?<=x)y', '(?<a>x)(?<a>y)', 'x{1001}', '\\']) {
    let expected = '';
    try {
      new RE2(pattern, 'u');
    } catch (error) {
      expected = (error as Error).message;
    }
    t.not(expected, '', `node-re2 refuses ${pattern}`);
    t.same(checkedPattern(pattern), { refused: expected }, pattern);
    t.same(compiledRegex(pattern, { caseSensitive: false, multiline: false }), { refused: expected });
  }
  t.same(checkedPattern('[a-z]{1000}'), { instructions: 1004 }, "a pattern RE2 takes, with its program's size");
});
