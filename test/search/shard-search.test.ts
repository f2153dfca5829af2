import t from 'tap';
import path from 'node:path';
import { ShardWriter } from '../../src/index/shard-writer.js';
import { Shard } from '../../src/index/shard-reader.js';
import { DocumentFlags } from '../../src/index/format.js';
import type { DocumentInput, DocumentSymbol } from '../../src/index/model.js';
import { parseQuery } from '../../src/query/parser.js';
import { searchShard, type ShardSearchLimits } from '../../src/search/shard/shard-search.js';
import { compileMatcher } from '../../src/search/shard/matcher.js';
import { checkContexts, UnknownSearchContextError } from '../../src/query/plan.js';
import { packSymbols } from '../helpers/symbols.js';
import { tempDir } from '../helpers/tmp.js';

const documents: DocumentInput[] = [
  doc('src/main.go', 'package main\nfunc Main() {}\n// TODO fix\n', 'Go', 3n, [{ start: 18, end: 22, kind: 'function' }]),
  doc('src/util.go', 'func helper() {}\nTODO later\n', 'Go', 1n),
  doc('docs/README.md', '# Readme\nmain docs\n', 'Markdown', 1n),
  doc('src/release.go', 'func Release() {}\nTODO release\n', 'Go', 2n),
  { ...doc('assets/big.bin', '', '', 1n), content: null, originalSize: 4096, flags: DocumentFlags.binary },
];

function doc(p: string, text: string, language: string, branchMask: bigint, symbols: DocumentSymbol[] = []): DocumentInput {
  return { path: p, content: Buffer.from(text), originalSize: Buffer.byteLength(text), language, branchMask, flags: 0, symbols: packSymbols(symbols) };
}

function openShard(dir: string): Shard {
  const writer = new ShardWriter({
    repository: { id: 3, name: 'github.com/acme/app', codeHostType: 'github', public: true, archived: false, fork: false },
    branches: [
      { name: 'HEAD', commit: 'a'.repeat(40) },
      { name: 'release', commit: 'b'.repeat(40) },
    ],
    shardIndex: 0,
  });
  for (const d of documents) writer.add(d);
  writer.write(path.join(dir, 's.trawl'));
  return Shard.open(path.join(dir, 's.trawl'));
}

const contexts = { backend: { include: ['github.com/acme/*'], exclude: [] }, other: { include: ['gitlab.com/**'], exclude: [] } };
const unlimited: ShardSearchLimits = { maxMatchRanges: 1000, deadline: Infinity, isCancelled: () => false };

