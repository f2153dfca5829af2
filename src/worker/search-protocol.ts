/**
 * The messages between the front end and the search workers (Piscina tasks),
 * and every type they carry: search/ imports this file, never the reverse.
 * Everything here is structured-cloneable; the signal is a SharedArrayBuffer
 * view, so it is shared, not copied.
 */
import type { RepositoryInfo, SearchRequest, SearchStats } from '../api/types.js';
import type { SearchContextConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import type { PatternCheck } from '../query/compiled-regex.js';
import type { TextsMatched } from '../query/text-regex.js';

/** A search's cooperative control block (search/signal.ts reads and writes it). */
export type SearchSignal = Int32Array;

/** What every search worker is started with (its Piscina workerData). */
export interface SearchWorkerData {
  /** The front end's render slots (search/response/render-slots.ts). */
  slots: RenderSlotsShare;
  /** The callers with tasks, counted by search/contention.ts. */
  contention: SharedArrayBuffer;
  /** How long a search task holds its worker while another caller has tasks (search/workers.ts TASK_SLICE_MS). */
  taskSliceMs: number;
}

/** What a worker needs to write into the render slots. */
export interface RenderSlotsShare {
  buffer: SharedArrayBuffer;
  slotBytes: number;
}

/** How a shard's, a group's or a search's evaluation ended. */
export type StopReason = 'complete' | 'limit' | 'deadline' | 'cancelled';

/** A document that matched, with flattened [start, end, …] byte ranges. */
export interface DocumentMatch {
  doc: number;
  content: number[];
  path: number[];
}

/** A matching document of the group's `shards[shard]`, with its rank score. */
export interface ScoredMatch extends DocumentMatch {
  shard: number;
  score: number;
}

/**
 * Matches in typed arrays (search/packed-matches.ts): match i is document docs[i] of shard shards[i] with
 * score scores[i]; its path ranges are ranges[ends[i − 1] (0 for the first), pathEnds[i]), its content
 * ranges ranges[pathEnds[i], ends[i]).
 */
export interface PackedMatches {
  docs: Uint32Array;
  shards: Uint32Array;
  scores: Float64Array;
  pathEnds: Uint32Array;
  ends: Uint32Array;
  ranges: Uint32Array;
}

/** The counters of SearchStats that evaluation produces; response building computes the rest. */
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

/** What evaluating a group of shards found. */
export interface ShardsOutcome {
  kind: 'matches';
  matches: ScoredMatch[];
  stats: EvaluationStats;
  /** Match ranges found (content and file name). */
  totalRanges: number;
  stop: StopReason;
  /**
   * Set when the task gave its worker up to another caller's (search/contention.ts) at position `at` of
   * `shardFiles[shard]`'s evaluation order, having counted `found` there: the rest is a task's resuming there
   * (SearchTask.resume); `stop` is this part's.
   */
  resume?: ShardResume & { shard: number };
}

/** Where a task that gave its worker up stopped in its shard's evaluation order, and what it had counted there. */
export interface ShardResume {
  at: number;
  found: number;
}

/** Search one group of shards. */
export interface SearchTask {
  /** Manifest generation the shard list comes from. */
  generation: number;
  /** Absolute paths of the group's shard files, in search order. */
  shardFiles: string[];
  query: QueryNode;
  contexts: Record<string, SearchContextConfig>;
  /** Each shard stops once it holds this many match ranges (files for type:file and type:repo). */
  wanted: number;
  /** Wall-clock deadline, milliseconds since the epoch (threads have different performance.now() origins). */
  deadlineEpochMs: number;
  signal: SearchSignal;
  /** Set when the task is the whole search: the worker then builds the response itself (see RenderedResponse) unless it gives its worker up. */
  render?: RenderSpec;
  /**
   * Set when the task is one of a search's several answered as JSON: the worker then renders its files (RenderedFiles)
   * within `matches` if it did not give its worker up and they are not few (search/response/build.ts `buildsOnFrontEnd`).
   */
  renderFiles?: RenderSpec;
  /** Where in the first shard's evaluation order to start, and what was counted there: an earlier task of the search gave its worker up there (ShardsOutcome.resume). */
  resume?: ShardResume;
  /**
   * Set for an exhaustive search (SearchRequest.exhaustive): the task gives its worker up, as when its slice is over,
   * once it holds this many match ranges, so that each part of the answer is bounded and the next waits for the reader.
   */
  partRanges?: number;
}

/** What a worker needs to build a search's response. */
export interface RenderSpec {
  request: SearchRequest;
  publicUrl: string;
  /** When the search started and was planned, milliseconds since the epoch. */
  startedEpochMs: number;
  plannedEpochMs: number;
  /** The render slot (see search/response/render-slots.ts) the response's members go into, if the front end had one free. */
  slot?: number;
  /** For a group that renders its files (SearchTask.renderFiles): how many groups the search has. */
  groups?: number;
}

/**
 * A search's response built by the worker that ran it, so that the front
 * end's thread (the bottleneck under load) neither receives the matches nor
 * builds and serializes the files. The front end adds `stats.wait` and
 * writes the stats before the members.
 */
export interface RenderedResponse {
  kind: 'rendered';
  stats: SearchStats;
  /**
   * The response's members after `stats` (`"files":[…],"repositoryInfo":[…],"isSearchExhaustive":…}`) as
   * UTF-8 JSON when they did not fit the task's render slot (or it had none), after PREFIX_ROOM bytes of room
   * for the front end's prefix, as in a slot; its memory is handed over, not copied. Null when they are in the slot.
   * Bytes, not a string (docs/design.md, "The hot path's memory").
   */
  results: Uint8Array | null;
  /** Bytes of the members in the task's render slot; 0 when they are in `results`. */
  slotBytesUsed: number;
}

/** Where a file stands in a response's ranking (search/shard/rank.ts `compareRanks`): by score, then repository name and path. */
export interface RankKey {
  score: number;
  repository: string;
  path: string;
}

/**
 * One task's files rendered by the worker that found them (SearchTask.renderFiles), best first, within
 * `matches` as a response of their own would hold them, for the front end to merge with the other tasks'
 * (search/response/rendered-files.ts) instead of sending every task's matches to one worker to render.
 */
export interface RenderedFiles {
  kind: 'files';
  /** The task's outcome, its matches left empty: they are `packedMatches`. */
  outcome: ShardsOutcome;
  /** The task's matches, handed over (search/packed-matches.ts): the response is rendered from them when the files cannot be merged. */
  packedMatches: PackedMatches;
  /** The stats of the task's files as a response of their own. */
  stats: SearchStats;
  repositoryInfo: RepositoryInfo[];
  /**
   * The files' JSON, in pieces back to back, each file after the first with its comma before it (file i is bytes
   * `ends[i - 1]`, 0 for the first, to `ends[i]`, of the pieces joined); their memory is handed over.
   */
  json: Uint8Array[];
  ends: number[];
  keys: RankKey[];
  repositoryIds: number[];
  /** Match ranges of each file (file name and chunks), and how many it matched (more when `matches` cut it). */
  ranges: number[];
  foundRanges: number[];
  /** Each file's shard (an index into the task's shard files) and document, to find its match again. */
  shards: number[];
  docs: number[];
  /** Bytes of content each file carries, as the response's bound on content counts them. */
  contentBytes: number[];
  /** Whether the bound on content left some of the task's files out. */
  cutByContent: boolean;
}

/**
 * Build the response of a search that ran as several tasks from their outcomes, so that a broad
 * search's files are built and serialized in a worker, not on the front end's thread. Answered with
 * a RenderedResponse.
 */
export interface RenderMergedTask {
  generation: number;
  /** Every task's shard files, one task's after the other's: `matches[i].shard` indexes this list. */
  shardFiles: string[];
  query: QueryNode;
  matches: ScoredMatch[];
  /** Each task's outcome, without its matches. */
  outcomes: Omit<ShardsOutcome, 'matches'>[];
  render: RenderSpec;
}

/**
 * One part of a streamed search, built by a worker from a group's outcome (a RenderMergedTask with
 * one outcome and no slot) so that a broad stream costs the front end's thread little more than
 * writing it: the part's files as UTF-8 JSON, the rest as the part's SearchResponse has it.
 */
export interface RenderedPart {
  kind: 'part';
  stats: SearchStats;
  files: Uint8Array;
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/**
 * Map shards of a new generation, in order, in the worker whose thread id the task names (the pool's load
 * balancer reads it from the queue options), before a search needs them: as many as the worker maps in
 * MAP_SLICE_MS, at least one, so that other tasks interleave with a long list. Answered with how many of
 * `shardFiles` it went through, and how many shards that worker has mapped.
 */
export interface MapShardsTask {
  generation: number;
  shardFiles: string[];
}

export interface MapShardsResult {
  through: number;
  mapped: number;
}

/** How long a MapShardsTask maps shards before it answers. */
export const MAP_SLICE_MS = 100;

/**
 * Compile these regexes (a query's, parser.ts RegexTerm values): answered with their checks in order, up to
 * the one that decides parser.ts `firstInvalidRegex` (all of them when none does).
 */
export type CheckRegexesTask = string[];
export type CheckRegexesResult = PatternCheck[];

/** Test `texts` against the case-insensitive RE2 regex `pattern` (query/text-regex.ts). */
export interface MatchTextsTask {
  pattern: string;
  texts: string[];
}
export type MatchTextsResult = TextsMatched;

/**
 * The group's matches (`shard` indexes SearchTask.shardFiles) and counters, a
 * shard that failed to open counting as a crash; the response itself for a
 * task with `render` that did not give its worker up; the task's files rendered for a task with
 * `renderFiles` that could render them. Told apart by `kind`.
 */
export type SearchTaskResult = ShardsOutcome | RenderedResponse | RenderedFiles;
