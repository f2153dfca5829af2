import t from 'tap';
import { findPackedMatch, packedBuffers, packMatches, unpackMatch } from '../../src/search/packed-matches.js';
import type { ScoredMatch } from '../../src/worker/search-protocol.js';

t.test('matches packed into typed arrays come back as they were, one or all, found by shard and document', async (t) => {
  const matches: ScoredMatch[] = [
    { doc: 7, shard: 0, score: 12.5, path: [0, 3], content: [10, 14, 20, 24] },
    { doc: 3, shard: 1, score: 0.25, path: [], content: [0, 0x7fffffff] },
    { doc: 7, shard: 1, score: 99, path: [1, 2, 5, 6], content: [] },
    { doc: 0, shard: 0, score: 1, path: [], content: [] },
  ];
  const packed = packMatches(matches);
  t.same(
    matches.map((_, index) => unpackMatch(packed, index)),
    matches,
    'every match, in order',
  );
  t.same(unpackMatch(packed, 2, 5), { ...matches[2], shard: 6 }, "its shard moved on by the task's offset");
  t.same(findPackedMatch(packed, 1, 7), matches[2], 'document 7 of shard 1, not of shard 0');
  t.same(findPackedMatch(packed, 0, 7, 3), { ...matches[0], shard: 3 });
  t.equal(findPackedMatch(packed, 1, 0), undefined, 'a document that has no match there');
  t.equal(new Set(packedBuffers(packed)).size, 6, 'six buffers of its own, each transferable once');
  t.same(packMatches([]).docs.length, 0);
});
