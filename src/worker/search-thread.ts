/**
 * The search workers' entry (a Piscina worker; search/workers.ts starts it):
 * evaluates a task's shard group (search/group-search.ts) with the shards it has mapped, and
 * builds the response when the task is the whole search, or renders the
 * group's files for the front end to merge when it is one of several. A shard that cannot
 * be opened is counted in `crashes`, like a shard that fails mid-search. While
 * another caller has tasks too, a task gives its worker up after its slice.
 */
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import type { Shard } from '../index/shard-reader.js';
import { checkedPattern, freeRetiredRegexes } from '../query/compiled-regex.js';
import { firstInvalidRegex } from '../query/regex-checks.js';
import { textsMatching } from '../query/text-regex.js';
import type { QueryNode } from '../query/ast.js';
import { buildResponse, buildsOnFrontEnd, foundIn, membersAfterStats, renderFiles, type FileSink, type Found } from '../search/response/build.js';
import { packedBuffers, packMatches } from '../search/packed-matches.js';
import { renderedFiles } from '../search/response/rendered-files.js';
import { contended } from '../search/contention.js';
import { placeMembers } from '../search/response/render-slots.js';
import { indexedByFile, searchGroup } from '../search/group-search.js';
import { TaskSlice } from '../search/shard/shard-search.js';
import { ShardCache } from '../search/shard-cache.js';
import { isSearchCancelled } from '../search/signal.js';
import type {
  CheckRegexesResult,
  CheckRegexesTask,
  MapShardsResult,
  MapShardsTask,
  MatchTextsResult,
  MatchTextsTask,
  RenderedPart,
  RenderedResponse,
  RenderMergedTask,
  RenderSpec,
  SearchTask,
  SearchTaskResult,
  SearchWorkerData,
  ShardsOutcome,
} from './search-protocol.js';
import { MAP_SLICE_MS } from './search-protocol.js';

const cache = new ShardCache();
/**
 * Where this thread renders responses: each is copied out (into a render slot, or bytes of its own) before
 * the next, so no response allocates memory of its own unless it outgrows this (docs/design.md, "The hot path's memory").
 */
const scratch = Buffer.allocUnsafeSlow(64 * 1024);
const { slots, contention, taskSliceMs } = workerData as SearchWorkerData;
const callerContention = new Int32Array(contention);

export default function searchTask(task: SearchTask): SearchTaskResult {
  const group = searchGroup(task, cache, new TaskSlice(taskSliceMs, () => contended(callerContention), task.partRanges));
  const { outcome, shards, fileIndex } = group;
  if (task.render && !outcome.resume) return render(task.render, task.query, foundIn(outcome, shards), [outcome]);
  const files =
    task.renderFiles && rendersFiles(task.renderFiles, task, outcome) ? filesOf(task.renderFiles, task.query, outcome, shards, fileIndex) : undefined;
  indexedByFile(group);
  if (!files) return outcome;
  const packedMatches = packMatches(outcome.matches);
  outcome.matches = [];
  return handedOver({ kind: 'files', outcome, packedMatches, ...files }, [
    ...new Set(files.json.map((piece) => piece.buffer as ArrayBuffer)),
    ...packedBuffers(packedMatches),
  ]);
}

/**
 * Whether the task renders its files: it did not give its worker up, the search goes on, and the answer is not small,
 * as if every group found as many ranges as this one, within `matches` (docs/design.md, "The search path").
 */
function rendersFiles(spec: RenderSpec, task: SearchTask, outcome: ShardsOutcome): boolean {
  const answerRanges = Math.min(outcome.totalRanges * (spec.groups ?? 1), spec.request.matches);
  return !outcome.resume && !isSearchCancelled(task.signal) && !buildsOnFrontEnd(spec.request, task.query, answerRanges);
}

