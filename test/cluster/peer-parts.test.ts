import t from 'tap';
import { encodeFailure, encodeFinal, encodePart, PEER_PARTS_OPENING, PeerPartsError, readParts } from '../../src/cluster/peer-parts.js';
import type { StreamPart, StreamSummary } from '../../src/search/sinks.js';
import { emptyStats } from '../../src/search/response/stats.js';

function part(n: number): StreamPart {
  const files = Buffer.from(JSON.stringify([{ repository: `r${n}`, content: `line\n"quoted" ${'é'.repeat(n)}` }]));
  const stats = { ...emptyStats(), actualMatchCount: n };
  return { files, repositoryInfo: [{ id: n, name: `r${n}`, codeHostType: 'generic-git-host', webUrl: '' } as never], stats, isSearchExhaustive: true };
}

const summary: StreamSummary = { accumulatedStats: { ...emptyStats(), actualMatchCount: 6 }, isSearchExhaustive: true };

/** `bytes` as a stream cut into pieces of `size`. */
async function* pieces(bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function read(bytes: Buffer, size = bytes.length) {
  const parts: StreamPart[] = [];
  const final = await readParts(pieces(bytes, size), (received) => {
    parts.push({ ...received, files: Buffer.from(received.files) });
  });
  return { parts, final };
}

const stream = (...pieces: (string | Buffer)[]) => Buffer.concat(pieces.map((piece) => Buffer.from(piece)));

t.test('parts come out as they went in, however the bytes are cut', async (t) => {
  const sent = [part(1), part(2), part(3)];
  const bytes = stream(PEER_PARTS_OPENING, ...sent.map(encodePart), encodeFinal(summary));
  for (const size of [1, 2, 7, 64, bytes.length]) {
    const { parts, final } = await read(bytes, size);
    t.same(
      parts.map((received) => ({ ...received, files: received.files.toString() })),
      sent.map((expected) => ({ ...expected, files: expected.files.toString() })),
      `pieces of ${size} bytes`,
    );
    t.same(final, summary);
  }
});

t.test('the next part waits for the reader', async (t) => {
  const bytes = stream(PEER_PARTS_OPENING, encodePart(part(1)), encodePart(part(2)), encodeFinal(summary));
  const seen: number[] = [];
  let release!: () => void;
  const reading = readParts(pieces(bytes, bytes.length), (received) => {
    seen.push(received.stats.actualMatchCount);
    if (seen.length === 1) return new Promise<void>((resolve) => (release = resolve));
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(seen, [1], 'the second part is not handed on before the first is taken');
  release();
  await reading;
  t.same(seen, [1, 2]);
});

t.test('a stream that is not one is an error, never a short answer', async (t) => {
  const whole = stream(PEER_PARTS_OPENING, encodePart(part(1)), encodeFinal(summary));
  const cases: [string, Buffer, RegExp][] = [
    ['cut before its final line', whole.subarray(0, whole.length - 5), /ended before their final line/],
    ['cut inside a part', whole.subarray(0, PEER_PARTS_OPENING.length + 40), /ended before their final line/],
    ['without the opening', stream(encodePart(part(1)), encodeFinal(summary)), /version 1/],
    ['of another version', stream('{"trawlParts":2}\n', encodeFinal(summary)), /version 1/],
    ['a line that is not JSON', stream(PEER_PARTS_OPENING, 'nonsense\n'), /not a JSON object/],
    ['a line of no kind', stream(PEER_PARTS_OPENING, '{"what":1}\n'), /none of a part/],
    ['a negative length', stream(PEER_PARTS_OPENING, '{"filesBytes":-1}\n'), /announces -1 bytes/],
    ['a length past the bound', stream(PEER_PARTS_OPENING, `{"filesBytes":${2 ** 40}}\n`), /announces/],
  ];
  for (const [name, bytes, message] of cases) await t.rejects(read(bytes), { name: 'Error', message }, name);
  const endless = stream(PEER_PARTS_OPENING, 'x'.repeat((16 << 20) + 1));
  await t.rejects(read(endless, 1 << 20), new PeerPartsError("a line of the peer's parts is over 16 MiB"), 'a line without end');
});

t.test("the peer's failure is passed on with its error", async (t) => {
  const failure = { statusCode: 500, errorCode: 'UNEXPECTED_ERROR' as const, message: 'boom' };
  const error = await read(stream(PEER_PARTS_OPENING, encodePart(part(1)), encodeFailure(failure))).catch((caught: unknown) => caught);
  t.type(error, PeerPartsError);
  t.same((error as PeerPartsError).failure, failure);
});
