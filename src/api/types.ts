/**
 * The response types of the public search API (spec: shared/spec/api.md §3).
 * The search engine produces exactly these, so the daemon only serialises.
 */
import type { CodeHostType } from '../index/code-host.js';

/** byteOffset 0-based from the start of the file; lineNumber and column (code points) 1-based. */
export interface Position {
  byteOffset: number;
  lineNumber: number;
  column: number;
}

/** start inclusive, end exclusive. */
export interface Range {
  start: Position;
  end: Position;
}

export interface SymbolInfo {
  symbol: string;
  kind: string;
  parent?: { symbol: string; kind: string };
}

export interface Chunk {
  /** Whole lines covering the matches plus context, each ending in '\n' except possibly the file's last. */
  content: string;
  matchRanges: Range[];
  contentStart: Position;
  symbols?: SymbolInfo[];
}

export interface FileResult {
  fileName: { text: string; matchRanges: Range[] };
  webUrl: string;
  externalWebUrl?: string;
  repository: string;
  repositoryId: number;
  language: string;
  chunks: Chunk[];
  branches?: string[];
  content?: string;
}

export interface RepositoryInfo {
  id: number;
  codeHostType: CodeHostType;
  name: string;
  displayName?: string;
  webUrl?: string;
}

export type FlushReason = 'FLUSH_REASON_FINAL_FLUSH' | 'FLUSH_REASON_MAX_SIZE' | 'FLUSH_REASON_TIMER_EXPIRED';

/** All 21 fields, always present. Times are nanoseconds. */
export interface SearchStats {
  actualMatchCount: number;
  totalMatchCount: number;
  duration: number;
  fileCount: number;
  filesSkipped: number;
  contentBytesLoaded: number;
  indexBytesLoaded: number;
  crashes: number;
  shardFilesConsidered: number;
  filesConsidered: number;
  filesLoaded: number;
  shardsScanned: number;
  shardsSkipped: number;
  shardsSkippedFilter: number;
  ngramMatches: number;
  ngramLookups: number;
  wait: number;
  matchTreeConstruction: number;
  matchTreeSearch: number;
  regexpsConsidered: number;
  flushReason: FlushReason;
}

export interface SearchRequest {
  query: string;
  matches: number;
  contextLines?: number;
  whole?: boolean;
  isRegexEnabled?: boolean;
  isCaseSensitivityEnabled?: boolean;
}

export interface SearchResponse {
  stats: SearchStats;
  files: FileResult[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/** A node of POST /api/tree's answer: a directory (`tree`), a file (`blob`) or a submodule (`commit`). */
export interface TreeNode {
  type: 'tree' | 'blob' | 'commit';
  path: string;
  name: string;
  children: TreeNode[];
}
