/**
 * A search's response from what its shard groups found: files ranked best
 * first, cut at `matches` (and at a bound on content), with chunks,
 * positions, links and the 21 stats. Built on the front end from every
 * group's matches, or by the worker when one task was the whole search.
 */
import type { FileResult, FlushReason, RepositoryInfo, SearchRequest, SearchResponse, SearchStats } from '../../api/types.js';
import type { Shard } from '../../index/shard-reader.js';
import { byStart, rangePairs } from '../../index/ranges.js';
import type { QueryNode } from '../../query/ast.js';
import { resultTypeOf } from '../../query/plan.js';
import type { DocumentMatch, EvaluationStats, ShardsOutcome, StopReason } from '../../worker/search-protocol.js';
import { emptyEvaluationStats } from '../shard/evaluate.js';
import { browseUrl, externalUrl } from '../links.js';
import { buildChunks } from './chunks.js';
import { codePointsBetween } from './positions.js';

/**
 * Characters of file content (chunks, and whole files with `whole`) one
 * response may carry, whatever `matches` asks: past it the rest of the files
 * are left out and the response says so (`FLUSH_REASON_MAX_SIZE`, not
 * exhaustive). 100,000 matches with `whole` over the Linux corpus would
 * otherwise build a response of its whole 1.3 GB.
 */
export const RESPONSE_CONTENT_CHARACTERS = 64 << 20;

const NANOS_PER_MS = 1e6;

/** buildResponse for the one outcome of `searchShards` over `shards`, which this thread has mapped. */
export function buildLocalResponse<T>(
  files: () => FileSink<T>,
  request: SearchRequest,
  query: QueryNode,
  outcome: ShardsOutcome,
  shards: readonly Shard[],
  publicUrl: string,
  timings: { started: number; planned: number; searched: number },
  contentCharacters = RESPONSE_CONTENT_CHARACTERS,
): Built<T> {
  return buildResponse(files, request, query, foundIn(outcome, shards), [outcome], publicUrl, timings, contentCharacters);
}

/** The matches of one `searchShards` outcome with their shards (`shards[match.shard]`). */
export function foundIn(outcome: ShardsOutcome, shards: readonly Shard[]): Found[] {
  return outcome.matches.map((match) => ({ ...match, shard: shards[match.shard]! }));
}

/**
 * Where a response's file results go as they are made: kept as objects
 * (`collectFiles`), or rendered to JSON one by one (`renderFiles`), so that
 * each file's objects die young instead of surviving, millions of them for a
 * broad query, until the whole response is serialized (docs/design.md,
 * "The hot path's memory").
 */
export interface FileSink<T> {
  add(file: FileResult): void;
  /** The files added, in order. */
  result(): T;
}

export function collectFiles(): FileSink<FileResult[]> {
  const files: FileResult[] = [];
  return { add: (file) => files.push(file), result: () => files };
}

/** The files as the JSON text of their array, the same as JSON.stringify of it. */
export function renderFiles(): FileSink<string> {
  const parts: string[] = [];
  return { add: (file) => parts.push(JSON.stringify(file)), result: () => `[${parts.join(',')}]` };
}

/** A response whose files are what its sink made of them. */
export type Built<T> = Omit<SearchResponse, 'files'> & { files: T };

/** A built response's JSON text: SearchResponse's members in its order, the rendered files as they are. */
export function responseJson({ stats, files, repositoryInfo, isSearchExhaustive }: Built<string>): string {
  return `{"stats":${JSON.stringify(stats)},${membersAfterStats(files, repositoryInfo, isSearchExhaustive)}`;
}

