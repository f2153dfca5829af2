/**
 * A split search's files rendered by the workers that found them and merged
 * in rank order on the front end (docs/design.md, "The search path"): each
 * task renders its own files best first, back to back, with each file's rank,
 * and the front end interleaves the tasks' lists as buildResponse ranks and
 * cuts one list, copying bytes; the one file `matches` cuts in the middle is
 * rendered again from its match.
 */
import type { RepositoryInfo, SearchRequest, SearchStats } from '../../api/types.js';
import type { Shard } from '../../index/shard-reader.js';
import type { RankKey, RenderedFiles } from '../../worker/search-protocol.js';
import {
  accumulateStats,
  combinedStop,
  compareLocations,
  contentBytesOf,
  countRanges,
  draftWithin,
  emptyStats,
  flushReason,
  RESPONSE_CONTENT_BYTES,
  writeFile,
  type FileDraft,
  type FileSink,
  type Found,
} from './build.js';
import { JsonWriter } from './json-writer.js';

/** What a task renders of its files (RenderedFiles without the task's outcome and stats); `shards` index the task's shards. */
export type FilesRendered = Pick<RenderedFiles, 'json' | 'ends' | 'keys' | 'repositoryIds' | 'ranges' | 'foundRanges' | 'shards' | 'docs' | 'contentBytes' | 'cutByContent'>;

/**
 * A FileSink rendering each file to JSON on its own, written from the start of `scratch` when given; its result's
 * bytes are its own, and its `shards` index `shards`.
 */
export function renderedFiles(shards: readonly Shard[], scratch?: Buffer): FileSink<FilesRendered> {
  const json = new JsonWriter(scratch);
  const shardIndex = new Map(shards.map((shard, index) => [shard, index]));
  const rendered: Omit<FilesRendered, 'json'> = { ends: [], keys: [], repositoryIds: [], ranges: [], foundRanges: [], shards: [], docs: [], contentBytes: [], cutByContent: false };
  return {
    add: (file, match) => {
      writeFile(json, file);
      rendered.ends.push(json.byteLength);
      rendered.keys.push({ score: match.score, repository: file.repository, path: file.path });
      rendered.repositoryIds.push(file.repositoryId);
      rendered.ranges.push(countRanges(file));
      rendered.foundRanges.push((match.path.length + match.content.length) / 2);
      rendered.shards.push(shardIndex.get(match.shard)!);
      rendered.docs.push(match.doc);
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

/** The match of `parts[part]`'s file `file` (its shard mapped on this thread), undefined when its shard cannot be mapped. */
export type MatchOf = (part: number, file: number) => Found | undefined;

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/**
 * `parts` (every task's files, of a query without `type:`) as buildResponse answers their matches, with stats
 * whose times are left to the caller (build.ts `timeStats`): the files interleaved by rank and cut at `matches`
 * ranges (the file cut in the middle drafted again from `matchOf`) and at the bound on content. Undefined when
 * that file's match cannot be had: the response is then built from the matches.
 */
export function mergeRenderedFiles(parts: readonly RenderedFiles[], request: SearchRequest, publicUrl: string, matchOf: MatchOf, maxContentBytes = RESPONSE_CONTENT_BYTES): MergedFiles | undefined {
  const stats = emptyStats();
  for (const part of parts) accumulateStats(stats, part.stats);
  const files: Uint8Array[] = [OPEN];
  const infoById = new Map(parts.flatMap((part) => part.repositoryInfo.map((info) => [info.id, info] as const)));
  const repositories = new Map<number, RepositoryInfo>();
  const next = parts.map(() => 0);
  let budget = request.matches;
  let contentBytes = 0;
  let actualMatchCount = 0;
  let tooLarge = false;
  let best = bestNext(parts, next);
  for (; best !== undefined && budget > 0; best = bestNext(parts, next)) {
    if (contentBytes > maxContentBytes) {
      tooLarge = true;
      break;
    }
    const part = parts[best]!;
    const file = next[best]!++;
    if (files.length > 1) files.push(COMMA);
    if (part.foundRanges[file]! <= budget) {
      files.push(part.json.subarray(file === 0 ? 0 : part.ends[file - 1], part.ends[file]));
      budget -= part.foundRanges[file]!;
      contentBytes += part.contentBytes[file]!;
      actualMatchCount += part.ranges[file]!;
    } else {
      const match = matchOf(best, file);
      if (match === undefined) return undefined;
      const draft = draftWithin(request, undefined, match, budget, publicUrl);
      files.push(jsonOf(draft.file));
      budget -= draft.counted;
      contentBytes += contentBytesOf(draft.file);
      actualMatchCount += countRanges(draft.file);
    }
    const id = part.repositoryIds[file]!;
    if (!repositories.has(id)) repositories.set(id, infoById.get(id)!);
  }
  // A part cut by the bound on content holds more than it, so the files its cut left out are left out here too.
  if (best === undefined && budget > 0 && parts.some((part) => part.cutByContent)) tooLarge = true;
  files.push(CLOSE);
  const stop = combinedStop(parts.map((part) => part.outcome.stop));
  stats.actualMatchCount = actualMatchCount;
  stats.filesSkipped = stop === 'complete' ? 0 : Math.max(0, stats.filesConsidered - stats.fileCount);
  const cut = stop !== 'complete' || stats.totalMatchCount > request.matches || tooLarge;
  stats.flushReason = flushReason(stop, cut);
  return { stats, files, repositoryInfo: [...repositories.values()], isSearchExhaustive: !cut };
}

function jsonOf(file: FileDraft): Buffer {
  const json = new JsonWriter(1024);
  writeFile(json, file);
  return Buffer.concat(json.pieces());
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
