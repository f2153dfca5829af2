import t from 'tap';
import type { FileResult, SearchResponse } from '../../src/api/types.js';
import { compareRanks } from '../../src/search/shard/rank.js';
import { startDaemon } from '../helpers/daemon.js';
import { routerRepositories } from './fixture.js';

type ScoredFile = FileResult & { score: number };

const rangesOf = (file: FileResult) => file.fileName.matchRanges.length + file.chunks.reduce((sum, chunk) => sum + chunk.matchRanges.length, 0);
const nameOf = (file: FileResult) => `${file.repository}/${file.fileName.text}`;

/** A ranked stream's files as its client keeps them: by rank, each while fewer than `matches` ranges come before it. */
function keptByRank(files: ScoredFile[], matches: number): ScoredFile[] {
  const ranked = [...files].sort((a, b) =>
    compareRanks(
      a,
      b,
      (file) => file.repository,
      (file) => file.fileName.text,
    ),
  );
  const kept: ScoredFile[] = [];
  let ranges = 0;
  for (const file of ranked) {
    if (ranges >= matches) break;
    kept.push(file);
    ranges += rangesOf(file);
  }
  return kept;
}

t.test('a ranked stream: its parts, ranked and kept within `matches`, hold the files /api/search answers', async (t) => {
  // Four repositories over two workers: two parts, each of which alone holds part of the best files.
  const daemon = await startDaemon(t, { repos: routerRepositories(t), auth: { anonymousAccess: true }, index: { ctagsCommand: '' }, server: { workers: 2 } });
  for (const matches of [3, 7, 50, 10_000]) {
    const request = { query: 'router', matches, contextLines: 1 };
    const expected = (await (await daemon.post('/api/search', request)).json()) as SearchResponse;
    const response = await daemon.post('/api/stream_search', { ...request, ranked: true });
    t.equal(response.status, 200);
    const events = (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('data: {'))
      .map((block) => JSON.parse(block.slice('data: '.length)));
    const files = events.filter((event) => event.type === 'chunk').flatMap((event) => event.files as ScoredFile[]);
    t.ok(
      files.every((file) => typeof file.score === 'number'),
      'every streamed file carries its score',
    );
    t.same(keptByRank(files, matches).map(nameOf), expected.files.map(nameOf), `matches ${matches}: the same files in the same order`);
    t.equal(events.at(-1).isSearchExhaustive, expected.isSearchExhaustive, `matches ${matches}: cut exactly when /api/search is`);
  }

  const ranked = (await (await daemon.post('/api/search', { query: 'router', matches: 50, ranked: true })).json()) as { files: ScoredFile[] };
  const scores = ranked.files.map((file) => file.score);
  t.ok(scores.length > 1, 'a ranked /api/search answers files');
  t.same(
    scores,
    [...scores].sort((a, b) => b - a),
    'and their scores, best first',
  );
  const plain = await (await daemon.post('/api/stream_search', { query: 'router', matches: 50 })).text();
  t.notMatch(plain, /"score"/, 'a stream not asked to be ranked carries no scores');
});