t.test('every term kind and prefix selects the right files and ranges', async (t) => {
  const shard = openShard(tempDir(t));
  const run = (query: string, options = { regex: false, caseSensitive: false }, limits = unlimited) =>
    searchShard(shard, parseQuery(query, options), contexts, limits);
  const paths = (query: string, options?: { regex: boolean; caseSensitive: boolean }) => run(query, options).matches.map((m) => shard.path(m.doc));

  t.same(paths('TODO'), ['src/main.go', 'src/util.go'], 'only the default branch without rev:');
  t.same(paths('rev:* TODO').sort(), ['src/main.go', 'src/release.go', 'src/util.go'], 'rev:* searches every branch');
  t.same(paths('rev:^release$ TODO').sort(), ['src/main.go', 'src/release.go'], 'rev: picks branches by regex');
  t.same(paths('rev:nosuch TODO'), [], 'no matching branch, no results');
  t.same(paths('rev:x* TODO').sort(), ['src/main.go', 'src/release.go', 'src/util.go'], 'a rev: regex that matches empty names every branch');
  t.same(paths('rev:RELEASE TODO').sort(), ['src/main.go', 'src/release.go'], "rev: follows the query's case");
  t.same(paths('main'), ['src/main.go', 'docs/README.md'], 'bare terms match content or path, case-insensitively');
  t.same(paths('Main', { regex: false, caseSensitive: true }), ['src/main.go']);
  t.same(paths('content:main'), ['src/main.go', 'docs/README.md']);
  t.same(paths('file:README'), ['docs/README.md']);
  t.same(paths('big'), ['assets/big.bin'], 'binary files are found by path');
  t.same(paths('lang:go TODO'), ['src/main.go', 'src/util.go']);
  t.same(paths('lang:markdown main'), ['docs/README.md']);
  t.same(paths('-file:util TODO'), ['src/main.go']);
  t.same(paths('TODO or Readme'), ['docs/README.md', 'src/main.go', 'src/util.go'], 'a file whose path a bare term matches is decided first');
  t.same(paths('(TODO or Readme) -lang:go'), ['docs/README.md']);
  t.same(paths('func -(helper or Main)'), [], 'negated group');
  t.same(paths('rev:* func -(helper or Main)'), ['src/release.go']);
  t.same(paths('sym:Main'), ['src/main.go']);
  t.same(paths('sym:^ain'), [], 'sym: matches inside symbol names only');
  t.same(paths('sym:elper'), [], 'helper is not a ctags symbol in this corpus');
  t.same(paths('repo:acme TODO'), ['src/main.go', 'src/util.go']);
  t.same(paths('repo:other TODO'), []);
  t.same(paths('reposet:github.com/acme/app TODO').length, 2);
  t.same(paths('reposet:github.com/acme/other TODO'), []);
  t.same(paths('context:backend TODO').length, 2);
  t.same(paths('context:other TODO'), []);
  t.same(paths('archived:only TODO'), []);
  t.same(paths('archived:no TODO').length, 2);
  t.same(paths('fork:only TODO'), []);
  t.same(paths('visibility:private TODO'), []);
  t.same(paths('visibility:public TODO').length, 2);
  t.same(paths('func \\w+\\(', { regex: true, caseSensitive: false }), ['src/main.go', 'src/util.go'], 'regex mode');
  t.same(paths(''), [], 'the empty query matches nothing');

  const main = run('main').matches[0]!;
  const text = shard.content(main.doc).toString();
  t.same(main.content, [8, 12, 18, 22], 'content ranges are byte offsets of every match');
  t.equal(text.slice(8, 12), 'main');
  t.same(main.path, [4, 8], 'path ranges too');
  const symbol = run('sym:Main').matches[0]!;
  t.same(symbol.content, [18, 22], 'a symbol match ranges over the symbol name');
  t.same(run('TODO fix').matches[0]!.content, [31, 35, 36, 39], 'per-file AND: every satisfied term contributes its ranges');
  t.same(
    run('TODO -content:fix').matches.map((m) => shard.path(m.doc)),
    ['src/util.go'],
    'negation needs a prefix or a group',
  );
  t.same(run('TODO -fix').matches, [], '-fix is the literal term "-fix"');
});

t.test('limits: the match cap, the deadline and cancellation stop between documents', async (t) => {
  const shard = openShard(tempDir(t));
  const query = parseQuery('rev:* TODO', { regex: false, caseSensitive: false });
  const capped = searchShard(shard, query, contexts, { ...unlimited, maxMatchRanges: 2 });
  t.equal(capped.stopReason, 'limit');
  t.equal(capped.matches.length, 2);
  t.equal(searchShard(shard, query, contexts, unlimited).stopReason, 'complete');
  const late = searchShard(shard, query, contexts, { ...unlimited, deadline: performance.now() - 1 });
  t.same([late.stopReason, late.matches.length], ['deadline', 0]);
  let calls = 0;
  const cancelled = searchShard(shard, query, contexts, { ...unlimited, isCancelled: () => ++calls > 1 });
  t.same([cancelled.stopReason, cancelled.matches.length], ['cancelled', 1], 'the flag is checked before each document');
  const stats = searchShard(shard, query, contexts, unlimited).stats;
  t.ok(stats.ngramLookups >= 2, 'trigram lists were consulted');
  t.equal(stats.filesConsidered, 3, 'only the candidates holding the trigrams were considered');
  t.equal(stats.matchRanges, 3);
});

t.test('unknown search contexts are reported before any shard is read', async (t) => {
  t.throws(() => checkContexts(parseQuery('a (b or context:nope)', { regex: false, caseSensitive: false }), contexts), UnknownSearchContextError);
  t.doesNotThrow(() => checkContexts(parseQuery('context:backend a', { regex: false, caseSensitive: false }), contexts));
});

