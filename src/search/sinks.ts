/**
 * Where a search's answer goes: a JSON body (`answerJson`: /api/search, MCP), objects (`answerObjects`: the
 * symbol routes), a stream of parts (`answerStream`: /api/stream_search), or files with their ranks for another
 * node to merge (`answerFiles`). Each pulls the search's frames from
 * its source into a merger and writes what the merger made (docs/design.md, "The search path"). The JSON
 * answer is built where it costs the front end's thread least: by the worker that ran the whole search, or by
 * the groups' workers rendering their files, merged here as views (with the few files of groups that left theirs
 * unrendered built here), or by one more task given every frame;
 * only a small answer is built here.
 */
import type { SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import { resultTypeOf } from '../query/plan.js';
import type { RenderedResponse, RenderSpec } from '../worker/search-protocol.js';
import { Merger } from './merger.js';
import { buildsOnFrontEnd, collectFiles, renderFiles, responseJson, responseOpening, responsePieces, type FileSink } from './response/build.js';
import { PREFIX_ROOM, prefixedResponse, type RenderSlots } from './response/render-slots.js';
import type { FilesPart, Redraft } from './response/rendered-files.js';
import { accumulateStats, emptyStats, timeStats } from './response/stats.js';
import type { ShardCache } from './shard-cache.js';
import type { SearchRun } from './search-run.js';
import type { Frame, WorkerSource } from './worker-source.js';

/** What the front end's thread lends a search: the source of its frames, its own shard mappings, render slots and a scratch buffer. */
export interface FrontEnd {
  source: WorkerSource;
  shards: ShardCache;
  renderSlots: RenderSlots;
  /** Where an answer built here is rendered before it is copied out: no buffer of its own per answer. */
  scratch: Buffer;
}

/** A search's response as UTF-8 JSON, and its stats. */
export interface SearchJson {
  stats: SearchStats;
  /**
   * The response's bytes in order, in one piece or (merged from rendered files) in many, written as they are.
   * Valid until `release`: it may be a render slot's memory, which the next search reuses.
   */
  body: readonly Uint8Array[];
  /** Gives the body's memory back once it is written or dropped; idempotent. */
  release(): void;
}

/** A part of a streamed search: a SearchResponse whose files are UTF-8 JSON. */
export type StreamPart = Omit<SearchResponse, 'files'> & { files: Uint8Array };

/** How a streamed search ended: its parts' stats summed (`accumulateStats`), and whether they hold every match. */
export interface StreamSummary {
  accumulatedStats: SearchStats;
  isSearchExhaustive: boolean;
}

/** The answer as objects, built here from every frame. */
export async function answerObjects(run: SearchRun, groups: string[][], frontEnd: FrontEnd): Promise<SearchResponse> {
  const merger = new Merger(run, frontEnd.shards);
  const waitMs = await frontEnd.source.groups(run, groups, merger.add);
  const response = merger.build(collectFiles);
  run.settle(response.stats, waitMs);
  return response;
}

/**
 * The answer as parts of files, each with the rank of each file, for another node to merge with its own (cluster/fan-out.ts);
 * each group's files rendered by its worker, else all built here (merger.ts `filesParts`).
 */
export async function answerFiles(run: SearchRun, groups: string[][], frontEnd: FrontEnd): Promise<{ parts: FilesPart[]; redraft: Redraft }> {
  const merger = new Merger(run, frontEnd.shards);
  const waitMs = await frontEnd.source.groups(run, groups, merger.add, renderingGroups(run, groups));
  const files = merger.filesParts(frontEnd.scratch);
  files.parts.forEach((part, index) => run.settle(part.stats, index === 0 ? waitMs : 0)); // the wait once: the parts' stats are summed
  return files;
}

/** The answer as JSON: see the module's comment for where it is built. */
export async function answerJson(run: SearchRun, groups: string[][], frontEnd: FrontEnd): Promise<SearchJson> {
  const { source, renderSlots } = frontEnd;
  const slot = renderSlots.acquire();
  // The slot goes with a response written into it; otherwise it is free again once the task answered
  // (a task that failed, its worker dying say, writes nothing after that).
  let slotHandedOver = false;
  try {
    const merger = new Merger(run, frontEnd.shards);
    let waitMs: number;
    if (groups.length === 1) {
      const whole = await source.whole(run, groups[0]!, run.renderSpec(slot), merger.add);
      if (whole.rendered) {
        slotHandedOver = whole.rendered.results === null;
        return renderedJson(run, whole.rendered, whole.waitMs, renderSlots, slot);
      }
      waitMs = whole.waitMs;
    } else {
      waitMs = await source.groups(run, groups, merger.add, renderingGroups(run, groups));
    }
    const files = merger.mergedFiles(frontEnd.scratch);
    if (files) {
      // The merged files as views of the groups' bytes, never copied here.
      timeStats(files.stats, run.timings());
      return { stats: run.settle(files.stats, waitMs), body: responsePieces(files), release: noRelease };
    }
    if (!buildsOnFrontEnd(run.request, run.query, merger.rangesWithinMatches())) {
      const rendered = await source.rendered(run, merger.renderTask(run.renderSpec(slot)), 'renderMerged');
      if (rendered) {
        slotHandedOver = rendered.results === null;
        return renderedJson(run, rendered, waitMs, renderSlots, slot);
      }
    }
    const built = merger.build(() => renderFiles(frontEnd.scratch));
    return { stats: run.settle(built.stats, waitMs), body: [responseJson(built)], release: noRelease };
  } finally {
    if (slot !== undefined && !slotHandedOver) renderSlots.release(slot);
  }
}

/** How the groups of a split search render their files: each knowing how many groups there are (search-thread.ts `rendersFiles`). */
function renderingGroups(run: SearchRun, groups: string[][]): { renderFiles: RenderSpec } {
  return { renderFiles: { ...run.renderSpec(), groups: groups.length } };
}

/** The worker's response with the wait for it, its members in SearchResponse's order: in `slot` when `results` is null. */
function renderedJson(
  run: SearchRun,
  { stats, results, slotBytesUsed }: RenderedResponse,
  waitMs: number,
  slots: RenderSlots,
  slot: number | undefined,
): SearchJson {
  const prefix = responseOpening(run.settle(stats, waitMs));
  if (results === null) {
    const { body, release } = slots.response(slot!, prefix, slotBytesUsed);
    return { stats, body: [body], release };
  }
  const { body } = prefixedResponse(Buffer.from(results.buffer, results.byteOffset, results.byteLength), prefix, results.byteLength - PREFIX_ROOM);
  return { stats, body: [body], release: noRelease };
}

/**
 * The answer as parts, one per frame as it comes, within what is left of `matches` (the parts are not ranked
 * against each other, and no whole answer is built), or, `ranked`, each within `matches` with its files' scores
 * (the client ranks them); a part too big to build here cheaply is built by a worker.
 * An exhaustive search's frames are bounded (SearchTask.partRanges): a group's next task starts once its parts are
 * built and `ready` resolves (the reader took enough of them).
 */
export async function answerStream(
  run: SearchRun,
  groups: string[][],
  frontEnd: FrontEnd,
  onPart: (part: StreamPart) => void,
  ready?: () => Promise<void>,
): Promise<StreamSummary> {
  const { request, query } = run;
  const accumulatedStats = emptyStats();
  let isSearchExhaustive = true;
  const resultType = resultTypeOf(query);
  const countsFiles = resultType !== undefined;
  // `ranked`: every part holds its own best `matches`, so whether the search was cut depends on their sum.
  const ranked = request.ranked === true && !request.exhaustive;
  let returned = 0;
  const take = (part: StreamPart) => {
    accumulateStats(accumulatedStats, part.stats);
    isSearchExhaustive &&= part.isSearchExhaustive;
    returned += countsFiles ? part.stats.fileCount : part.stats.actualMatchCount;
    if (part.repositoryInfo.length > 0) onPart(part);
  };
  const building: Promise<void>[] = [];
  let budget = request.matches;
  // type:repo: a repository's shards may fall in several groups, so the frames make one part, holding
  // each repository's first file in index order as an unsplit search does (response/build.ts).
  const repositories = resultType === 'repo' ? new Merger(run, frontEnd.shards) : undefined;
  const onFrame = (frame: Frame) => {
    const { outcome } = frame;
    const part = new Merger(run, frontEnd.shards);
    const partRequest = ranked ? request : { ...request, matches: Math.max(budget, 0) };
    if (budget <= 0 && !ranked) {
      // `matches` is spent: the frame's matches are counted, not returned.
      isSearchExhaustive &&= outcome.matches.length === 0 && outcome.stop === 'complete';
      part.add({ outcome: { ...outcome, matches: [] }, shardFiles: frame.shardFiles });
      take(partHere(part, partRequest, frontEnd.scratch, countsFiles));
    } else if (buildsOnFrontEnd(request, query, Math.min(partRequest.matches, outcome.totalRanges))) {
      part.add(frame);
      const built = partHere(part, partRequest, frontEnd.scratch, countsFiles);
      budget -= built.counted;
      take(built);
    } else {
      part.add(frame);
      // The worker's part holds this many unless the content bound cuts it shorter.
      budget -= Math.min(partRequest.matches, outcome.totalRanges);
      const built = frontEnd.source
        .rendered(run, part.renderTask(run.renderSpec(undefined, partRequest)), 'renderPart')
        .then((rendered) => take(rendered ?? partHere(part, partRequest, frontEnd.scratch, countsFiles)));
      built.catch(() => {}); // awaited below, unless another group's task failed first (the pool closing)
      building.push(built);
    }
  };
  let settled = 0; // building[0, settled) are built
  const pace = request.exhaustive
    ? async () => {
        const upTo = building.length;
        await Promise.all(building.slice(settled, upTo));
        settled = Math.max(settled, upTo);
        await ready?.();
      }
    : undefined;
  const waitMs = await frontEnd.source.groups(run, groups, repositories?.add ?? onFrame, { pace });
  if (repositories && repositories.outcomes.length > 0) take(partHere(repositories, request, frontEnd.scratch, countsFiles));
  await Promise.all(building);
  isSearchExhaustive &&= !ranked || returned <= request.matches;
  run.settle(accumulatedStats, waitMs);
  timeStats(accumulatedStats, run.timings()); // the whole search's times, not the parts' summed
  if (!isSearchExhaustive && accumulatedStats.flushReason === 'FLUSH_REASON_FINAL_FLUSH') accumulatedStats.flushReason = 'FLUSH_REASON_MAX_SIZE';
  return { accumulatedStats, isSearchExhaustive };
}

/** A stream's part built on this thread, with the results it counts against `matches`: match ranges, or files when `countsFiles` (type:file, type:repo). */
function partHere(part: Merger, request: SearchRequest, scratch: Buffer, countsFiles: boolean): StreamPart & { counted: number } {
  let filesReturned = 0;
  const countedFiles = (): FileSink<Buffer[]> => {
    const files = renderFiles(scratch);
    return {
      add: (file, match) => {
        filesReturned++;
        files.add(file, match);
      },
      result: () => files.result(),
    };
  };
  const { stats, files, repositoryInfo, isSearchExhaustive } = part.build(countedFiles, request);
  // A copy: the files were written into the scratch the next answer reuses.
  return { stats, files: Buffer.concat(files), repositoryInfo, isSearchExhaustive, counted: countsFiles ? filesReturned : stats.actualMatchCount };
}

const noRelease = () => {};
