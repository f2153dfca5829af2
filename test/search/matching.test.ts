import t from 'tap';
import RE2 from 're2';
import { compileMatcher, searchAnchorRuns } from '../../src/search/shard/matcher.js';
import { escapeRegExp } from '../../src/query/escape.js';
import { intersect, union } from '../../src/search/shard/sorted-sets.js';

const ranges = (value: string, regex: boolean, caseSensitive: boolean, text: string, limit = 100) =>
  compileMatcher({ value, regex, caseSensitive }).ranges(Buffer.from(text, 'utf8'), limit);

t.test('matchers report non-overlapping, non-empty byte ranges', async (t) => {
  t.same(ranges('aa', false, true, 'aaaaa'), [0, 2, 2, 4], 'case-sensitive literal, non-overlapping');
  t.same(ranges('Foo', false, true, 'foo Foo FOO'), [4, 7]);
  t.same(ranges('Foo', false, false, 'foo Foo FOO fOo'), [0, 3, 4, 7, 8, 11, 12, 15], 'case-insensitive literal');
  t.same(ranges('a.b', false, false, 'a.b axb'), [0, 3], 'literal metacharacters are literal');
  t.same(ranges('ÄBC', false, false, 'x äbc'), [2, 6], 'non-ASCII case folding, byte offsets');
  t.same(ranges('\\d+', true, true, 'a12b345'), [1, 3, 4, 7]);
  t.same(ranges('\\d+', true, true, 'é12'), [2, 4], 'regex offsets are bytes after multi-byte text');
  t.same(ranges('x*', true, true, 'axxbé'), [1, 3], 'empty matches mark nothing and do not loop');
  t.same(ranges('^', true, true, 'abc'), [], 'a pattern that only matches empty text has no ranges');
  t.same(ranges('o', false, true, 'ooooo', 2), [0, 1, 1, 2], 'the limit is respected');
  t.same(ranges('straße', true, false, 'STRASSE Straße'), [8, 15], 'RE2 folds simple case only');
  const started = Date.now();
  t.same(ranges('(a+)+$', true, true, 'a'.repeat(100000) + 'b'), [], 'a catastrophic-backtracking regex is linear in RE2');
  t.ok(Date.now() - started < 1000);
});

t.test('case-sensitive literals past one native batch of occurrences, two matchers used in turn', async (t) => {
  const text = Buffer.from('ab '.repeat(2500));
  const first = compileMatcher({ value: 'ab', regex: false, caseSensitive: true });
  const second = compileMatcher({ value: 'b ', regex: false, caseSensitive: true });
  const expected = (offset: number, length: number, count: number) => Array.from({ length: count }, (_, i) => [3 * i + offset, 3 * i + offset + length]).flat();
  t.same(first.ranges(text, 5000), expected(0, 2, 2500), 'every occurrence, in order, across three batches');
  t.same(second.ranges(text, 2000), expected(1, 2, 2000), 'the other matcher, capped inside its second batch');
  t.same(first.ranges(text, 3, 3 * 2400), expected(0, 2, 2500).slice(2 * 2400, 2 * 2403), 'the first again, from an offset');
});

t.test('case-insensitive ASCII literals match what RE2 matches, U+212A and U+017F included', async (t) => {
  t.same(ranges('kelvin', false, false, 'KELVIN \u212aelvin kelvin'), [0, 6, 7, 15, 16, 22], 'the Kelvin sign folds to k (3 bytes for 1)');
  t.same(ranges('CASE', false, false, 'ca\u017fe CASE'), [0, 5, 6, 10], 'the long s folds to s');
  t.same(ranges('a@', false, false, 'a@ A@ a` A`'), [0, 2, 3, 5], 'only letters fold');
  const kelvinLast = Buffer.from('k '.repeat(2500) + '\u212a');
  const many = compileMatcher({ value: 'K', regex: false, caseSensitive: false }).ranges(kelvinLast, 5000);
  t.equal(many.length / 2, 2501, 'a Kelvin sign after two full batches of occurrences is found too');
  t.same(many.slice(-2), [5000, 5003]);
  let seed = 5;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pieces = ['s', 'S', 'k', 'K', 'e', 'E', '_', ' ', '\u212a', '\u017f', 'é', '\n'];
  const needles = ['s', 'sk', 'Ske', 'kEs_', 'e e', 'SSS', 'e_k'];
  let matched = 0;
  for (let round = 0; round < 200; round++) {
    const text = Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => pieces[Math.floor(random() * pieces.length)]).join(''), 'utf8');
    const value = needles[round % needles.length]!;
    const from = Math.floor(random() * Math.min(text.length + 1, 20));
    const limit = 1 + Math.floor(random() * 20);
    const literal = compileMatcher({ value, regex: false, caseSensitive: false }).ranges(text, limit, from);
    const regex = compileMatcher({ value: escapeRegExp(value), regex: true, caseSensitive: false }).ranges(text, limit, from);
    if (JSON.stringify(literal) !== JSON.stringify(regex)) {
      t.same(literal, regex, `${JSON.stringify(value)} in ${JSON.stringify(text.toString('utf8'))} from ${from}, limit ${limit}`);
      return;
    }
    matched += literal.length / 2;
  }
  t.ok(matched > 300, `200 random texts: the same ${matched} ranges as the regex`);
});

