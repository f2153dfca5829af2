import t from 'tap';
import path from 'node:path';
import { ShardWriter } from '../../src/index/shard-writer.js';
import { Shard } from '../../src/index/shard-reader.js';
import { requiredLiterals } from '../../src/query/literals.js';
import { candidates, type CandidateStats } from '../../src/search/shard/candidates.js';
import { compileMatcher } from '../../src/search/shard/matcher.js';
import { trigramAt } from '../../src/index/trigrams.js';
import { noSymbols } from '../../src/index/symbols.js';
import { tempDir } from '../helpers/tmp.js';

function corpus(dir: string, texts: string[]): Shard {
  const writer = new ShardWriter({
    repository: { id: 1, name: 'test/corpus', codeHostType: 'genericGitHost', public: true, archived: false, fork: false },
    branches: [{ name: 'HEAD', commit: 'c'.repeat(40) }],
    shardIndex: 0,
  });
  texts.forEach((text, i) =>
    writer.add({
      path: `f${i}.txt`,
      content: Buffer.from(text),
      originalSize: Buffer.byteLength(text),
      language: '',
      branchMask: 1n,
      flags: 0,
      symbols: noSymbols(),
    }),
  );
  const file = path.join(dir, 'corpus.trawl');
  writer.write(file);
  return Shard.open(file);
}

t.test('candidates are the documents holding the trigrams of a literal', async (t) => {
  const shard = corpus(tempDir(t), ['PM_RESUME here', 'pm_resume lower', 'PM_SUSPEND', 'nothing', 'RESUME_PM']);
  t.equal(
    candidates(requiredLiterals('Pm_ReSuMe', { regex: false, caseSensitive: true }), shard.contentTrigrams, {
      ngramLookups: 0,
      ngramMatches: 0,
      indexBytesLoaded: 0,
    }).length,
    0,
    'a casing no document has',
  );
  const stats: CandidateStats = { ngramLookups: 0, ngramMatches: 0, indexBytesLoaded: 0 };
  const found = candidates(requiredLiterals('PM_RESUME', { regex: false, caseSensitive: true }), shard.contentTrigrams, stats);
  t.same([...(found as Uint32Array)], [0], 'case-sensitive: only the exact casing is a candidate');
  t.equal(stats.ngramLookups, 7, 'one lookup per distinct trigram');
  const anyCase = candidates(requiredLiterals('PM_RESUME', { regex: false, caseSensitive: false }), shard.contentTrigrams, stats);
  t.same([...(anyCase as Uint32Array)], [0, 1], 'case-insensitive: every casing is a candidate');
  t.ok(stats.indexBytesLoaded >= 1, 'posting bytes read are counted');
  t.equal(candidates(requiredLiterals('pm', { regex: false, caseSensitive: true }), shard.contentTrigrams, stats), 'all', 'too short for a trigram: scan');
  t.same(
    [...(candidates(requiredLiterals('zzzz', { regex: false, caseSensitive: true }), shard.contentTrigrams, stats) as Uint32Array)],
    [],
    'an absent trigram: no candidates',
  );
  const either = candidates(requiredLiterals('SUSPEND|nothing', { regex: true, caseSensitive: true }), shard.contentTrigrams, stats);
  t.same([...(either as Uint32Array)], [2, 3], 'alternatives unite');
});

t.test('next-byte masks drop documents that hold every trigram of a literal, but not in a row', async (t) => {
  const texts = ['PM_RESUME', 'PM_X and M_RESUME', 'pm_resume', 'Pm_x m_ReSuMe', 'xyzaxyzb', 'xyzaxy yzb'];
  const shard = corpus(tempDir(t), texts);
  const found = (literal: string, caseSensitive: boolean) => {
    const stats: CandidateStats = { ngramLookups: 0, ngramMatches: 0, indexBytesLoaded: 0 };
    return [...(candidates(requiredLiterals(literal, { regex: false, caseSensitive }), shard.contentTrigrams, stats) as Uint32Array)];
  };
  const holdsEveryTrigram = (doc: number, literal: string) =>
    Array.from({ length: literal.length - 2 }, (_, i) => trigramAt(Buffer.from(literal), i)).every((trigram) =>
      shard.contentTrigrams.postingsOf(trigram)?.includes(doc),
    );
  t.ok(holdsEveryTrigram(1, 'PM_RESUME'), 'document 1 holds every trigram of PM_RESUME');
  t.same(found('PM_RESUME', true), [0], 'but its PM_ is followed by X, not R');
  t.same(found('PM_RESUME', false), [0, 2], 'case-insensitively the same: both cases of a letter share a bit');
  t.ok(holdsEveryTrigram(5, 'xyzaxyzb'), 'document 5 holds every trigram of xyzaxyzb');
  t.same(found('xyzaxyzb', true), [4], 'a trigram twice in the literal needs both of its next bytes');
});

