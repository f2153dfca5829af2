/**
 * A split search's files rendered by the workers that found them and merged
 * in rank order on the front end (docs/design.md, "The search path"): each
 * task renders its own files best first, back to back, with each file's rank,
 * and the front end interleaves the tasks' lists as buildResponse ranks and
 * cuts one list, as views of the tasks' bytes (no copy: a task's files that
 * stay neighbours, commas included, stay one view); the one file `matches`
 * cuts in the middle is rendered again from its match. A cluster's front end
 * merges the nodes' files so too (docs/cluster.md, "Search"), a file of
 * another node's cut from its JSON.
 */
import type { FileResult, RepositoryInfo, SearchRequest, SearchStats } from '../../api/types.js';
import { matchRangesOf, withinRanges } from '../../api/ranked-files.js';
import type { Shard } from '../../index/shard-reader.js';
import type { RankKey, RenderedFiles, ShardsOutcome } from '../../worker/search-protocol.js';
import { compareRanks } from '../shard/rank.js';
import { contentBytesOf, countRanges, draftWithin, writeFile, type FileDraft, type FileSink, type Found } from './build.js';
import { Cut, RESPONSE_CONTENT_BYTES } from './cut.js';
import { JsonWriter } from './json-writer.js';
import { accumulateStats, combinedStop, emptyStats, settleEnd } from './stats.js';

/** What a task renders of its files (RenderedFiles without the task's outcome and stats); `shards` index the task's shards. */
export type FilesRendered = Pick<
  RenderedFiles,
  'json' | 'ends' | 'keys' | 'repositoryIds' | 'ranges' | 'foundRanges' | 'shards' | 'docs' | 'contentBytes' | 'cutByContent'
>;

/**
 * Files to merge: a task's (RenderedFiles), or a node's for another to merge (cluster/peer-files.ts), whose
 * `shards` and `docs` may be empty (its files are then drafted again from their JSON: `redraftJson`).
 */
export type FilesPart = FilesRendered & Pick<RenderedFiles, 'stats' | 'repositoryInfo'> & { outcome: Pick<ShardsOutcome, 'stop'> };

/**
 * A FileSink rendering each file to JSON, every file after the first with its comma before it, written from the
 * start of `scratch` when given; its result's bytes are its own, and its `shards` index `shards` (left empty without them).
 */
export function renderedFiles(shards: readonly Shard[] | undefined, scratch?: Buffer): FileSink<FilesRendered> {
  const json = new JsonWriter(scratch);
  const shardIndex = shards && new Map(shards.map((shard, index) => [shard, index]));
  const rendered: Omit<FilesRendered, 'json'> = {
    ends: [],
    keys: [],
    repositoryIds: [],
    ranges: [],
    foundRanges: [],
    shards: [],
    docs: [],
    contentBytes: [],
    cutByContent: false,
  };
  return {
    add: (file, match) => {
      if (rendered.ends.length > 0) json.raw(',');
      writeFile(json, file);
      rendered.ends.push(json.byteLength);
      rendered.keys.push({ score: match.score, repository: file.repository, path: file.path });
      rendered.repositoryIds.push(file.repositoryId);
      rendered.ranges.push(countRanges(file));
      rendered.foundRanges.push((match.path.length + match.content.length) / 2);
      if (shardIndex) {
        rendered.shards.push(shardIndex.get(match.shard)!);
        rendered.docs.push(match.doc);
      }
      rendered.contentBytes.push(contentBytesOf(file));
    },
    leftOut: () => {
      rendered.cutByContent = true;
    },
    result: () => {
      // The writer's pieces are memory of their own, handed over as they are; but for one in `scratch`, copied.
      const pieces = json.pieces().filter((piece) => piece.byteLength > 0);
      return Object.assign(rendered, { json: pieces.map((piece) => (piece.buffer === scratch?.buffer ? ownCopy(piece) : piece)) });
    },
  };
}