/** Every non-empty match node-re2's own exec loop finds from `from`, as flattened byte ranges: the reference for the addon's. */
function execLoop(regex: RE2, text: Buffer, limit: number, from: number): number[] {
  const found: number[] = [];
  regex.lastIndex = from;
  while (found.length < 2 * limit) {
    const match = regex.exec(text);
    if (match === null) break;
    const length = (match[0] as unknown as Buffer).length;
    if (length === 0) {
      let next = match.index + 1;
      while (next < text.length && (text[next]! & 0xc0) === 0x80) next++;
      if (next > text.length) break;
      regex.lastIndex = next;
      continue;
    }
    found.push(match.index, match.index + length);
  }
  return found;
}

t.test("regexes: the addon's RE2 finds what node-re2's exec loop finds, from any offset, past a batch", async (t) => {
  const patterns = [
    '\\w{2}\\s+\\w{2}',
    '^\\w+',
    '\\w+$',
    '\\bk\\w*',
    'x*',
    '(?:ab|a)(c?)',
    '[é\\u212a]+',
    '.',
    'a|',
    '\\d*\\n?',
    '(?<tag>k)e',
    'S\\s',
    '$',
    '\\B.',
  ];
  let seed = 9;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pieces = ['a', 'b', 'c', 'k', 'K', 'S', 'x', 'é', '\u212a', ' ', '\n', '\r\n', '7', '_', '\t'];
  let compared = 0;
  for (let round = 0; round < 600; round++) {
    const value = patterns[round % patterns.length]!;
    const caseSensitive = round % 3 !== 0;
    const text = Buffer.from(Array.from({ length: Math.floor(random() * 300) }, () => pieces[Math.floor(random() * pieces.length)]).join(''), 'utf8');
    const from = Math.floor(random() * Math.min(text.length + 1, 40));
    const limit = 1 + Math.floor(random() * 200);
    const actual = compileMatcher({ value, regex: true, caseSensitive }).ranges(text, limit, from);
    const expected = execLoop(new RE2(value, caseSensitive ? 'gmu' : 'gimu'), text, limit, from);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      t.same(actual, expected, `/${value}/${caseSensitive ? '' : 'i'} in ${JSON.stringify(text.toString('utf8'))} from ${from}, limit ${limit}`);
      return;
    }
    compared += actual.length / 2;
  }
  t.ok(compared > 5_000, `600 random texts: the same ${compared} ranges`);
  const long = Buffer.from('ab cd '.repeat(3000));
  const all = compileMatcher({ value: '\\w+ \\w+', regex: true, caseSensitive: true }).ranges(long, 10_000);
  t.same(all, execLoop(new RE2('\\w+ \\w+', 'gmu'), long, 10_000, 0), 'past several batches of the addon');
  t.equal(all.length / 2, 3000);
});