t.test('case-insensitively, a document stays a candidate through whichever casing of each trigram it holds', async (t) => {
  const matching = ['PM_RESUME', 'pm_resume', 'Pm_Resume', 'PM_resume', 'pm_RESUME', 'pM_rEsUmE'];
  // Each decoy holds some casing of all but one trigram of pm_resume in a row (next-byte masks aside).
  const decoys = ['PM_SUSPEND resume', 'pm_x RESUME', 'PM_RESUMPTION'];
  const shard = corpus(tempDir(t), [...matching, ...decoys]);
  const stats: CandidateStats = { ngramLookups: 0, ngramMatches: 0, indexBytesLoaded: 0 };
  const found = candidates(requiredLiterals('pm_resume', { regex: false, caseSensitive: false }), shard.contentTrigrams, stats);
  t.same([...(found as Uint32Array)], [0, 1, 2, 3, 4, 5], 'exactly the documents holding the literal in some casing');
  t.ok(stats.ngramMatches > matching.length, 'later trigrams were intersected (not stopped at the first few candidates)');
});

t.test('decoding stops once the rarest trigrams leave few candidates', async (t) => {
  // 'qzx' is in two documents, every other trigram of the literal in all forty.
  const texts = Array.from({ length: 40 }, (_, i) => (i < 2 ? 'common_words qzx' : 'common_words'));
  const shard = corpus(tempDir(t), texts);
  const stats: CandidateStats = { ngramLookups: 0, ngramMatches: 0, indexBytesLoaded: 0 };
  const found = candidates(requiredLiterals('common_words qzx', { regex: false, caseSensitive: true }), shard.contentTrigrams, stats);
  t.same([...(found as Uint32Array)], [0, 1]);
  t.equal(stats.ngramLookups, 14, 'every trigram is looked up');
  t.equal(stats.ngramMatches, 2, 'only the rarest posting list is decoded');
});

t.test('property: candidates always include every document that really matches', async (t) => {
  let seed = 99;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const words = ['foo', 'Foo', 'bar', 'BAR', 'baz', 'qux', 'éclair', 'Éclair', 'x1', 'foobar', 'fooBAR', 'foo_bar', 'oob', 'bazfoo', '\n', ' ', '(', ')'];
  const texts = Array.from({ length: 200 }, () => Array.from({ length: Math.floor(random() * 30) }, () => pick(words)).join(' '));
  const shard = corpus(tempDir(t), texts);
  const patterns: [string, boolean][] = [
    ['foo', false],
    ['Foo', false],
    ['foobar', false],
    ['foobaz', false],
    ['oobar', false],
    ['bazfoobar', false],
    ['éclair', false],
    ['Éclair', false],
    ['bar baz', false],
    ['x1 (', false],
    ['fo+bar', true],
    ['(foo|qux) bar', true],
    ['ba[rz]', true],
    ['\\bfoo\\b', true],
    ['É?clair', true],
    ['(?i:foo)bar', true],
    ['.*', true],
    ['q.x', true],
  ];
  let checked = 0;
  for (const [value, regex] of patterns) {
    for (const caseSensitive of [true, false]) {
      const stats: CandidateStats = { ngramLookups: 0, ngramMatches: 0, indexBytesLoaded: 0 };
      const found = candidates(requiredLiterals(value, { regex, caseSensitive }), shard.contentTrigrams, stats);
      const matcher = compileMatcher({ value, regex, caseSensitive });
      for (let doc = 0; doc < shard.documentCount; doc++) {
        if (matcher.ranges(shard.content(doc), 1).length === 0) continue;
        checked++;
        if (found !== 'all' && !found.includes(doc)) {
          t.fail(`${value} (regex ${regex}, case ${caseSensitive}) matches document ${doc} but it is not a candidate`);
          return;
        }
      }
    }
  }
  t.ok(checked > 500, `${checked} matching documents were all candidates`);
});