t.test('sym: finds what matching every definition of every file finds, literal occurrences overlapping or not', async (t) => {
  let seed = 3;
  const random = (below: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % below;
  const pieces = ['aa', 'a', 'PM_RESUME', 'pm_resume', 'Pm_', 'RESUME', '_', 'x', ' ', '\n', 'é', '\u212a'];
  const generated: DocumentInput[] = [];
  for (let i = 0; i < 60; i++) {
    const text = Array.from({ length: 5 + random(40) }, () => pieces[random(pieces.length)]).join('');
    const length = Buffer.byteLength(text);
    const symbols = Array.from({ length: random(25) }, () => {
      const start = random(length);
      return { start, end: Math.min(length, start + 1 + random(14)), kind: 'function' };
    }).sort((a, b) => a.start - b.start);
    generated.push(doc(`f${i}.c`, text, 'C', 1n, symbols));
  }
  const dir = tempDir(t);
  const writer = new ShardWriter({
    repository: { id: 4, name: 'github.com/acme/symbols', codeHostType: 'github', public: true, archived: false, fork: false },
    branches: [{ name: 'HEAD', commit: 'c'.repeat(40) }],
    shardIndex: 0,
  });
  for (const d of generated) writer.add(d);
  writer.write(path.join(dir, 's.trawl'));
  const shard = Shard.open(path.join(dir, 's.trawl'));
  const cases: [string, { regex: boolean; caseSensitive: boolean }][] = [
    ['sym:aa', { regex: false, caseSensitive: true }], // occurrences that overlap each other
    ['sym:aaa', { regex: false, caseSensitive: true }],
    ['sym:PM_RESUME', { regex: false, caseSensitive: true }],
    ['sym:pm_resume', { regex: false, caseSensitive: false }], // any casing
    ['sym:^Pm_RESUME$', { regex: true, caseSensitive: false }],
    ['sym:a+_?R', { regex: true, caseSensitive: true }], // a regex with a literal
    ['sym:(aa|x)a', { regex: true, caseSensitive: true }], // alternatives: no single literal
    ['sym:\\w{3}', { regex: true, caseSensitive: true }], // no literal at all
    ['sym:k', { regex: false, caseSensitive: false }], // the Kelvin sign folds to k
  ];
  let found = 0;
  for (const [query, options] of cases) {
    const parsed = parseQuery(query, options);
    const pattern = parsed.type === 'pattern' ? parsed : undefined;
    if (!pattern) throw new Error(`${query} is not one pattern`);
    const matcher = compileMatcher(pattern);
    // The reference: every definition of every file, its name matched on its own.
    const expected = generated.flatMap((d, index) => {
      const content = shard.content(index);
      const ranges = shard
        .symbols(index)
        .flatMap((symbol) => matcher.ranges(content.subarray(symbol.start, symbol.end), 1000).map((offset) => symbol.start + offset));
      return ranges.length > 0 ? [{ doc: index, content: ranges }] : [];
    });
    const actual = searchShard(shard, parsed, contexts, unlimited).matches.map((match) => ({ doc: match.doc, content: match.content }));
    t.same(actual, expected, query);
    found += expected.length;
  }
  t.ok(found > 60, `the cases match ${found} files`);
});

t.test('a search using more regexes than a thread keeps compiled finds with all of them, and the next search too', async (t) => {
  const shard = openShard(tempDir(t));
  const alternatives = Array.from({ length: 40 }, (_, i) => `nomatch${i}x`).join(' or ');
  for (const round of [1, 2]) {
    const found = searchShard(shard, parseQuery(`${alternatives} or T.DO`, { regex: true, caseSensitive: true }), contexts, unlimited);
    t.same(
      found.matches.map((match) => shard.path(match.doc)),
      ['src/main.go', 'src/util.go'],
      `search ${round}: the last of 41 regexes still matches in every file`,
    );
  }
});

t.test('a document with hundreds of thousands of ranges, one term or several, is searched on any stack', async (t) => {
  const dir = tempDir(t);
  const text = 'ab '.repeat(300_000);
  const writer = new ShardWriter({
    repository: { id: 1, name: 'r', codeHostType: 'genericGitHost', public: true, archived: false, fork: false },
    branches: [{ name: 'HEAD', commit: 'a'.repeat(40) }],
    shardIndex: 0,
  });
  writer.add(doc('dense.txt', text, 'Text', 1n));
  writer.write(path.join(dir, 's.trawl'));
  const shard = Shard.open(path.join(dir, 's.trawl'));
  const limits = { ...unlimited, maxMatchRanges: 1_000_000 };
  const ranges = (query: string) => searchShard(shard, parseQuery(query, { regex: true, caseSensitive: true }), {}, limits).matches[0]?.content.length;
  // Each appends 300,000 ranges (600,000 offsets): as one spread, past what a call's arguments can take.
  t.equal(ranges('b'), 600_000, 'one term');
  t.equal(ranges('a b'), 1_200_000, 'two terms: the ranges of both');
});