/** A copy of `bytes` in memory of its own (not Buffer's pool: it is handed over); not zeroed, all of it is written. */
function ownCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** The merged files of a search: its response's members after `stats`, and the stats but for their times. */
export interface MergedFiles {
  stats: SearchStats;
  /** The files' array as UTF-8 JSON, in pieces: views of the parts' bytes, and of the files drafted again. */
  files: Uint8Array[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/** The match of `parts[part]`'s file `file` (its shard mapped on this thread), undefined when its shard cannot be mapped. */
export type MatchOf = (part: number, file: number) => Found | undefined;

/** A file drafted again within fewer results: its JSON, the results it counts against `matches`, its ranges and content bytes. */
export interface Redrafted {
  json: Uint8Array;
  counted: number;
  ranges: number;
  contentBytes: number;
}

/** `parts[part]`'s file `file` within `budget` results; undefined when it cannot be drafted again. */
export type Redraft = (part: number, file: number, budget: number) => Redrafted | undefined;

/** A Redraft from the files' matches (`matchOf`), drafted as buildResponse drafts them: the answer is a single node's. */
export function redraftFrom(matchOf: MatchOf, request: SearchRequest, publicUrl: string): Redraft {
  return (part, file, budget) => {
    const match = matchOf(part, file);
    if (match === undefined) return undefined;
    const draft = draftWithin(request, undefined, match, budget, publicUrl);
    return { json: jsonOf(draft.file), counted: draft.counted, ranges: countRanges(draft.file), contentBytes: contentBytesOf(draft.file) };
  };
}

/**
 * `part`'s file `file` within `budget` ranges, from its JSON (api/ranked-files.ts `withinRanges`: its chunks keep
 * their lines), for a part whose matches are on another node.
 */
export function redraftJson(part: FilesPart, file: number, budget: number): Redrafted {
  const bytes = new Views(new Uint8Array(0));
  addBytes(bytes, part.json, startsOf(part.json), file === 0 ? 0 : part.ends[file - 1]! + 1, part.ends[file]!); // after its comma
  const cut = withinRanges(JSON.parse(Buffer.concat(bytes.views).toString()) as FileResult, budget);
  const ranges = matchRangesOf(cut);
  let contentBytes = cut.content === undefined ? 0 : Buffer.byteLength(cut.content);
  for (const chunk of cut.chunks) contentBytes += Buffer.byteLength(chunk.content);
  return { json: Buffer.from(JSON.stringify(cut)), counted: ranges, ranges, contentBytes };
}

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/**
 * `parts` (every task's files, of a query without `type:`) as buildResponse answers their matches, with stats
 * whose times are left to the caller (build.ts `timeStats`): the files interleaved by rank and cut at `matches`
 * ranges (the file cut in the middle drafted again by `redraft`) and at the bound on content. Undefined when
 * that file cannot be drafted again: the response is then built from the matches.
 */
export function mergeRenderedFiles(
  parts: readonly FilesPart[],
  request: SearchRequest,
  redraft: Redraft,
  maxContentBytes = RESPONSE_CONTENT_BYTES,
): MergedFiles | undefined {
  const stats = emptyStats();
  for (const part of parts) accumulateStats(stats, part.stats);
  const files = new Views(OPEN);
  const infoById = new Map(parts.flatMap((part) => part.repositoryInfo.map((info) => [info.id, info] as const)));
  const repositories = new Map<number, RepositoryInfo>();
  const next = parts.map(() => 0);
  const pieceStarts = parts.map((part) => startsOf(part.json));
  const cut = new Cut(request.matches, maxContentBytes);
  let filesTaken = 0;
  let best = bestNext(parts, next);
  for (; best !== undefined && cut.room(); best = bestNext(parts, next)) {
    const part = parts[best]!;
    const file = next[best]!++;
    const first = filesTaken++ === 0;
    if (part.foundRanges[file]! <= cut.budget) {
      // A part's file after its first starts with its comma: skipped when the file opens the array.
      if (file === 0 && !first) files.add(COMMA);
      addBytes(files, part.json, pieceStarts[best]!, file === 0 ? 0 : part.ends[file - 1]! + (first ? 1 : 0), part.ends[file]!);
      cut.take(part.foundRanges[file]!, part.ranges[file]!, part.contentBytes[file]!);
    } else {
      const drafted = redraft(best, file, cut.budget);
      if (drafted === undefined) return undefined;
      if (!first) files.add(COMMA);
      files.add(drafted.json);
      cut.take(drafted.counted, drafted.ranges, drafted.contentBytes);
    }
    const id = part.repositoryIds[file]!;
    if (!repositories.has(id)) repositories.set(id, infoById.get(id)!);
  }
  // A part cut by the bound on content holds more than it, so the files its cut left out are left out here too.
  const tooLarge = cut.tooLarge || (best === undefined && cut.budget > 0 && parts.some((part) => part.cutByContent));
  files.add(CLOSE);
  const stop = combinedStop(parts.map((part) => part.outcome.stop));
  stats.actualMatchCount = cut.matchRanges;
  const cutShort = stop !== 'complete' || stats.totalMatchCount > request.matches || tooLarge;
  settleEnd(stats, stop, cutShort);
  return { stats, files: files.views, repositoryInfo: [...repositories.values()], isSearchExhaustive: !cutShort };
}

/** Where each of `pieces` starts in their bytes back to back. */
function startsOf(pieces: readonly Uint8Array[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const piece of pieces) {
    starts.push(at);
    at += piece.byteLength;
  }
  return starts;
}

/** Bytes `from` to `to` of `pieces` back to back (`starts` their starts, none empty), added to `views` as views of them. */
function addBytes(views: Views, pieces: readonly Uint8Array[], starts: readonly number[], from: number, to: number): void {
  let index = lastAtOrBelow(starts, from);
  for (let at = from; at < to; index++) {
    const end = Math.min(to, starts[index]! + pieces[index]!.byteLength);
    views.add(pieces[index]!.subarray(at - starts[index]!, end - starts[index]!));
    at = end;
  }
}

/** The index of the last of `sorted` (ascending, its first 0) at or below `value`. */
function lastAtOrBelow(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (sorted[middle]! <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** Byte views in order, a view that continues the last one's bytes in memory joined to it. */
class Views {
  readonly views: Uint8Array[];

  constructor(first: Uint8Array) {
    this.views = [first];
  }

  add(view: Uint8Array): void {
    const last = this.views.at(-1)!;
    if (last.buffer === view.buffer && last.byteOffset + last.byteLength === view.byteOffset) {
      this.views[this.views.length - 1] = new Uint8Array(last.buffer, last.byteOffset, last.byteLength + view.byteLength);
    } else {
      this.views.push(view);
    }
  }
}

function jsonOf(file: FileDraft): Buffer {
  const json = new JsonWriter(1024);
  writeFile(json, file);
  return Buffer.concat(json.pieces());
}

/** The part whose next file ranks first (the lower part on a tie); undefined when every part's files are taken. */
function bestNext(parts: readonly FilesPart[], next: readonly number[]): number | undefined {
  let best: number | undefined;
  for (let index = 0; index < parts.length; index++) {
    const key = parts[index]!.keys[next[index]!];
    if (key !== undefined && (best === undefined || compareKeys(key, parts[best]!.keys[next[best]!]!) < 0)) best = index;
  }
  return best;
}

function compareKeys(a: RankKey, b: RankKey): number {
  return compareRanks(a, b, repositoryOfKey, pathOfKey);
}

const repositoryOfKey = (key: RankKey) => key.repository;
const pathOfKey = (key: RankKey) => key.path;