/** The task's files rendered (RenderedFiles), their shards as indexes into the task's shard files (`fileIndex` of `shards`' indexes). */
function filesOf(spec: RenderSpec, query: QueryNode, outcome: ShardsOutcome, shards: readonly Shard[], fileIndex: readonly number[]) {
  const { stats, files, repositoryInfo } = built(() => renderedFiles(shards, scratch), spec, query, foundIn(outcome, shards), [outcome]);
  return { stats, repositoryInfo, ...files, shards: files.shards.map((index) => fileIndex[index]!) };
}

/** The response of a search whose tasks ran apart; a match of a shard this thread cannot open is dropped and counted. */
export function renderMerged(task: RenderMergedTask): RenderedResponse {
  cache.advance(task.generation);
  return render(task.render, task.query, cache.resolve(task.matches, task.shardFiles, task.outcomes[0]!.stats), task.outcomes);
}

/** A part of a streamed search: the one outcome of `task`, built within its request's `matches`. */
export function renderPart(task: RenderMergedTask): RenderedPart {
  cache.advance(task.generation);
  const { stats, files, repositoryInfo, isSearchExhaustive } = built(
    jsonFiles,
    task.render,
    task.query,
    cache.resolve(task.matches, task.shardFiles, task.outcomes[0]!.stats),
    task.outcomes,
  );
  // A copy of the bytes only: the writer's memory is larger, and the answer would copy all of it.
  return { kind: 'part', stats, files: Buffer.concat(files), repositoryInfo, isSearchExhaustive };
}

function render(spec: RenderSpec, query: QueryNode, found: Found[], outcomes: readonly Omit<ShardsOutcome, 'matches'>[]): RenderedResponse {
  const { stats, files, repositoryInfo, isSearchExhaustive } = built(jsonFiles, spec, query, found, outcomes);
  const placed = placeMembers(slots, spec.slot, membersAfterStats(files, repositoryInfo, isSearchExhaustive));
  const answer: RenderedResponse = { kind: 'rendered', stats, ...placed };
  return placed.results ? handedOver(answer, [placed.results.buffer as ArrayBuffer]) : answer;
}

/** `answer` as Piscina posts it with `buffers` transferred to the front end, not copied (it unwraps the value). */
function handedOver<T extends object>(answer: T, buffers: ArrayBuffer[]): T {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: answer }) as unknown as T;
}

const jsonFiles = () => renderFiles(scratch);

/** The response `spec` asks for, its files as `files` makes them, timed from when the front end started the search. */
function built<T>(files: () => FileSink<T>, spec: RenderSpec, query: QueryNode, found: Found[], outcomes: readonly Omit<ShardsOutcome, 'matches'>[]) {
  const local = (epochMs: number) => epochMs - performance.timeOrigin;
  const timings = { started: local(spec.startedEpochMs), planned: local(spec.plannedEpochMs), searched: performance.now() };
  return buildResponse(files, spec.request, query, found, outcomes, spec.publicUrl, timings);
}

/** Maps shards ahead of the searches that need them, for up to MAP_SLICE_MS; one that cannot be opened is left to them to count. */
export function mapShards(task: MapShardsTask): MapShardsResult {
  cache.advance(task.generation);
  const until = performance.now() + MAP_SLICE_MS;
  let through = 0;
  do cache.prefetch(task.shardFiles[through++]!);
  while (through < task.shardFiles.length && performance.now() < until);
  return { through, mapped: cache.size };
}

/** Compiles a query's regexes off the front end's thread (RE2 can take 100 ms over a 4 KiB pattern). */
export function checkRegexes(task: CheckRegexesTask): CheckRegexesResult {
  freeRetiredRegexes();
  const checks: CheckRegexesResult = [];
  firstInvalidRegex(task, (value) => {
    const check = checkedPattern(value);
    checks.push(check);
    return check;
  });
  return checks;
}

/** Tests texts against a regex (/api/commits' filters) off the front end's thread. */
export function matchTexts(task: MatchTextsTask): MatchTextsResult {
  freeRetiredRegexes();
  return textsMatching(task.pattern, task.texts);
}

/** The watchdog's liveness probe: answered only by a worker that takes tasks. */
export function ping(): true {
  return true;
}
