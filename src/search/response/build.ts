/**
 * A search's response from what its shard groups found: files ranked best
 * first, cut at `matches` (and at a bound on content), with chunks,
 * positions, links and the 21 stats. Built on the front end from every
 * group's matches, or by the worker when one task was the whole search.
 */
import type { FileResult, RepositoryInfo, SearchRequest, SearchResponse, SearchStats } from '../../api/types.js';
import type { Shard } from '../../index/shard-reader.js';
import { byStart } from '../../index/ranges.js';
import type { QueryNode } from '../../query/ast.js';
import { resultTypeOf } from '../../query/plan.js';
import type { DocumentMatch, ShardsOutcome } from '../../worker/search-protocol.js';
import { compareRanks } from '../shard/rank.js';
import { browseUrl, externalUrl } from '../links.js';
import { chunkObjects, chunksContentBytes, layChunks, NO_CHUNKS, rangeObjects, writeChunks, writeRanges, type ChunksLayout } from './chunks.js';
import { Cut, RESPONSE_CONTENT_BYTES } from './cut.js';
import { JsonWriter } from './json-writer.js';
import { addCounters, combinedStop, emptyStats, settleEnd, timeStats } from './stats.js';
import { WordScratch } from './word-scratch.js';
import { codePointsBetween, POSITION_WORDS, RANGE_WORDS } from './positions.js';

/**
 * Lines of results (ranges × (1 + 2 × contextLines)) a split search's response, or a part of it, may hold to
 * be built on the front end's thread, where a small one costs less than one more task's round trip
 * (docs/design.md, "The search path"); a bigger one, or one with whole files, is built by a worker.
 */
const FRONT_END_RENDER_LINES = 1000;

/**
 * Whether a response (or part) of `ranges` match ranges is built on the front end (FRONT_END_RENDER_LINES);
 * type:file and type:repo ones always are (files without chunks; a type:repo repository's shards may be in several parts).
 */
export function buildsOnFrontEnd(request: SearchRequest, query: QueryNode, ranges: number): boolean {
  return resultTypeOf(query) !== undefined || (!request.whole && ranges * (1 + 2 * (request.contextLines ?? 0)) <= FRONT_END_RENDER_LINES);
}

/** buildResponse for the one outcome of `searchShards` over `shards`, which this thread has mapped. */
export function buildLocalResponse<T>(
  files: () => FileSink<T>,
  request: SearchRequest,
  query: QueryNode,
  outcome: ShardsOutcome,
  shards: readonly Shard[],
  publicUrl: string,
  timings: { started: number; planned: number; searched: number },
  maxContentBytes = RESPONSE_CONTENT_BYTES,
): Built<T> {
  return buildResponse(files, request, query, foundIn(outcome, shards), [outcome], publicUrl, timings, maxContentBytes);
}

/** The matches of one `searchShards` outcome with their shards (`shards[match.shard]`). */
export function foundIn(outcome: ShardsOutcome, shards: readonly Shard[]): Found[] {
  return outcome.matches.map((match) => ({ doc: match.doc, content: match.content, path: match.path, shard: shards[match.shard]!, score: match.score }));
}

/**
 * Where a response's file results go as they are made: kept as objects
 * (`collectFiles`), or rendered to JSON one by one (`renderFiles`), so that
 * no object per range is made for a response sent as JSON, and a file's
 * objects die young instead of surviving, millions of them for a broad
 * query, until the whole response is serialized (docs/design.md, "The hot
 * path's memory").
 */
export interface FileSink<T> {
  /** `file`, laid out from `match`: written or copied now, its layout being the thread's until the next file (word-scratch.ts). */
  add(file: FileDraft, match: Found): void;
  /** Told when the bound on content left files out. */
  leftOut?(): void;
  /** The files added, in order. */
  result(): T;
}

export function collectFiles(): FileSink<FileResult[]> {
  const files: FileResult[] = [];
  return { add: (file) => files.push(fileObject(file)), result: () => files };
}

/**
 * The files as the UTF-8 JSON of their array, in pieces (JsonWriter), the same as JSON.stringify of
 * collectFiles' result; written from the start of `scratch` when given (the result is then valid until it is reused).
 */
export function renderFiles(scratch?: Buffer): FileSink<Buffer[]> {
  const json = new JsonWriter(scratch);
  json.raw('[');
  let first = true;
  return {
    add: (file) => {
      if (!first) json.raw(',');
      first = false;
      writeFile(json, file);
    },
    result: () => {
      json.raw(']');
      return json.pieces();
    },
  };
}

