/**
 * The local source of a search's frames: its shard groups searched by the worker threads (workers.ts), one task
 * per group, each task's outcome handed on as a frame as it comes; a task that gave its worker up is resumed by
 * another. The one task of a search with few candidates may start on this thread instead (SearchRun.startsHere),
 * for a short slice after which a worker takes the rest. A worker that fails costs its group's results (counted as
 * crashes), never the search. Remote partitions are further sources of the same frames (docs/design.md, "The search path").
 */
import type {
  RenderedFiles,
  RenderedPart,
  RenderedResponse,
  RenderMergedTask,
  RenderSpec,
  SearchTask,
  SearchTaskResult,
  ShardsOutcome,
} from '../worker/search-protocol.js';
import { indexedByFile, searchGroup } from './group-search.js';
import { emptyEvaluationStats } from './shard/evaluate.js';
import { TaskSlice } from './shard/shard-search.js';
import type { ShardCache } from './shard-cache.js';
import { SearchQueueFullError } from './search-errors.js';
import type { SearchRun } from './search-run.js';
import { SearchPoolClosingError, type SearchWorkers } from './workers.js';

/** A task's outcome, with the shard files its matches index, and its files when its worker rendered them. */
export interface Frame {
  outcome: ShardsOutcome;
  shardFiles: string[];
  rendered?: RenderedFiles;
}

export type OnFrame = (frame: Frame) => void;

/** How a search's groups run: their files rendered with `renderFiles`, or each further part of a group waiting for `pace` (an exhaustive search's reader). */
export interface GroupOptions {
  renderFiles?: RenderSpec;
  pace?: () => Promise<void>;
}

/**
 * How long the front end runs a search's task itself before it hands the rest to a worker: about a task's round trip.
 * What it found is kept, so a search that runs past it loses little (docs/design.md, "Workers").
 */
export const FRONT_END_SLICE_MS = 0.5;

export class WorkerSource {
  /** `shards`: the front end's mappings; `frontEndSliceMs`: FRONT_END_SLICE_MS unless set. */
  constructor(
    private readonly workers: SearchWorkers,
    private readonly shards: ShardCache,
    private readonly frontEndSliceMs: number,
  ) {}

  /** One task per group, run as `options` say; each frame goes to `onFrame` as it comes. Resolves with the longest wait for a task. */
  async groups(run: SearchRun, groups: string[][], onFrame: OnFrame, options: GroupOptions = {}): Promise<number> {
    const waits = await Promise.all(groups.map((shardFiles) => this.group(run, run.task(shardFiles, undefined, options.renderFiles), onFrame, options.pace)));
    return Math.max(0, ...waits);
  }

  /**
   * The search as one task over `shardFiles` that renders its whole response with `render`; when it could not (it
   * gave its worker up, or its worker failed), undefined and its frames, and those of the tasks resuming it, to `onFrame`.
   */
  async whole(run: SearchRun, shardFiles: string[], render: RenderSpec, onFrame: OnFrame): Promise<{ rendered?: RenderedResponse; waitMs: number }> {
    const task = run.task(shardFiles, render);
    const { result, waitMs } = await this.runTask(run, task);
    if (result.kind === 'rendered') return { rendered: result, waitMs };
    const outcome = outcomeOf(result);
    onFrame({ outcome, shardFiles });
    if (!outcome.resume) return { waitMs };
    return { waitMs: Math.max(waitMs, await this.group(run, resumed(task, outcome.resume), onFrame)) };
  }

  /** What a worker builds from frames (`renderMerged`: a response, `renderPart`: a stream's part); undefined when its worker failed. */
  async rendered(run: SearchRun, task: RenderMergedTask, name: 'renderMerged'): Promise<RenderedResponse | undefined>;
  async rendered(run: SearchRun, task: RenderMergedTask, name: 'renderPart'): Promise<RenderedPart | undefined>;
  async rendered(run: SearchRun, task: RenderMergedTask, name: 'renderMerged' | 'renderPart'): Promise<RenderedResponse | RenderedPart | undefined> {
    try {
      return (await this.workers.run(task, name, run.caller)) as RenderedResponse | RenderedPart;
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      run.counters.workerFailures++;
      return undefined;
    }
  }

  /**
   * `task`, then the tasks resuming it where each gave its worker up (contention.ts) or handed its part on, each after
   * `pace`. Resolves with the longest wait for a worker.
   */
  private async group(run: SearchRun, task: SearchTask, onFrame: OnFrame, pace?: () => Promise<void>): Promise<number> {
    let waitMs = 0;
    for (let next: SearchTask | undefined = task; next !== undefined;) {
      if (next !== task && pace) await pace();
      const ran = await this.runTask(run, next);
      const { result } = ran;
      if (result.kind === 'rendered') throw new Error('a search task without `render` answered a rendered response');
      waitMs = Math.max(waitMs, ran.waitMs);
      const outcome = outcomeOf(result);
      onFrame({ outcome, shardFiles: next.shardFiles, rendered: result.kind === 'files' ? result : undefined });
      next = outcome.resume && resumed(next, outcome.resume);
    }
    return waitMs;
  }

  /**
   * `task` run by a worker, or by this thread when it starts the search (a crash outcome when it failed), with the wait
   * for the worker; the search keeps its place from then on, unless it was displaced before.
   */
  private async runTask(run: SearchRun, task: SearchTask): Promise<{ result: SearchTaskResult; waitMs: number }> {
    const submitted = performance.now();
    const here = run.startsHere && task.resume === undefined;
    let result: SearchTaskResult;
    try {
      result = here ? this.searchHere(task) : ((await this.workers.run(task, undefined, run.caller, task.resume !== undefined)) as SearchTaskResult);
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      run.counters.workerFailures++;
      const stats = { ...emptyEvaluationStats(), crashes: task.shardFiles.length, shardFilesConsidered: task.shardFiles.length };
      result = { kind: 'matches', matches: [], totalRanges: 0, stop: 'complete', stats };
    }
    if (run.admission.displaced) throw new SearchQueueFullError(run.settings.maxQueuedSearches, true);
    run.admission.keep();
    if (!here && result.kind === 'matches' && result.resume && task.partRanges === undefined) run.counters.tasksYielded++;
    return { result, waitMs: here ? 0 : performance.now() - submitted };
  }

  /** `task` evaluated on this thread until its slice is over; its outcome is a plain frame, whatever its `render`. */
  private searchHere(task: SearchTask): ShardsOutcome {
    return indexedByFile(searchGroup(task, this.shards, new TaskSlice(this.frontEndSliceMs, () => true, task.partRanges)));
  }
}

/** The task doing the rest of `task`'s shards from where it gave its worker up; its outcome is a plain frame. */
function resumed(task: SearchTask, resume: NonNullable<ShardsOutcome['resume']>): SearchTask {
  return {
    ...task,
    shardFiles: task.shardFiles.slice(resume.shard),
    resume: { at: resume.at, found: resume.found },
    render: undefined,
    renderFiles: undefined,
  };
}

/** A task's outcome, whether or not it rendered its files. */
function outcomeOf(result: ShardsOutcome | RenderedFiles): ShardsOutcome {
  return result.kind === 'files' ? result.outcome : result;
}
