/**
 * One search over a set of shards, in three steps that the daemon runs in
 * different places: `planSearch` (parse, check contexts: the front end, which
 * has a worker compile the query's regexes: `parseSearch`),
 * `searchShards` (evaluate shard by shard until enough match ranges are
 * found: a worker, per shard group) and `buildResponse` (rank every group's
 * files, cut at `matches` ranges, build chunks, positions, links and the 21
 * stats: the front end). `search` runs all three in process.
 */
import type { FileResult, FlushReason, RepositoryInfo, SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { Shard } from '../index/shard-reader.js';
import { ShardFormatError } from '../index/errors.js';
import type { QueryNode } from '../query/ast.js';
import { parseQuery, parseQueryTerms, type RegexTerm } from '../query/parser.js';
import { buildChunks } from './chunks.js';
import { browseUrl, externalUrl } from './links.js';
import { codePointsBetween } from './positions.js';
import { scoreFile } from './rank.js';
import { byStart, rangePairs } from '../index/ranges.js';
import { checkContexts, CompiledPatterns, searchShard, type DocumentMatch, type StopReason } from './shard-search.js';
import { addRangesFound, createSignal, isSearchCancelled, rangesFound, type SearchSignal } from './signal.js';

export interface SearchEnvironment {
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  /** A search stops after this long and returns what it found (default 10 s). */
  timeBudgetMs: number;
  /** Cancels the search when set (client gone). */
  signal?: SearchSignal;
  /** The bound on a response's file content (RESPONSE_CONTENT_CHARACTERS unless set). */
  responseContentCharacters?: number;
}

/**
 * Characters of file content (chunks, and whole files with `whole`) one
 * response may carry, whatever `matches` asks: past it the rest of the files
 * are left out and the response says so (`FLUSH_REASON_MAX_SIZE`, not
 * exhaustive). 100,000 matches with `whole` over the Linux corpus would
 * otherwise build a response of its whole 1.3 GB.
 */
export const RESPONSE_CONTENT_CHARACTERS = 64 << 20;

/** A matching document of `shards[shard]`, with its rank score. */
export interface ScoredMatch extends DocumentMatch {
  shard: number;
  score: number;
}

/** The counters of SearchStats that evaluation produces; the rest are computed by buildResponse. */
export type EvaluationStats = Pick<
  SearchStats,
  | 'crashes'
  | 'shardFilesConsidered'
  | 'shardsScanned'
  | 'shardsSkipped'
  | 'shardsSkippedFilter'
  | 'filesConsidered'
  | 'filesLoaded'
  | 'contentBytesLoaded'
  | 'indexBytesLoaded'
  | 'ngramLookups'
  | 'ngramMatches'
  | 'regexpsConsidered'
>;

export interface ShardsOutcome {
  matches: ScoredMatch[];
  stats: EvaluationStats;
  /** Match ranges found (content and file name). */
  totalRanges: number;
  stop: StopReason;
}

export interface SearchLimits {
  /** Stop once this many match ranges are found here and elsewhere (`matches + 1`). */
  wanted: number;
  /** performance.now() value after which the search stops. */
  deadline: number;
  signal: SearchSignal;
}

const NANOS_PER_MS = 1e6;

/**
 * The query of a request. Throws QueryParseError for a query that does not
 * parse and UnknownSearchContextError for an unknown `context:`.
 */
export function planSearch(request: SearchRequest, contexts: Record<string, SearchContextConfig>): QueryNode {
  const query = parseQuery(request.query, parseOptions(request));
  checkContexts(query, contexts);
  return query;
}

/** planSearch but for the regexes, which it leaves for the caller to have compiled (parser.ts, firstInvalidRegex). */
export function parseSearch(request: SearchRequest, contexts: Record<string, SearchContextConfig>): { node: QueryNode; regexTerms: RegexTerm[] } {
  const parsed = parseQueryTerms(request.query, parseOptions(request));
  checkContexts(parsed.node, contexts);
  return parsed;
}

const parseOptions = (request: SearchRequest) => ({ regex: request.isRegexEnabled ?? false, caseSensitive: request.isCaseSensitivityEnabled ?? false });

/** Runs `request` over `shards` in process (the CLI, the benchmarks); throws what planSearch throws. */
export function search(request: SearchRequest, shards: readonly Shard[], environment: SearchEnvironment): SearchResponse {
  const started = performance.now();
  const query = planSearch(request, environment.contexts);
  const planned = performance.now();
  const limits = { wanted: request.matches + 1, deadline: started + environment.timeBudgetMs, signal: environment.signal ?? createSignal() };
  const outcome = searchShards(query, shards, environment.contexts, limits);
  return buildLocalResponse(request, query, outcome, shards, environment.publicUrl, { started, planned, searched: performance.now() }, environment.responseContentCharacters);
}

/** buildResponse for the one outcome of `searchShards` over `shards`, which this thread has mapped. */
export function buildLocalResponse(
  request: SearchRequest,
  query: QueryNode,
  outcome: ShardsOutcome,
  shards: readonly Shard[],
  publicUrl: string,
  timings: { started: number; planned: number; searched: number },
  contentCharacters = RESPONSE_CONTENT_CHARACTERS,
): SearchResponse {
  const found = outcome.matches.map((match) => ({ ...match, shard: shards[match.shard]! }));
  return buildResponse(request, query, found, [outcome], publicUrl, timings, contentCharacters);
}

/**
 * Evaluates `query` over `shards` in order until `limits.wanted` match ranges
 * (files for type:file, repositories for type:repo) are found (counting
 * those other tasks added to the signal), the deadline passes or the search
 * is cancelled. A corrupt shard, or one whose mapping faulted, is counted in
 * `crashes` and skipped.
 */
export function searchShards(query: QueryNode, shards: readonly Shard[], contexts: Record<string, SearchContextConfig>, limits: SearchLimits): ShardsOutcome {
  const { wanted, deadline, signal } = limits;
  const stats = emptyEvaluationStats();
  stats.shardFilesConsidered = shards.length;
  const matches: ScoredMatch[] = [];
  let totalRanges = 0;
  let stop: StopReason = 'complete';
  const enoughElsewhere = () => rangesFound(signal) >= wanted;
  const isCancelled = () => isSearchCancelled(signal) || enoughElsewhere();
  const onMatchRanges = (ranges: number) => addRangesFound(signal, ranges);
  const patterns = new CompiledPatterns();
  const resultType = resultTypeOf(query);
  // type:repo: a repository's first matching file stands for it, so each shard stops there and a repository found skips its other shards.
  const repositoriesFound = new Set<number>();
  for (let index = 0; index < shards.length; index++) {
    const shard = shards[index]!;
    if (enoughElsewhere()) {
      stop = 'limit';
      break;
    }
    if (resultType === 'repo' && repositoriesFound.has(shard.meta.repository.id)) {
      stats.shardsSkipped++;
      continue;
    }
    const shardLimits = { maxMatchRanges: resultType === 'repo' ? 1 : wanted - rangesFound(signal), countFiles: resultType !== undefined, deadline, isCancelled, onMatchRanges };
    let result;
    try {
      result = searchShard(shard, query, contexts, shardLimits, patterns);
    } catch (error) {
      if (!(error instanceof ShardFormatError) && !shard.faulted) throw error;
    }
    const matchesBefore = matches.length;
    // Written out, not `{ ...match, shard, score }`: V8 (Node 20) keeps objects made by a spread plus new
    // properties alive through scavenges until a full collection, ≈ 14 KB per search promoted for nothing.
    for (const match of result?.matches ?? []) matches.push({ doc: match.doc, content: match.content, path: match.path, shard: index, score: score(shard, match) });
    if (result === undefined || shard.faulted) {
      matches.length = matchesBefore;
      stats.crashes++; // a corrupt or shrunk shard costs its own results, never the search
      continue;
    }
    const shardStats = result.stats;
    if (result.matches.length > 0 && resultType === 'repo') repositoriesFound.add(shard.meta.repository.id);
    if (result.matches.length > 0) stats.shardsScanned++;
    else if (shardStats.ngramLookups === 0 && shardStats.filesConsidered === 0) stats.shardsSkippedFilter++;
    else stats.shardsSkipped++;
    stats.filesConsidered += shardStats.filesConsidered;
    stats.filesLoaded += shardStats.filesLoaded;
    stats.contentBytesLoaded += shardStats.contentBytesLoaded;
    stats.indexBytesLoaded += shardStats.indexBytesLoaded;
    stats.ngramLookups += shardStats.ngramLookups;
    stats.ngramMatches += shardStats.ngramMatches;
    stats.regexpsConsidered += shardStats.regexpsConsidered;
    totalRanges += shardStats.matchRanges;
    if (result.stopReason !== 'complete' && !(resultType === 'repo' && result.stopReason === 'limit')) {
      // Stopping because other tasks found enough is the match cap, not a cancellation.
      stop = result.stopReason === 'cancelled' && !isSearchCancelled(signal) ? 'limit' : result.stopReason;
      if (stop !== 'limit') break;
    }
  }
  return { matches, stats, totalRanges, stop };
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
export function buildResponse(
  request: SearchRequest,
  query: QueryNode,
  found: Found[],
  outcomes: readonly Omit<ShardsOutcome, 'matches'>[],
  publicUrl: string,
  timings: { started: number; planned: number; searched: number },
  contentCharacters = RESPONSE_CONTENT_CHARACTERS,
): SearchResponse {
  found.sort((a, b) => b.score - a.score || compareLocation(a, b));
  const { response, intact, faultedShards } = assembleIntact(request, query, found, publicUrl, contentCharacters);
  const stats = emptyStats();
  for (const outcome of outcomes) addStats(stats, outcome.stats);
  stats.crashes += faultedShards;
  const totalRanges = outcomes.reduce((sum, outcome) => sum + outcome.totalRanges, 0);
  const stop = combinedStop(outcomes.map((outcome) => outcome.stop));
  stats.actualMatchCount = countRanges(response.files);
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
  return { stats, files: response.files, repositoryInfo: response.repositoryInfo, isSearchExhaustive: !cut };
}

/**
 * assemble over the matches of shards whose mapping did not fault while it read them (Shard.faulted),
 * and those matches: what it read from a faulted one may be zeros, so its files go and it counts as failed.
 */
function assembleIntact(request: SearchRequest, query: QueryNode, found: Found[], publicUrl: string, contentCharacters: number) {
  let kept = found;
  for (;;) {
    const response = assemble(request, query, kept, publicUrl, contentCharacters);
    // `some` first: the common case allocates nothing.
    if (!kept.some((match) => match.shard.faulted)) {
      const faultedShards = kept === found ? 0 : new Set(found.filter((match) => match.shard.faulted).map((match) => match.shard)).size;
      return { response, intact: kept, faultedShards };
    }
    kept = kept.filter((match) => !match.shard.faulted);
  }
}

/** Match ranges in file results (file name and chunks). */
function countRanges(files: readonly FileResult[]): number {
  return files.reduce((sum, file) => sum + file.fileName.matchRanges.length + file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0), 0);
}

/** The most severe way any part stopped: a deadline or cancellation anywhere makes the whole a timeout. */
function combinedStop(stops: readonly StopReason[]): StopReason {
  for (const reason of ['cancelled', 'deadline', 'limit'] as const) if (stops.includes(reason)) return reason;
  return 'complete';
}

function addStats(total: EvaluationStats, part: EvaluationStats): void {
  for (const key of Object.keys(part) as (keyof EvaluationStats)[]) total[key] += part[key];
}

export function emptyEvaluationStats(): EvaluationStats {
  return {
    crashes: 0,
    shardFilesConsidered: 0,
    shardsScanned: 0,
    shardsSkipped: 0,
    shardsSkippedFilter: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    contentBytesLoaded: 0,
    indexBytesLoaded: 0,
    ngramLookups: 0,
    ngramMatches: 0,
    regexpsConsidered: 0,
  };
}

function flushReason(stop: StopReason, cut: boolean): FlushReason {
  if (stop === 'deadline' || stop === 'cancelled') return 'FLUSH_REASON_TIMER_EXPIRED';
  return cut ? 'FLUSH_REASON_MAX_SIZE' : 'FLUSH_REASON_FINAL_FLUSH';
}

function score(shard: Shard, match: DocumentMatch): number {
  return scoreFile({
    content: match.content.length > 0 ? shard.content(match.doc) : Buffer.alloc(0),
    ranges: match.content,
    path: shard.pathBytes(match.doc),
    pathRanges: match.path,
    symbols: shard.symbolsOverlapping(match.doc, match.content),
    doc: match.doc,
    documentCount: shard.documentCount,
  });
}

function compareLocation(a: Found, b: Found): number {
  const byRepository = a.shard.meta.repository.name.localeCompare(b.shard.meta.repository.name);
  return byRepository || a.shard.path(a.doc).localeCompare(b.shard.path(b.doc));
}

/**
 * File results, best first, holding at most `request.matches` match ranges
 * and `contentCharacters` characters of content in all (`tooLarge` when the
 * latter left files out).
 */
function assemble(
  request: SearchRequest,
  query: QueryNode,
  found: Found[],
  publicUrl: string,
  contentCharacters: number,
): { files: FileResult[]; repositoryInfo: RepositoryInfo[]; tooLarge: boolean } {
  const resultType = resultTypeOf(query);
  const files: FileResult[] = [];
  const repositories = new Map<number, RepositoryInfo>();
  const seenRepositories = new Set<number>();
  let budget = request.matches;
  let characters = 0;
  for (const match of found) {
    if (budget <= 0) break;
    if (characters > contentCharacters) return { files, repositoryInfo: [...repositories.values()], tooLarge: true };
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
    files.push(file);
    repositories.set(repository.id, repositoryInfo(shard));
  }
  return { files, repositoryInfo: [...repositories.values()], tooLarge: false };
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

function resultTypeOf(query: QueryNode): 'file' | 'repo' | undefined {
  if (query.type === 'resultType') return query.value;
  if (query.type === 'and') for (const operand of query.operands) if (operand.type === 'resultType') return operand.value;
  return undefined;
}

/** Object.assign, not `{ ...emptyEvaluationStats(), … }`: see searchShards on what V8 keeps alive otherwise. */
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