/** The members after `stats`, and the closing brace: what a worker renders (render-slots.ts). */
export function membersAfterStats(files: string, repositoryInfo: readonly RepositoryInfo[], isSearchExhaustive: boolean): string {
  return `"files":${files},"repositoryInfo":${JSON.stringify(repositoryInfo)},"isSearchExhaustive":${isSearchExhaustive}}`;
}

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
  contentCharacters = RESPONSE_CONTENT_CHARACTERS,
): Built<T> {
  found.sort((a, b) => b.score - a.score || compareLocation(a, b));
  const { response, intact, faultedShards } = assembleIntact(files, request, query, found, publicUrl, contentCharacters);
  const stats = emptyStats();
  for (const outcome of outcomes) addStats(stats, outcome.stats);
  stats.crashes += faultedShards;
  const totalRanges = outcomes.reduce((sum, outcome) => sum + outcome.totalRanges, 0);
  const stop = combinedStop(outcomes.map((outcome) => outcome.stop));
  stats.actualMatchCount = response.matchRanges;
  stats.totalMatchCount = totalRanges;
  const resultType = resultTypeOf(query);
  // What `matches` caps: files for type:file, repositories for type:repo, else match ranges.
  const foundCount = resultType === 'file' ? intact.length : resultType === 'repo' ? new Set(intact.map((match) => match.shard.meta.repository.id)).size : totalRanges;
  stats.fileCount = intact.length;
  stats.filesSkipped = stop === 'complete' ? 0 : Math.max(0, stats.filesConsidered - intact.length);
  stats.matchTreeConstruction = Math.round((timings.planned - timings.started) * NANOS_PER_MS);
  stats.matchTreeSearch = Math.round((timings.searched - timings.planned) * NANOS_PER_MS);
  stats.duration = Math.round((performance.now() - timings.started) * NANOS_PER_MS);
  const cut = stop !== 'complete' || foundCount > request.matches || response.tooLarge;
  stats.flushReason = flushReason(stop, cut);
  return { stats, files: response.files.result(), repositoryInfo: response.repositoryInfo, isSearchExhaustive: !cut };
}

/**
 * assemble over the matches of shards whose mapping did not fault while it read them (Shard.faulted),
 * and those matches: what it read from a faulted one may be zeros, so its files go and it counts as failed.
 */
function assembleIntact<T>(files: () => FileSink<T>, request: SearchRequest, query: QueryNode, found: Found[], publicUrl: string, contentCharacters: number) {
  let kept = found;
  for (;;) {
    const response = assemble(files(), request, query, kept, publicUrl, contentCharacters);
    // `some` first: the common case allocates nothing.
    if (!kept.some((match) => match.shard.faulted)) {
      const faultedShards = kept === found ? 0 : new Set(found.filter((match) => match.shard.faulted).map((match) => match.shard)).size;
      return { response, intact: kept, faultedShards };
    }
    kept = kept.filter((match) => !match.shard.faulted);
  }
}

/** Match ranges in a file result (file name and chunks). */
function countRanges(file: FileResult): number {
  return file.fileName.matchRanges.length + file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0);
}

/** The most severe way any part stopped: a deadline or cancellation anywhere makes the whole a timeout. */
function combinedStop(stops: readonly StopReason[]): StopReason {
  for (const reason of ['cancelled', 'deadline', 'limit'] as const) if (stops.includes(reason)) return reason;
  return 'complete';
}

function addStats(total: EvaluationStats, part: EvaluationStats): void {
  for (const key of Object.keys(part) as (keyof EvaluationStats)[]) total[key] += part[key];
}

function flushReason(stop: StopReason, cut: boolean): FlushReason {
  if (stop === 'deadline' || stop === 'cancelled') return 'FLUSH_REASON_TIMER_EXPIRED';
  return cut ? 'FLUSH_REASON_MAX_SIZE' : 'FLUSH_REASON_FINAL_FLUSH';
}

function compareLocation(a: Found, b: Found): number {
  const byRepository = a.shard.meta.repository.name.localeCompare(b.shard.meta.repository.name);
  return byRepository || a.shard.path(a.doc).localeCompare(b.shard.path(b.doc));
}

/**
 * File results, best first, into `files`, holding at most `request.matches`
 * match ranges and `contentCharacters` characters of content in all
 * (`tooLarge` when the latter left files out); with how many match ranges
 * they hold.
 */
