/**
 * An exhaustive search's parts as one node streams them to another (docs/cluster.md, "Exhaustive searches"). The
 * stream opens with the line `{"trawlParts":1}`; each part is a line of JSON (the part's members but `files`, and
 * `filesBytes`) followed by that many bytes, its files' JSON array, relayed by the reader without being decoded;
 * the stream ends with a line `{"final":StreamSummary}`, or `{"error":ErrorBody}` when the search failed.
 */
import type { ErrorBody } from '../api/errors.js';
import type { StreamPart, StreamSummary } from '../search/sinks.js';

export const PEER_PARTS_TYPE = 'application/x-trawl-parts';
export const PEER_PARTS_OPENING = '{"trawlParts":1}\n';

/** A part's line is at most this long (its stats and repositories; the files come after it). */
const MAX_LINE_BYTES = 16 << 20;
/** A part's files are at most this many bytes (parts hold a few MiB: search/search-run.ts `partRanges`). */
const MAX_FILES_BYTES = 256 << 20;
const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from('\n');

export function encodePart({ files, ...rest }: StreamPart): Buffer {
  return Buffer.concat([Buffer.from(JSON.stringify({ ...rest, filesBytes: files.length })), NEWLINE_BYTES, files]);
}

export const encodeFinal = (summary: StreamSummary): string => `${JSON.stringify({ final: summary })}\n`;

export const encodeFailure = (error: ErrorBody): string => `${JSON.stringify({ error })}\n`;

/** A stream of parts that is not one: cut short, malformed, or over a bound; or the peer's search failed (`failure`). */
export class PeerPartsError extends Error {
  constructor(
    message: string,
    readonly failure?: ErrorBody,
  ) {
    super(message);
  }
}

type Line = { trawlParts: number } | { final: StreamSummary } | { error: ErrorBody } | (Omit<StreamPart, 'files'> & { filesBytes: number });

/**
 * The parts of the stream `chunks`, each handed to `onPart` as it is complete; the next is read once what
 * `onPart` returned resolves (the reader's pace, and through TCP the peer's). Resolves with the final summary.
 */
export async function readParts(chunks: AsyncIterable<Buffer>, onPart: (part: StreamPart) => Promise<void> | void): Promise<StreamSummary> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let opened = false;
  let header: (Omit<StreamPart, 'files'> & { filesBytes: number }) | undefined; // a part whose files are awaited
  for await (const chunk of chunks) {
    held.push(chunk);
    heldBytes += chunk.length;
    for (;;) {
      if (header) {
        if (heldBytes < header.filesBytes) break;
        const bytes = held.length === 1 ? held[0]! : Buffer.concat(held, heldBytes);
        const { filesBytes, ...part } = header;
        header = undefined;
        held = [bytes.subarray(filesBytes)];
        heldBytes -= filesBytes;
        await onPart({ ...part, files: bytes.subarray(0, filesBytes) });
        continue;
      }
      const last = held[held.length - 1]!;
      const end = last.indexOf(NEWLINE);
      if (end < 0) {
        if (heldBytes > MAX_LINE_BYTES) throw new PeerPartsError(`a line of the peer's parts is over ${MAX_LINE_BYTES >> 20} MiB`);
        break;
      }
      const lineBytes = heldBytes - last.length + end;
      const line = parseLine(Buffer.concat([...held.slice(0, -1), last.subarray(0, end)], lineBytes));
      held = [last.subarray(end + 1)];
      heldBytes -= lineBytes + 1;
      if (!opened) {
        if (!('trawlParts' in line) || line.trawlParts !== 1) throw new PeerPartsError('the peer did not answer with parts of version 1');
        opened = true;
      } else if ('final' in line) {
        return line.final;
      } else if ('error' in line) {
        throw new PeerPartsError(`the peer's search failed: ${line.error.message}`, line.error);
      } else if ('filesBytes' in line) {
        if (!Number.isSafeInteger(line.filesBytes) || line.filesBytes < 0 || line.filesBytes > MAX_FILES_BYTES)
          throw new PeerPartsError(`a part of the peer's announces ${line.filesBytes} bytes of files`);
        header = line;
      } else {
        throw new PeerPartsError("a line of the peer's parts is none of a part, its final line or an error");
      }
    }
  }
  throw new PeerPartsError("the peer's parts ended before their final line");
}

function parseLine(bytes: Buffer): Line {
  try {
    const line: unknown = JSON.parse(bytes.toString());
    if (typeof line === 'object' && line !== null) return line as Line;
  } catch {
    // reported below
  }
  throw new PeerPartsError("a line of the peer's parts is not a JSON object");
}
