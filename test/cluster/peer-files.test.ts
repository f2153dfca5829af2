import t from 'tap';
import { decodeFiles, encodeFiles, PeerFilesError } from '../../src/cluster/peer-files.js';
import type { FilesPart } from '../../src/search/response/rendered-files.js';
import { emptyStats } from '../../src/search/response/stats.js';

/** A part of `count` files of repository `r<n>`, its JSON in two pieces. */
function part(n: number, count: number): FilesPart {
  const files = Array.from({ length: count }, (_, i) => JSON.stringify({ repository: `r${n}`, fileName: { text: `f${i} "é"`, matchRanges: [] } }));
  const ends: number[] = [];
  let json = '';
  for (const file of files) {
    json += (json ? ',' : '') + file;
    ends.push(Buffer.byteLength(json));
  }
  const bytes = Buffer.from(json);
  const half = bytes.length >> 1;
  return {
    stats: { ...emptyStats(), actualMatchCount: count },
    repositoryInfo: [{ id: n, name: `r${n}`, codeHostType: 'genericGitHost' }],
    outcome: { stop: 'complete' },
    keys: files.map((_, i) => ({ score: n + i / 10, repository: `r${n}`, path: `f${i}` })),
    repositoryIds: files.map(() => n),
    ranges: files.map(() => 1),
    foundRanges: files.map(() => 2),
    contentBytes: files.map(() => 3),
    ends,
    cutByContent: false,
    json: count === 0 ? [] : [bytes.subarray(0, half), bytes.subarray(half)],
    shards: [],
    docs: [],
  };
}

const joined = (json: readonly Uint8Array[]) => Buffer.concat(json).toString();

t.test('parts come out as they went in, their files views of the answer', async (t) => {
  const sent = [part(1, 3), part(2, 0), part(3, 1)];
  const answer = Buffer.concat(encodeFiles(sent));
  const received = decodeFiles(answer);
  t.same(
    received.map(({ json, ...rest }) => ({ ...rest, json: joined(json) })),
    sent.map(({ json, ...rest }) => ({ ...rest, json: joined(json) })),
  );
  t.ok(
    received.every((got) => got.json.every((piece) => piece.buffer === answer.buffer)),
    'the files are not copied',
  );
  t.same(decodeFiles(Buffer.concat(encodeFiles([]))), [], 'no parts');
});

t.test('an answer that is not a node’s files is refused, never merged', async (t) => {
  const good = Buffer.concat(encodeFiles([part(1, 2)]));
  const newline = good.indexOf('\n');
  const opening = JSON.parse(good.subarray(0, newline).toString()) as { parts: Record<string, unknown>[] };
  const files = good.subarray(newline + 1);
  const withPart = (change: Record<string, unknown>) =>
    Buffer.concat([Buffer.from(`${JSON.stringify({ ...opening, parts: [{ ...opening.parts[0], ...change }] })}\n`), files]);
  const cases: [string, Buffer][] = [
    ['no line', Buffer.from('{"trawlFiles":1,"parts":[]}')],
    ['not JSON', Buffer.from('{"trawlFiles":1,\n')],
    ['another version', Buffer.from('{"trawlFiles":2,"parts":[]}\n')],
    ['a search response', Buffer.from('{"stats":{},"files":[]}\n')],
    ['cut short', good.subarray(0, good.length - 1)],
    ['bytes after the files', Buffer.concat([good, Buffer.from(' ')])],
    ['a count missing', withPart({ ranges: [1] })],
    ['ends out of order', withPart({ ends: [(opening.parts[0]!.ends as number[])[1], (opening.parts[0]!.ends as number[])[0]] })],
    ['ends beyond its bytes', withPart({ bytes: files.length - 1 })],
    ['a repository not listed', withPart({ repositoryIds: [1, 7] })],
    ['a stop reason unknown', withPart({ outcome: { stop: 'maybe' } })],
    ['a negative count', withPart({ contentBytes: [1, -1] })],
  ];
  for (const [label, answer] of cases) {
    let caught: unknown;
    try {
      decodeFiles(answer);
    } catch (error) {
      caught = error;
    }
    t.ok(caught instanceof PeerFilesError, `${label}: ${String(caught)}`);
  }
});