/** A response whose files are what its sink made of them. */
export type Built<T> = Omit<SearchResponse, 'files'> & { files: T };

/** A built response's UTF-8 JSON in pieces: SearchResponse's members in its order, the rendered files as they are. */
export function responsePieces({ stats, files, repositoryInfo, isSearchExhaustive }: Built<readonly Uint8Array[]>): Uint8Array[] {
  return [Buffer.from(responseOpening(stats)), ...membersAfterStats(files, repositoryInfo, isSearchExhaustive)];
}

/** A built response's UTF-8 JSON in one buffer of its own. */
export function responseJson(response: Built<readonly Uint8Array[]>): Buffer {
  return Buffer.concat(responsePieces(response));
}

/** A response's JSON up to the members after `stats`. */
export function responseOpening(stats: SearchStats): string {
  return `{"stats":${JSON.stringify(stats)},`;
}

/** The members after `stats`, and the closing brace, in parts: what a worker renders (render-slots.ts). */
export function membersAfterStats(files: readonly Uint8Array[], repositoryInfo: readonly RepositoryInfo[], isSearchExhaustive: boolean): Uint8Array[] {
  return [FILES_MEMBER, ...files, Buffer.from(`,"repositoryInfo":${JSON.stringify(repositoryInfo)},"isSearchExhaustive":${isSearchExhaustive}}`)];
}

const FILES_MEMBER = Buffer.from('"files":');

/** A match with the shard it came from, as the front end holds it. */
export interface Found extends DocumentMatch {
  shard: Shard;
  score: number;
}

/**
 * The response to `request` from the outcomes of every shard group: files
 * ranked best first, holding at most `request.matches` match ranges in all.
 * `found` holds every outcome's matches, resolved to their shards.
 */
export function buildResponse<T>(
  files: () => FileSink<T>,
  request: SearchRequest,
  query: QueryNode,
  found: Found[],
  outcomes: readonly Omit<ShardsOutcome, 'matches'>[],
  publicUrl: string,
  timings: { started: number; planned: number; searched: number },
  maxContentBytes = RESPONSE_CONTENT_BYTES,
): Built<T> {
  const resultType = resultTypeOf(query);
  const ranked = resultType === 'repo' ? firstFilePerRepository(found) : found;
  ranked.sort((a, b) => compareRanks(a, b, repositoryOf, pathOf));
  const { response, intact, faultedShards } = assembleIntact(files, request, query, ranked, publicUrl, maxContentBytes);
  const stats = emptyStats();
  for (const outcome of outcomes) addCounters(stats, outcome.stats);
  stats.crashes += faultedShards;
  // type:repo: the ranges of the files standing for repositories, however many shards each task scanned.
  const totalRanges =
    resultType === 'repo'
      ? ranked.reduce((sum, match) => sum + (match.path.length + match.content.length) / 2, 0)
      : outcomes.reduce((sum, outcome) => sum + outcome.totalRanges, 0);
  const stop = combinedStop(outcomes.map((outcome) => outcome.stop));
  stats.actualMatchCount = response.matchRanges;
  stats.totalMatchCount = totalRanges;
  // What `matches` caps: files for type:file, repositories for type:repo, else match ranges.
  const foundCount = resultType ? intact.length : totalRanges;
  stats.fileCount = intact.length;
  timeStats(stats, timings);
  const cut = stop !== 'complete' || foundCount > request.matches || response.tooLarge;
  settleEnd(stats, stop, cut);
  return { stats, files: response.files.result(), repositoryInfo: response.repositoryInfo, isSearchExhaustive: !cut };
}

const repositoryOf = (match: Found) => match.shard.meta.repository.name;
const pathOf = (match: Found) => match.shard.path(match.doc);

/**
 * type:repo: each repository's first matching file in index order (shard, then document), so the answer
 * does not depend on how the repository's shards were split between tasks (each stops at its first file).
 */
function firstFilePerRepository(found: readonly Found[]): Found[] {
  const first = new Map<number, Found>();
  for (const match of found) {
    const id = match.shard.meta.repository.id;
    const kept = first.get(id);
    if (kept === undefined || match.shard.meta.shardIndex < kept.shard.meta.shardIndex || (match.shard === kept.shard && match.doc < kept.doc))
      first.set(id, match);
  }
  return [...first.values()];
}