t.test("a regex searched in its anchor's runs finds what it finds in the whole text", async (t) => {
  // [regex, its anchor, a byte none of its matches holds] (query/literals.ts).
  const patterns: [string, string, string][] = [
    ['[A-Z]+_ab', '_ab', '\n'],
    ['\\bab\\w*$', 'ab', '\n'],
    ['^k?ab', 'ab', '\n'],
    ['ab[^\\n]{0,3}c', 'ab', '\n'],
    ['x ab|ab y', 'ab', '\n'],
    ['\\Bab\\b', 'ab', '\n'],
    ['[é\\u212a]ab.', 'ab', '\n'],
    ['Ab', 'Ab', '\n'],
    ['\\w*\\s*=\\s*ab\\b', '=', ';'],
    ['ab\\s+\\w+$', 'ab', ';'],
    ['^\\s*ab', 'ab', ';'],
    ['k\\s*ab\\s*\\b', 'ab', '}'],
  ];
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pieces = ['ab', '_ab', 'A', 'K', 'x ', ' y', 'c', 'k', 'é', '\u212a', ' ', '\n', '\r\n', ';', '}', ' = ', 'z'.repeat(700), '\n'.repeat(3)];
  let compared = 0;
  for (let round = 0; round < 1200; round++) {
    const [value, anchorText, separator] = patterns[round % patterns.length]!;
    const caseSensitive = round % 4 !== 0;
    const text = Buffer.from(Array.from({ length: Math.floor(random() * 120) }, () => pieces[Math.floor(random() * pieces.length)]).join(''), 'utf8');
    const limit = 1 + Math.floor(random() * 40);
    const regex = compileMatcher({ value, regex: true, caseSensitive });
    const anchor = compileMatcher({ value: anchorText, regex: false, caseSensitive });
    const found: number[] = [];
    const searched = searchAnchorRuns(anchor, regex, text, separator.charCodeAt(0), text.length, 0, 0, found, limit);
    const expected = regex.ranges(text, limit);
    if (JSON.stringify(found) !== JSON.stringify(expected)) {
      t.same(found, expected, `/${value}/${caseSensitive ? '' : 'i'} in ${JSON.stringify(text.toString('utf8'))}, limit ${limit}`);
      return;
    }
    if (searched !== 0 && searched < text.length && text[searched] !== separator.charCodeAt(0)) {
      t.fail(`searched up to ${searched}, not a run's end`);
      return;
    }
    compared += found.length / 2;
  }
  t.ok(compared > 500, `1,200 random texts: the same ${compared} ranges`);

  // A window ends before a separator that is not a line's end: `$` and `\\b` read it there as the whole text does.
  const runs = Buffer.from(`ab x;${'z'.repeat(2000)};ab y\nab_;${'z'.repeat(2000)};ab z`);
  for (const value of ['ab\\s+\\w+$', 'ab\\s*\\w*\\b']) {
    const regex = compileMatcher({ value, regex: true, caseSensitive: true });
    const found: number[] = [];
    searchAnchorRuns(compileMatcher({ value: 'ab', regex: false, caseSensitive: true }), regex, runs, 0x3b, runs.length, 0, 0, found, 100);
    t.same(found, regex.ranges(runs, 100), `${value} in runs split at semicolons`);
  }

  // Windows across several batches of the anchor's occurrences, runs far apart and close together.
  const lines = Array.from({ length: 6000 }, (_, i) => (i % 3 === 0 ? `x${i} AB_ab ${'z'.repeat(i % 7 === 0 ? 2000 : 10)}` : `plain ${i}`)).join('\n');
  const text = Buffer.from(lines);
  const regex = compileMatcher({ value: '[A-Z]+_ab', regex: true, caseSensitive: true });
  const anchor = compileMatcher({ value: '_ab', regex: false, caseSensitive: true });
  const found: number[] = [];
  searchAnchorRuns(anchor, regex, text, 0x0a, text.length, 0, 0, found, 10_000);
  t.same(found, regex.ranges(text, 10_000), 'the same 2,000 ranges past two batches of occurrences');
  t.equal(found.length / 2, 2000);

  // Searched in pieces, as a document's runs of candidate blocks are: occurrences from `from` within `scanEnd`, resumed.
  const pieced: number[] = [];
  let searched = 0;
  for (let from = 0; from < text.length; from += 4096)
    searched = searchAnchorRuns(anchor, regex, text, 0x0a, Math.min(text.length, from + 4096 + 2), from, searched, pieced, 10_000);
  t.same(pieced, found, 'the same ranges when the text is searched run by run');
});

t.test('a regex ends its matches at `to`, the text after it read as context', async (t) => {
  const regex = compileMatcher({ value: 'ab\\b|ab$', regex: true, caseSensitive: true });
  const text = Buffer.from('ab abc ab\nabx');
  t.same(regex.ranges(text, 10, 0, 9), [0, 2, 7, 9], 'a word boundary and a line end read from the text after `to`');
  t.same(regex.ranges(text, 10, 0, 12), [0, 2, 7, 9], '`$` does not match at `to` before an x');
  t.same(regex.ranges(text, 10, 3, 5), [], 'abc is not a match within 3–5: its c follows');
  await t.rejects(async () => regex.ranges(text, 10, 5, 3), /from ≤ to/, 'from past to is refused');
});

t.test("RE2 folds no character outside ASCII to an ASCII letter but U+212A and U+017F (the addon's folded search relies on it)", async (t) => {
  const everyOtherCharacter: string[] = [];
  for (let code = 0x80; code <= 0x10ffff; code++) if (code < 0xd800 || code > 0xdfff) everyOtherCharacter.push(String.fromCodePoint(code));
  const text = Buffer.from(everyOtherCharacter.join(''), 'utf8');
  const folding: string[] = [];
  for (const letter of 'abcdefghijklmnopqrstuvwxyz') {
    const ranges = compileMatcher({ value: `[${letter}]`, regex: true, caseSensitive: false }).ranges(text, 10);
    for (let i = 0; i < ranges.length; i += 2)
      folding.push(
        `${letter} U+${text
          .subarray(ranges[i], ranges[i + 1])
          .toString('utf8')
          .codePointAt(0)!
          .toString(16)}`,
      );
  }
  t.same(folding, ['k U+212a', 's U+17f']);
});

t.test('sorted set operations agree with a brute-force reference', async (t) => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const randomSet = (size: number, range: number) =>
    new Uint32Array([...new Set(Array.from({ length: size }, () => Math.floor(random() * range)))].sort((a, b) => a - b));
  for (let i = 0; i < 300; i++) {
    const a = randomSet(Math.floor(random() * 50), 200);
    const b = randomSet(Math.floor(random() * 2000), 5000);
    const inB = new Set(b);
    t.same(
      [...intersect(a, b)],
      [...a].filter((x) => inB.has(x)),
      `intersect ${i}`,
    );
    t.same(
      [...intersect(b, a)],
      [...a].filter((x) => inB.has(x)),
      `intersect is symmetric ${i}`,
    );
    t.same(
      [...union(a, b)],
      [...new Set([...a, ...b])].sort((x, y) => x - y),
      `union ${i}`,
    );
  }
});
