/**
 * A split search's files rendered by the workers that found them and merged
 * in rank order on the front end (docs/design.md, "The search path"): each
 * task renders its own files best first, back to back, with each file's rank,
 * and the front end interleaves the tasks' lists as buildResponse ranks one
 * list, copying bytes. Merged so only when no file is cut at `matches`: a file
 * cut in the middle is rendered again from its matches.
 */
import type { RepositoryInfo, SearchRequest, SearchStats } from '../../api/types.js';
import type { RankKey, RenderedFiles } from '../../worker/search-protocol.js';
import { accumulateStats, compareLocations, contentBytesOf, countRanges, emptyStats, RESPONSE_CONTENT_BYTES, writeFile, type FileSink } from './build.js';
import { JsonWriter } from './json-writer.js';

/** What a task renders of its files (RenderedFiles without the task's outcome and stats). */
export type FilesRendered = Pick<RenderedFiles, 'json' | 'ends' | 'keys' | 'repositoryIds' | 'ranges' | 'contentBytes' | 'cutByContent'>;

/** A FileSink rendering each file to JSON on its own, written from the start of `scratch` when given; its result's bytes are its own. */
export function renderedFiles(scratch?: Buffer): FileSink<FilesRendered> {
  const json = new JsonWriter(scratch);
  const rendered: Omit<FilesRendered, 'json'> = { ends: [], keys: [], repositoryIds: [], ranges: [], contentBytes: [], cutByContent: false };
  return {
    add: (file, match) => {
      writeFile(json, file);
      rendered.ends.push(json.byteLength);
      rendered.keys.push({ score: match.score, repository: file.repository, path: file.path });
      rendered.repositoryIds.push(file.repositoryId);
      rendered.ranges.push(countRanges(file));
      rendered.contentBytes.push(contentBytesOf(file));
    },
    leftOut: () => {
      rendered.cutByContent = true;
    },
    result: () => {
      // Memory of its own (it is handed over), not zeroed (all of it is written).
      const bytes = Buffer.allocUnsafeSlow(json.byteLength);
      let at = 0;
      for (const piece of json.pieces()) {
        bytes.set(piece, at);
        at += piece.length;
      }
      return { json: bytes, ...rendered };
    },
  };
}

/** The merged files of a search: its response's members after `stats`, and the stats but for their times. */
export interface MergedFiles {
  stats: SearchStats;
  /** The files' array as UTF-8 JSON, in pieces. */
  files: Uint8Array[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/**
 * `parts` (every task's files, of a query without `type:`) as buildResponse would answer their matches, with stats whose times are
 * left to the caller (build.ts `timeStats`); undefined when `matches` cuts them (their ranges are more):
 * the response is then built from the matches. Files past the bound on content are left out, as there.
 */
export function mergeRenderedFiles(parts: readonly RenderedFiles[], request: SearchRequest, maxContentBytes = RESPONSE_CONTENT_BYTES): MergedFiles | undefined {
  const totalRanges = parts.reduce((sum, part) => sum + part.outcome.totalRanges, 0);
  if (totalRanges > request.matches || parts.some((part) => part.outcome.stop !== 'complete')) return undefined;
  const stats = emptyStats();
  for (const part of parts) accumulateStats(stats, part.stats);
  const files: Uint8Array[] = [OPEN];
  const repositories = new Map<number, RepositoryInfo>();
  const next = parts.map(() => 0);
  let contentBytes = 0;
  let actualMatchCount = 0;
  // A part cut by the bound on content holds more than it, so the merged files are cut by it at or before that part's cut.
  let tooLarge = parts.some((part) => part.cutByContent);
  for (let best = bestNext(parts, next); best !== undefined; best = bestNext(parts, next)) {
    if (contentBytes > maxContentBytes) {
      tooLarge = true;
      break;
    }
    const part = parts[best]!;
    const file = next[best]!++;
    if (files.length > 1) files.push(COMMA);
    files.push(part.json.subarray(file === 0 ? 0 : part.ends[file - 1], part.ends[file]));
    contentBytes += part.contentBytes[file]!;
    actualMatchCount += part.ranges[file]!;
    const id = part.repositoryIds[file]!;
    if (!repositories.has(id)) repositories.set(id, part.repositoryInfo.find((info) => info.id === id)!);
  }
  files.push(CLOSE);
  stats.actualMatchCount = actualMatchCount;
  stats.flushReason = tooLarge ? 'FLUSH_REASON_MAX_SIZE' : 'FLUSH_REASON_FINAL_FLUSH';
  return { stats, files, repositoryInfo: [...repositories.values()], isSearchExhaustive: !tooLarge };
}

/** The part whose next file ranks first (the lower part on a tie); undefined when every part's files are taken. */
function bestNext(parts: readonly RenderedFiles[], next: readonly number[]): number | undefined {
  let best: number | undefined;
  for (let index = 0; index < parts.length; index++) {
    const key = parts[index]!.keys[next[index]!];
    if (key !== undefined && (best === undefined || compareRanks(key, parts[best]!.keys[next[best]!]!) < 0)) best = index;
  }
  return best;
}

function compareRanks(a: RankKey, b: RankKey): number {
  return b.score - a.score || compareLocations(a.repository, a.path, b.repository, b.path);
}