/**
 * assemble over the matches of shards whose mapping did not fault while it read them (Shard.faulted),
 * and those matches: what it read from a faulted one may be zeros, so its files go and it counts as failed.
 */
function assembleIntact<T>(files: () => FileSink<T>, request: SearchRequest, query: QueryNode, found: Found[], publicUrl: string, maxContentBytes: number) {
  let kept = found;
  for (;;) {
    const response = assemble(files(), request, query, kept, publicUrl, maxContentBytes);
    // `some` first: the common case allocates nothing.
    if (!kept.some((match) => match.shard.faulted)) {
      const faultedShards = kept === found ? 0 : new Set(found.filter((match) => match.shard.faulted).map((match) => match.shard)).size;
      return { response, intact: kept, faultedShards };
    }
    kept = kept.filter((match) => !match.shard.faulted);
  }
}

/** Bytes of content a file result carries, as RESPONSE_CONTENT_BYTES counts them: its chunks', and the whole file's with `whole`. */
export function contentBytesOf(file: FileDraft): number {
  return (file.whole ? file.content.length : 0) + chunksContentBytes(file.chunks);
}

/** Match ranges in a file result (file name and chunks). */
export function countRanges(file: FileDraft): number {
  return (file.pathPositions.length + file.chunks.positions.length) / RANGE_WORDS;
}

/**
 * File results, best first, into `files`, holding at most `request.matches`
 * match ranges and `maxContentBytes` bytes of content in all
 * (`tooLarge` when the latter left files out); with how many match ranges
 * they hold.
 */
function assemble<T>(
  files: FileSink<T>,
  request: SearchRequest,
  query: QueryNode,
  found: Found[],
  publicUrl: string,
  maxContentBytes: number,
): { files: FileSink<T>; matchRanges: number; repositoryInfo: RepositoryInfo[]; tooLarge: boolean } {
  const resultType = resultTypeOf(query);
  const repositories = new Map<number, RepositoryInfo>();
  const cut = new Cut(request.matches, maxContentBytes);
  for (const match of found) {
    if (!cut.room()) break;
    const { file, counted } = draftWithin(request, resultType, match, cut.budget, publicUrl);
    cut.take(counted, countRanges(file), contentBytesOf(file));
    files.add(file, match);
    repositories.set(match.shard.meta.repository.id, repositoryInfo(match.shard));
  }
  if (cut.tooLarge) files.leftOut?.();
  return { files, matchRanges: cut.matchRanges, repositoryInfo: [...repositories.values()], tooLarge: cut.tooLarge };
}

/**
 * The file result of `match` within `budget` match ranges, and what it counts against `matches`. type:file and
 * type:repo return files without chunks (their content ranges are not returned), each counting as one; otherwise
 * file-name ranges come first, then content ranges in file order, within the budget.
 */
export function draftWithin(
  request: SearchRequest,
  resultType: ReturnType<typeof resultTypeOf>,
  match: Found,
  budget: number,
  publicUrl: string,
): { file: FileDraft; counted: number } {
  const pathRanges = resultType ? match.path : withinBudget(match.path, budget);
  const contentRanges = resultType ? [] : withinBudget(byStart(match.content), budget - pathRanges.length / 2);
  const file = fileDraft(request, match.shard, match.doc, pathRanges, contentRanges, publicUrl);
  if (request.ranked) file.score = match.score;
  return { file, counted: resultType ? 1 : (pathRanges.length + contentRanges.length) / 2 };
}

/** The first `budget` of the ranges (without a copy when they all fit). */
function withinBudget(flat: readonly number[], budget: number): readonly number[] {
  return flat.length <= 2 * budget ? flat : flat.slice(0, 2 * budget);
}

/** A file result laid out, before its sink makes it into objects or JSON: its ranges as flat positions (positions.ts). */
export interface FileDraft {
  path: string;
  /** The file name's match ranges, RANGE_WORDS words each; with `chunks`, valid until the next file is drafted (word-scratch.ts). */
  pathPositions: Uint32Array;
  webUrl: string;
  repository: string;
  repositoryId: number;
  language: string;
  /** The file's bytes, which its chunks are parts of. */
  content: Buffer;
  chunks: ChunksLayout;
  branches: string[];
  externalWebUrl?: string;
  /** Whether the result carries the whole content (the request's `whole`). */
  whole: boolean;
  /** The file's rank score, carried when the request is `ranked`. */
  score?: number;
}