function assemble<T>(
  files: FileSink<T>,
  request: SearchRequest,
  query: QueryNode,
  found: Found[],
  publicUrl: string,
  contentCharacters: number,
): { files: FileSink<T>; matchRanges: number; repositoryInfo: RepositoryInfo[]; tooLarge: boolean } {
  const resultType = resultTypeOf(query);
  let matchRanges = 0;
  const repositories = new Map<number, RepositoryInfo>();
  const seenRepositories = new Set<number>();
  let budget = request.matches;
  let characters = 0;
  for (const match of found) {
    if (budget <= 0) break;
    if (characters > contentCharacters) return { files, matchRanges, repositoryInfo: [...repositories.values()], tooLarge: true };
    const { shard } = match;
    const repository = shard.meta.repository;
    if (resultType === 'repo') {
      if (seenRepositories.has(repository.id)) continue;
      seenRepositories.add(repository.id);
    }
    // type:file and type:repo return files without chunks (their content ranges are not returned), each counting as one.
    // Otherwise keep file-name ranges first, then content ranges in file order, within the budget.
    const pathRanges = resultType ? match.path : withinBudget(match.path, budget);
    const contentRanges = resultType ? [] : withinBudget(byStart(match.content), budget - pathRanges.length / 2);
    budget -= resultType ? 1 : (pathRanges.length + contentRanges.length) / 2;
    const file = fileResult(request, shard, match.doc, pathRanges, contentRanges, publicUrl);
    characters += (file.content?.length ?? 0) + file.chunks.reduce((sum, chunk) => sum + chunk.content.length, 0);
    matchRanges += countRanges(file);
    files.add(file);
    repositories.set(repository.id, repositoryInfo(shard));
  }
  return { files, matchRanges, repositoryInfo: [...repositories.values()], tooLarge: false };
}

/** The first `budget` of the ranges (without a copy when they all fit). */
function withinBudget(flat: readonly number[], budget: number): readonly number[] {
  return flat.length <= 2 * budget ? flat : flat.slice(0, 2 * budget);
}

function fileResult(request: SearchRequest, shard: Shard, doc: number, pathRanges: readonly number[], contentRanges: readonly number[], publicUrl: string): FileResult {
  const repository = shard.meta.repository;
  const path = shard.path(doc);
  const pathBytes = shard.pathBytes(doc);
  const branches = branchesOf(shard, doc);
  const bit = shard.meta.branches.findIndex((branch) => branch.name === branches[0]);
  const content = shard.content(doc);
  const result: FileResult = {
    fileName: { text: path, matchRanges: rangePairs(pathRanges).map(([start, end]) => ({ start: pathPosition(pathBytes, start), end: pathPosition(pathBytes, end) })) },
    webUrl: browseUrl(publicUrl, repository.name, branches[0] ?? 'HEAD', path),
    repository: repository.name,
    repositoryId: repository.id,
    language: shard.language(doc),
    chunks:
      contentRanges.length > 0
        ? buildChunks({ content, ranges: contentRanges, contextLines: request.contextLines ?? 0, symbols: shard.symbolsOverlapping(doc, contentRanges) })
        : [],
    branches,
  };
  const external = externalUrl(repository, shard.meta.branches[Math.max(0, bit)]?.commit ?? 'HEAD', path);
  if (external) result.externalWebUrl = external;
  if (request.whole) result.content = content.toString('utf8');
  return result;
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

/** A position inside a path: line 1, column in code points. */
function pathPosition(path: Buffer, byteOffset: number) {
  return { byteOffset, lineNumber: 1, column: 1 + codePointsBetween(path, 0, byteOffset) };
}

/** What a response holds of what `matches` caps: files for type:file and type:repo results, else match ranges. */
export function resultsCounted(query: QueryNode, response: SearchResponse): number {
  return resultTypeOf(query) ? response.files.length : response.stats.actualMatchCount;
}

/** Object.assign, not `{ ...emptyEvaluationStats(), … }`: docs/design.md, "The hot path's memory". */
function emptyStats(): SearchStats {
  return Object.assign(emptyEvaluationStats(), {
    actualMatchCount: 0,
    totalMatchCount: 0,
    duration: 0,
    fileCount: 0,
    filesSkipped: 0,
    wait: 0,
    matchTreeConstruction: 0,
    matchTreeSearch: 0,
    flushReason: 'FLUSH_REASON_FINAL_FLUSH' as const,
  });
}
