/**
 * One search over a set of shards, in process: parse and plan the query,
 * evaluate it shard by shard until `matches + 1` match ranges are found,
 * rank the matching files, cut the result at `matches` ranges, and build the
 * API response (chunks, positions, links, repository info, the 21 stats).
 * The daemon fans the same per-shard work out to its worker pool.
 */
import type { FileResult, FlushReason, RepositoryInfo, SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { Shard } from '../index/shard-reader.js';
import { ShardFormatError } from '../index/errors.js';
import type { QueryNode } from '../query/ast.js';
import { parseQuery } from '../query/parser.js';
import { buildChunks } from './chunks.js';
import { browseUrl, externalUrl } from './links.js';
import { LineIndex, codePointsBetween } from './positions.js';
import { scoreFile } from './rank.js';
import { rangePairs } from './ranges.js';
import { checkContexts, searchShard, type DocumentMatch, type StopReason } from './shard-search.js';

export interface SearchEnvironment {
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  /** A search stops after this long and returns what it found (default 10 s). */
  timeBudgetMs: number;
  /** True once the caller no longer wants the result (client gone). */
  isCancelled?: () => boolean;
}

interface Found extends DocumentMatch {
  shard: Shard;
  score: number;
}

const NANOS_PER_MS = 1e6;

/**
 * Runs `request` over `shards`. Throws QueryParseError for a query that does
 * not parse and UnknownSearchContextError for an unknown `context:`.
 */
export function search(request: SearchRequest, shards: readonly Shard[], environment: SearchEnvironment): SearchResponse {
  const started = performance.now();
  const query = parseQuery(request.query, { regex: request.isRegexEnabled ?? false, caseSensitive: request.isCaseSensitivityEnabled ?? false });
  checkContexts(query, environment.contexts);
  const planned = performance.now();
  const deadline = started + environment.timeBudgetMs;
  const isCancelled = environment.isCancelled ?? (() => false);
  const stats = emptyStats();
  stats.shardFilesConsidered = shards.length;
  const wanted = request.matches + 1; // one more than asked tells whether the result was cut
  const found: Found[] = [];
  let totalRanges = 0;
  let stop: StopReason = 'complete';
  for (const shard of shards) {
    if (totalRanges >= wanted) {
      stop = 'limit';
      break;
    }
    let result;
    try {
      result = searchShard(shard, query, environment.contexts, { maxMatchRanges: wanted - totalRanges, deadline, isCancelled });
    } catch (error) {
      if (!(error instanceof ShardFormatError)) throw error;
      stats.crashes++; // a corrupt shard costs its own results, never the search
      continue;
    }
    const shardStats = result.stats;
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
    for (const match of result.matches) found.push({ ...match, shard, score: score(shard, match) });
    if (result.stopReason !== 'complete') {
      stop = result.stopReason;
      if (stop !== 'limit') break;
    }
  }
  const searched = performance.now();
  found.sort((a, b) => b.score - a.score || compareLocation(a, b));
  const response = assemble(request, query, found, environment.publicUrl);
  stats.actualMatchCount = response.files.reduce((sum, file) => sum + file.fileName.matchRanges.length + file.chunks.reduce((n, chunk) => n + chunk.matchRanges.length, 0), 0);
  stats.totalMatchCount = totalRanges;
  stats.fileCount = found.length;
  stats.filesSkipped = stop === 'complete' ? 0 : Math.max(0, stats.filesConsidered - found.length);
  stats.matchTreeConstruction = Math.round((planned - started) * NANOS_PER_MS);
  stats.matchTreeSearch = Math.round((searched - planned) * NANOS_PER_MS);
  stats.duration = Math.round((performance.now() - started) * NANOS_PER_MS);
  const cut = stop !== 'complete' || totalRanges > request.matches;
  stats.flushReason = flushReason(stop, cut);
  return { stats, files: response.files, repositoryInfo: response.repositoryInfo, isSearchExhaustive: !cut };
}

function flushReason(stop: StopReason, cut: boolean): FlushReason {
  if (stop === 'deadline' || stop === 'cancelled') return 'TIMEOUT';
  return cut ? 'MAX_SIZE' : 'FINAL_FLUSH';
}

function score(shard: Shard, match: DocumentMatch): number {
  return scoreFile({
    content: match.content.length > 0 ? shard.content(match.doc) : Buffer.alloc(0),
    ranges: match.content,
    path: shard.pathBytes(match.doc),
    pathRanges: match.path,
    symbols: match.content.length > 0 ? shard.symbols(match.doc) : [],
    doc: match.doc,
    documentCount: shard.documentCount,
  });
}

function compareLocation(a: Found, b: Found): number {
  const byRepository = a.shard.meta.repository.name.localeCompare(b.shard.meta.repository.name);
  return byRepository || a.shard.path(a.doc).localeCompare(b.shard.path(b.doc));
}

/** File results, best first, holding at most `request.matches` match ranges in all. */
function assemble(request: SearchRequest, query: QueryNode, found: Found[], publicUrl: string): { files: FileResult[]; repositoryInfo: RepositoryInfo[] } {
  const resultType = resultTypeOf(query);
  const files: FileResult[] = [];
  const repositories = new Map<number, RepositoryInfo>();
  const seenRepositories = new Set<number>();
  let budget = request.matches;
  for (const match of found) {
    if (budget <= 0) break;
    const { shard } = match;
    const repository = shard.meta.repository;
    if (resultType === 'repo') {
      if (seenRepositories.has(repository.id)) continue;
      seenRepositories.add(repository.id);
    }
    // Keep file-name ranges first, then content ranges in file order, within the budget.
    const pathRanges = match.path.slice(0, 2 * budget);
    budget -= pathRanges.length / 2;
    // type:file and type:repo return files without chunks: their content ranges are not returned.
    const contentRanges = resultType ? [] : sortedPairs(match.content).slice(0, 2 * budget);
    budget -= contentRanges.length / 2;
    files.push(fileResult(request, shard, match.doc, pathRanges, contentRanges, publicUrl));
    repositories.set(repository.id, repositoryInfo(shard));
  }
  return { files, repositoryInfo: [...repositories.values()] };
}

function fileResult(request: SearchRequest, shard: Shard, doc: number, pathRanges: number[], contentRanges: number[], publicUrl: string): FileResult {
  const repository = shard.meta.repository;
  const path = shard.path(doc);
  const pathBytes = shard.pathBytes(doc);
  const branches = branchesOf(shard, doc);
  const bit = shard.meta.branches.findIndex((branch) => branch.name === branches[0]);
  const content = shard.content(doc);
  const lines = new LineIndex(content, contentRanges.length > 0 ? shard.newlines(doc) : new Uint32Array(0));
  const result: FileResult = {
    fileName: { text: path, matchRanges: rangePairs(pathRanges).map(([start, end]) => ({ start: pathPosition(pathBytes, start), end: pathPosition(pathBytes, end) })) },
    webUrl: browseUrl(publicUrl, repository.name, branches[0] ?? 'HEAD', path),
    repository: repository.name,
    repositoryId: repository.id,
    language: shard.language(doc),
    chunks:
      contentRanges.length > 0
        ? buildChunks({ content, lines, ranges: contentRanges, contextLines: request.contextLines ?? 0, symbols: shard.symbols(doc) })
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

function resultTypeOf(query: QueryNode): 'file' | 'repo' | undefined {
  if (query.type === 'resultType') return query.value;
  if (query.type === 'and') for (const operand of query.operands) if (operand.type === 'resultType') return operand.value;
  return undefined;
}

function sortedPairs(flat: number[]): number[] {
  return rangePairs(flat)
    .sort((a, b) => a[0] - b[0])
    .flat();
}

function emptyStats(): SearchStats {
  return {
    actualMatchCount: 0,
    totalMatchCount: 0,
    duration: 0,
    fileCount: 0,
    filesSkipped: 0,
    contentBytesLoaded: 0,
    indexBytesLoaded: 0,
    crashes: 0,
    shardFilesConsidered: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    shardsScanned: 0,
    shardsSkipped: 0,
    shardsSkippedFilter: 0,
    ngramMatches: 0,
    ngramLookups: 0,
    wait: 0,
    matchTreeConstruction: 0,
    matchTreeSearch: 0,
    regexpsConsidered: 0,
    flushReason: 'FINAL_FLUSH',
  };
}