const pathScratch = new WordScratch();

function fileDraft(
  request: SearchRequest,
  shard: Shard,
  doc: number,
  pathRanges: readonly number[],
  contentRanges: readonly number[],
  publicUrl: string,
): FileDraft {
  const repository = shard.meta.repository;
  const path = shard.path(doc);
  const pathBytes = shard.pathBytes(doc);
  const pathPositions = pathScratch.take((pathRanges.length / 2) * RANGE_WORDS);
  // A path is one line: line 1, columns in code points.
  pathRanges.forEach((offset, index) => {
    pathPositions[index * POSITION_WORDS] = offset;
    pathPositions[index * POSITION_WORDS + 1] = 1;
    pathPositions[index * POSITION_WORDS + 2] = 1 + codePointsBetween(pathBytes, 0, offset);
  });
  const branches = branchesOf(shard, doc);
  const bit = shard.meta.branches.findIndex((branch) => branch.name === branches[0]);
  const content = shard.content(doc);
  const draft: FileDraft = {
    path,
    pathPositions,
    webUrl: browseUrl(publicUrl, repository.name, branches[0] ?? 'HEAD', path),
    repository: repository.name,
    repositoryId: repository.id,
    language: shard.language(doc),
    content,
    chunks:
      contentRanges.length > 0
        ? layChunks({ content, ranges: contentRanges, contextLines: request.contextLines ?? 0, symbols: shard.symbolsOverlapping(doc, contentRanges) })
        : NO_CHUNKS,
    branches,
    whole: request.whole ?? false,
  };
  const external = externalUrl(repository, shard.meta.branches[Math.max(0, bit)]?.commit ?? 'HEAD', path);
  if (external) draft.externalWebUrl = external;
  return draft;
}

function fileObject(draft: FileDraft): FileResult {
  const result: FileResult = {
    fileName: { text: draft.path, matchRanges: rangeObjects(draft.pathPositions, 0, draft.pathPositions.length / RANGE_WORDS) },
    webUrl: draft.webUrl,
    repository: draft.repository,
    repositoryId: draft.repositoryId,
    language: draft.language,
    chunks: chunkObjects(draft.content, draft.chunks),
    branches: draft.branches,
  };
  if (draft.externalWebUrl !== undefined) result.externalWebUrl = draft.externalWebUrl;
  if (draft.whole) result.content = draft.content.toString('utf8');
  if (draft.score !== undefined) result.score = draft.score;
  return result;
}

/** Writes JSON.stringify(fileObject(draft)), members in the same order, without the objects. */
export function writeFile(json: JsonWriter, draft: FileDraft): void {
  json.raw('{"fileName":{"text":');
  json.string(draft.path);
  json.raw(',"matchRanges":');
  writeRanges(json, draft.pathPositions, 0, draft.pathPositions.length / RANGE_WORDS);
  json.raw('},"webUrl":');
  json.string(draft.webUrl);
  json.raw(',"repository":');
  json.string(draft.repository);
  json.raw(',"repositoryId":');
  json.integer(draft.repositoryId);
  json.raw(',"language":');
  json.string(draft.language);
  json.raw(',"chunks":');
  writeChunks(json, draft.content, draft.chunks);
  json.raw(',"branches":');
  json.value(draft.branches);
  if (draft.externalWebUrl !== undefined) {
    json.raw(',"externalWebUrl":');
    json.string(draft.externalWebUrl);
  }
  if (draft.whole) {
    json.raw(',"content":');
    json.utf8String(draft.content, 0, draft.content.length);
  }
  if (draft.score !== undefined) {
    json.raw(',"score":');
    json.value(draft.score);
  }
  json.raw('}');
}

function repositoryInfo(shard: Shard): RepositoryInfo {
  const { id, codeHostType, name, displayName, webUrl } = shard.meta.repository;
  const info: RepositoryInfo = { id, codeHostType, name };
  if (displayName !== undefined) info.displayName = displayName;
  if (webUrl !== undefined) info.webUrl = webUrl;
  return info;
}

/** Names of the indexed branches the document is on, in the shard's branch order. */
function branchesOf(shard: Shard, doc: number): string[] {
  const mask = shard.branchMask(doc);
  return shard.meta.branches.filter((_, bit) => (mask >> BigInt(bit)) & 1n).map((branch) => branch.name);
}
