/**
 * A node's files for another to merge with its own without decoding them (docs/cluster.md, "Search"): a line of
 * JSON, `{"trawlFiles":1,"parts":[…]}`, each part's ranks and counts (api/cluster-schemas.ts PeerFilesPart), then
 * each part's files' JSON back to back, `bytes` of each.
 */
import type { Static } from '@sinclair/typebox';
import { PeerFilesHead, type PeerFilesPart } from '../api/cluster-schemas.js';
import { validator } from '../api/validate.js';
import type { FilesPart } from '../search/response/rendered-files.js';

export const PEER_FILES_TYPE = 'application/x-trawl-files';

const head = validator(PeerFilesHead);
const NEWLINE = 0x0a;

/** `parts` as the bytes of the answer, in pieces; the files' JSON as they are, not copied. */
export function encodeFiles(parts: readonly FilesPart[]): Uint8Array[] {
  const heads: Static<typeof PeerFilesPart>[] = parts.map((part) => ({
    stats: part.stats,
    repositoryInfo: part.repositoryInfo,
    outcome: { stop: part.outcome.stop },
    keys: part.keys,
    repositoryIds: part.repositoryIds,
    ranges: part.ranges,
    foundRanges: part.foundRanges,
    contentBytes: part.contentBytes,
    ends: part.ends,
    cutByContent: part.cutByContent,
    bytes: part.json.reduce((sum, piece) => sum + piece.byteLength, 0),
  }));
  return [Buffer.from(`${JSON.stringify({ trawlFiles: 1, parts: heads })}\n`), ...parts.flatMap((part) => part.json)];
}

/** A node's answer that is not its files: cut short, malformed, or inconsistent. */
export class PeerFilesError extends Error {}

/** The parts of `answer` (encodeFiles), their files views of it; throws PeerFilesError when it is not such an answer. */
export function decodeFiles(answer: Buffer): FilesPart[] {
  const end = answer.indexOf(NEWLINE);
  if (end < 0) throw new PeerFilesError("the peer's files have no opening line");
  let opening: unknown;
  try {
    opening = JSON.parse(answer.toString('utf8', 0, end));
  } catch {
    throw new PeerFilesError("the opening line of the peer's files is not JSON");
  }
  if (!head.check.Check(opening)) throw new PeerFilesError("the opening line of the peer's files is not their parts");
  let at = end + 1;
  if (at + opening.parts.reduce((sum, part) => sum + part.bytes, 0) !== answer.length)
    throw new PeerFilesError("the peer's files are not as long as their parts say");
  return opening.parts.map(({ bytes, ...part }): FilesPart => {
    const files = part.keys.length;
    const lengths = [part.repositoryIds, part.ranges, part.foundRanges, part.contentBytes, part.ends].map((counts) => counts.length);
    if (lengths.some((length) => length !== files)) throw new PeerFilesError("a part of the peer's files counts its files differently");
    if (part.ends.some((fileEnd, file) => fileEnd <= (file === 0 ? 0 : part.ends[file - 1]!)) || (part.ends.at(-1) ?? 0) !== bytes)
      throw new PeerFilesError("a part of the peer's files has its files' ends out of order");
    const listed = new Set(part.repositoryInfo.map((info) => info.id));
    if (!part.repositoryIds.every((id) => listed.has(id))) throw new PeerFilesError("a part of the peer's files has a file of a repository it does not list");
    const json = answer.subarray(at, at + bytes);
    at += bytes;
    return { ...part, outcome: { stop: part.outcome.stop as FilesPart['outcome']['stop'] }, json: bytes === 0 ? [] : [json], shards: [], docs: [] };
  });
}
