/**
 * Searches fanned out to the search workers (workers.ts): admits a planned
 * query and sends one task per shard group of the visible repositories (as
 * many groups as the search's share of the workers). A search answered as
 * JSON has its response built and serialized by a worker, into a render slot
 * of shared memory: by the one that ran it when it ran as one task, else by
 * the groups' workers, each rendering its files for this thread to merge
 * (response/rendered-files.ts), or by a task given the groups' outcomes when
 * one did not; the front end's thread is the one every
 * request passes through (docs/design.md, "The search path"). Searches
 * answered as objects (MCP, streaming) are merged by score and built here
 * (response/build.ts) from this thread's own mappings of the same shards.
 *
 * Over 300 lines: admission, the one-task path and the fan-out share the
 * search's signal, SearchRun and render slot, which one class keeps together.
 */
import type { SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import type { RepositoryConfig, SearchContextConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import { firstInvalidRegex, invalidRegexError } from '../query/parser.js';
import { planTerms, resultTypeOf } from '../query/plan.js';
import type {
  CheckRegexesResult,
  CheckRegexesTask,
  MatchTextsResult,
  MatchTextsTask,
  RenderedFiles,
  RenderedPart,
  RenderedResponse,
  RenderMergedTask,
  RenderSpec,
  ScoredMatch,
  SearchSignal,
  SearchTask,
  SearchTaskResult,
  ShardsOutcome,
} from '../worker/search-protocol.js';
import { Admissions, type Admission } from './admissions.js';
import { groupShards, shardFiles, type Catalog } from './catalog.js';
import {
  accumulateStats,
  buildResponse,
  buildsOnFrontEnd,
  collectFiles,
  emptyStats,
  renderFiles,
  responseJson,
  responseOpening,
  responsePieces,
  timeStats,
  type Built,
  type FileSink,
  type Found,
} from './response/build.js';
import { mergeRenderedFiles, type MergedFiles } from './response/rendered-files.js';
import { PREFIX_ROOM, prefixedResponse, type RenderSlots } from './response/render-slots.js';
import { emptyEvaluationStats } from './shard/evaluate.js';
import { findPackedMatch, unpackMatch } from './packed-matches.js';
import { PatternChecks } from './pattern-checks.js';
import { ShardCache } from './shard-cache.js';
import { cancelSearch, createSignal } from './signal.js';
import { SearchPoolClosingError, startWorkerThreads, type SearchWorkers, type WorkerThreads } from './workers.js';

export interface SearchPoolOptions {
  workers: number;
  /** Searches in flight at most; more are refused with SearchQueueFullError, unless another caller holds more (admissions.ts). */
  maxQueuedSearches: number;
  timeBudgetMs: number;
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  /** Bytes of a render slot (see response/render-slots.ts); a response whose members need more travels as bytes of its own. Default 64 KiB. */
  renderSlotBytes?: number;
  /** How long a search task holds its worker while another caller has tasks (workers.ts). Default 50 ms. */
  taskSliceMs?: number;
}

export class SearchQueueFullError extends Error {
  /** `displaced`: the search was admitted, then gave its place to another caller's (admissions.ts). */
  constructor(limit: number, displaced = false) {
    super(`the search queue is full (${limit} searches in flight)${displaced ? ': this search gave its place to another caller' : ''}`);
    this.name = 'SearchQueueFullError';
  }
}

export interface SearchCall {
  /** Which repositories the caller may see (the rest do not exist for this search). */
  visible: (repo: RepositoryConfig) => boolean;
  /** Set by the caller to cancel (client gone); the pool also sets it when the search ends. */
  signal?: SearchSignal;
  /**
   * Who asks (server/rate-limit.ts `callerKey`): tasks waiting for a worker are taken caller by caller in
   * turn (caller-queue.ts). Searches without one take their turns together.
   */
  caller?: string;
}

/** A part of a streamed search: a SearchResponse whose files are UTF-8 JSON. */
export type StreamPart = Omit<SearchResponse, 'files'> & { files: Uint8Array };

/** How a streamed search ended: its parts' stats summed (`accumulateStats`), and whether they hold every match. */
export interface StreamSummary {
  accumulatedStats: SearchStats;
  isSearchExhaustive: boolean;
}

/** A search's response as UTF-8 JSON, and its stats. */
export interface SearchJson {
  stats: SearchStats;
  /**
   * The response's bytes in order, in one piece or (merged from split groups) in many, written as they are.
   * Valid until `release`: it may be a render slot's memory, which the next search reuses.
   */
  body: readonly Uint8Array[];
  /** Gives the body's memory back once it is written or dropped; idempotent. */
  release(): void;
}

/** A search's response rendered by a worker, or its groups' files rendered by theirs, or what is left to render here: a small one's, or a failed worker's. */
type Rendering = { waitMs: number } & (
  | { rendered: RenderedResponse }
  | { files: MergedFiles }
  | { here: { matches: ScoredMatch[]; shardFiles: string[]; outcomes: Omit<ShardsOutcome, 'matches'>[] } }
);

/** Told each outcome of a search's tasks as it comes, with the shard files its matches index, and the files it rendered. */
type OnOutcome = (outcome: ShardsOutcome, shardFiles: string[], rendered?: RenderedFiles) => void;

/** Outcomes of several tasks as one: the matches index every task's files, one task's after the other's. */
interface MergedOutcomes {
  matches: ScoredMatch[];
  shardFiles: string[];
  outcomes: Omit<ShardsOutcome, 'matches'>[];
  /** The files of the tasks that rendered theirs, with where their shard files start in `shardFiles`; their matches are not in `matches`. */
  rendered: { files: RenderedFiles; shardOffset: number }[];
  add: OnOutcome;
  /** Adds the matches of the tasks that rendered their files to `matches`, from their packed form. */
  unpackRendered(): void;
}

function mergedOutcomes(): MergedOutcomes {
  const merged: MergedOutcomes = {
    matches: [],
    shardFiles: [],
    outcomes: [],
    rendered: [],
    add: ({ matches, ...outcome }, shardFiles, rendered) => {
      if (rendered) merged.rendered.push({ files: rendered, shardOffset: merged.shardFiles.length });
      for (const match of matches) {
        match.shard += merged.shardFiles.length;
        merged.matches.push(match);
      }
      merged.shardFiles.push(...shardFiles);
      merged.outcomes.push(outcome);
    },
    unpackRendered: () => {
      for (const { files, shardOffset } of merged.rendered) {
        for (let index = 0; index < files.packedMatches.docs.length; index++) merged.matches.push(unpackMatch(files.packedMatches, index, shardOffset));
      }
    },
  };
  return merged;
}

/** The task doing the rest of `task`'s shards from where it gave its worker up; the response is rendered from every part. */
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

/** When a search started and when its query was planned (performance.now() of this thread), and whose it is. */
interface SearchRun {
  started: number;
  planned: number;
  /** SearchCall's `caller`: the search's tasks wait in its turns (caller-queue.ts). */
  caller: string | undefined;
  /** Its place among the searches in flight, kept once a worker answered one of its tasks. */
  admission: Admission;
}

export class SearchPool {
  private readonly workers: SearchWorkers;
  private readonly shards = new ShardCache();
  private readonly renderSlots: RenderSlots;
  /** Where a response built here is rendered before jsonOf copies it out: no buffer of its own per response. */
  private readonly renderScratch = Buffer.allocUnsafeSlow(64 * 1024);
  private readonly patternChecks = new PatternChecks();
  private catalog: Catalog = { generation: -1, repositories: [] };
  private readonly admissions: Admissions;
  private workerFailures = 0;
  private shardFailures = 0;
  private tasksYielded = 0;
  private searchesDisplaced = 0;
  /** The signals of the searches in flight, cancelled by close. */
  private readonly searchSignals = new Set<SearchSignal>();
  /** The next step of mapping the current catalog's shards on this thread in the background. */
  private mapping: NodeJS.Immediate | undefined;

  /** `threads`: started for these options by startWorkerThreads ahead of the pool (the daemon does), else now. */
  constructor(
    private options: SearchPoolOptions,
    threads: WorkerThreads = startWorkerThreads(options),
  ) {
    this.workers = threads.workers;
    this.renderSlots = threads.renderSlots;
    this.admissions = new Admissions(options.maxQueuedSearches);
  }

  /**
   * Switches to a new manifest generation. Every worker maps its shards
   * (workers.ts), and so does this thread, in the background, one per turn of
   * the event loop (docs/design.md, "Shards and generations"). A search that
   * needs a shard not yet mapped maps it itself.
   */
  setCatalog(catalog: Catalog): void {
    this.catalog = catalog;
    this.shards.advance(catalog.generation);
    const files = shardFiles(catalog);
    this.workers.mapShards(catalog.generation, files);
    let next = 0;
    const mapNext = () => {
      const file = files[next++];
      if (file === undefined) return;
      this.shards.prefetch(file);
      this.mapping = setImmediate(mapNext);
    };
    clearImmediate(this.mapping); // a newer generation replaces what was left of the last one
    this.mapping = setImmediate(mapNext);
  }

  /** New link base or contexts (the port bound for `listen.port` 0, a reloaded config); the pool's size stays. */
  configure(options: Pick<SearchPoolOptions, 'publicUrl' | 'contexts' | 'timeBudgetMs'>): void {
    this.options = { ...this.options, ...options };
  }

  get searchesInFlight(): number {
    return this.admissions.size;
  }

  get shardsMapped(): number {
    return this.shards.size;
  }

  /** Render slots held: by searches in flight, and by responses not yet written. */
  get renderSlotsInUse(): number {
    return this.renderSlots.inUse;
  }

  /** The fewest shards any search worker has mapped of the current generation (0 until each has mapped one). */
  get workerShardsMapped(): number {
    return this.workers.shardsMapped;
  }

  /** Tasks that failed in a worker (not corrupt shards: those are per-search `crashes`). */
  get failedTasks(): number {
    return this.workerFailures;
  }

  /** Shards that searches could not read (the `crashes` of every response): corrupt, missing, or changed under their mappings. */
  get failedShards(): number {
    return this.shardFailures;
  }

  /** Search tasks that gave their worker up to another caller's (contention.ts). */
  get yieldedTasks(): number {
    return this.tasksYielded;
  }

  /** Searches that gave their place in a full queue to another caller's (admissions.ts). */
  get displacedSearches(): number {
    return this.searchesDisplaced;
  }

  /**
   * The query of `request` (query/plan.ts), its regexes compiled by a worker (RE2 takes up to 100 ms and
   * more over a 4 KiB pattern, time every request would wait for on this thread) unless a worker has checked
   * them all before (PatternChecks), in the turns of `caller` (SearchCall). Throws what `plan` throws, and SearchQueueFullError.
   */
  async plan(request: SearchRequest, caller?: string): Promise<QueryNode> {
    const parsed = planTerms(request, this.options.contexts);
    if (parsed.regexTerms.length === 0) return parsed.node; // planned here and now, never counted in flight
    const patterns: CheckRegexesTask = parsed.regexTerms.map((term) => term.value);
    const checks = this.patternChecks.recall(patterns) ?? (await this.checkedByWorker(patterns, caller));
    const failure = firstInvalidRegex(patterns, (_, index) => checks[index]!);
    if (failure) throw invalidRegexError(request.query, parsed.regexTerms[failure.index]!, failure.message);
    return parsed.node;
  }

  private async checkedByWorker(patterns: CheckRegexesTask, caller: string | undefined): Promise<CheckRegexesResult> {
    const checks = await this.admitted(caller, async () => (await this.workers.run(patterns, 'checkRegexes', caller)) as CheckRegexesResult);
    this.patternChecks.rememberAll(patterns, checks);
    return checks;
  }

  /**
   * Which of `texts` match the case-insensitive RE2 regex `pattern`, tested by a worker (query/text-regex.ts),
   * counted as a search in flight, in the turns of `caller` (SearchCall). Throws SearchQueueFullError.
   */
  async matchTexts(pattern: string, texts: string[], caller?: string): Promise<MatchTextsResult> {
    return this.admitted(caller, async () => {
      const task: MatchTextsTask = { pattern, texts };
      return (await this.workers.run(task, 'matchTexts', caller)) as MatchTextsResult;
    });
  }

  /** Runs one search of `query`, planned from `request` (`plan`). Throws SearchQueueFullError when too many searches are in flight. */
  async search(query: QueryNode, request: SearchRequest, call: SearchCall): Promise<SearchResponse> {
    return this.admit(call, (signal, searchRun) => this.fanOut(request, query, signal, searchRun, this.groupsFor(call)));
  }

  /**
   * Like `search`, handing each shard group's part of the response to `onPart` as the group completes,
   * within what is left of `matches` (the parts are not ranked against each other, and no whole response
   * is built). A part too big to build here cheaply (`buildsHere`) is built by a worker.
   */
  async stream(query: QueryNode, request: SearchRequest, call: SearchCall, onPart: (part: StreamPart) => void): Promise<StreamSummary> {
    return this.admit(call, async (signal, searchRun) => {
      const accumulatedStats = emptyStats();
      let isSearchExhaustive = true;
      const take = (part: StreamPart) => {
        accumulateStats(accumulatedStats, part.stats);
        isSearchExhaustive &&= part.isSearchExhaustive;
        if (part.repositoryInfo.length > 0) onPart(part);
      };
      const building: Promise<void>[] = [];
      let budget = request.matches;
      // type:repo: a repository's shards may fall in several groups, so the groups' outcomes make one part, holding
      // each repository's first file in index order as an unsplit search does (response/build.ts).
      const repositories = resultTypeOf(query) === 'repo' ? mergedOutcomes() : undefined;
      const waitMs = await this.runGroups(
        request,
        query,
        signal,
        searchRun,
        this.groupsFor(call),
        repositories?.add ??
          (({ matches, ...outcome }, shardFiles) => {
            const partRequest = { ...request, matches: Math.max(budget, 0) };
            if (budget <= 0) {
              // `matches` is spent: the group's matches are counted, not returned.
              take(this.partHere(partRequest, query, [], [outcome], shardFiles, searchRun));
              isSearchExhaustive &&= matches.length === 0 && outcome.stop === 'complete';
            } else if (buildsOnFrontEnd(request, query, Math.min(budget, outcome.totalRanges))) {
              const part = this.partHere(partRequest, query, matches, [outcome], shardFiles, searchRun);
              budget -= part.counted;
              take(part);
            } else {
              // The worker's part holds this many unless the content bound cuts it shorter.
              budget -= Math.min(budget, outcome.totalRanges);
              const built = this.partByWorker(partRequest, query, matches, outcome, shardFiles, searchRun).then(take);
              built.catch(() => {}); // awaited below, unless another group's task failed first (the pool closing)
              building.push(built);
            }
          }),
      );
      if (repositories && repositories.outcomes.length > 0)
        take(this.partHere(request, query, repositories.matches, repositories.outcomes, repositories.shardFiles, searchRun));
      await Promise.all(building);
      accumulatedStats.wait = nanoseconds(waitMs);
      accumulatedStats.duration = nanoseconds(performance.now() - searchRun.started);
      if (!isSearchExhaustive && accumulatedStats.flushReason === 'FLUSH_REASON_FINAL_FLUSH') accumulatedStats.flushReason = 'FLUSH_REASON_MAX_SIZE';
      this.shardFailures += accumulatedStats.crashes;
      return { accumulatedStats, isSearchExhaustive };
    });
  }

  /**
   * A stream's part built on this thread from `outcomes` (their matches index `shardFiles`), with the results it
   * counts against `matches`: match ranges, or files for type:file and type:repo.
   */
  private partHere(
    request: SearchRequest,
    query: QueryNode,
    matches: ScoredMatch[],
    outcomes: Omit<ShardsOutcome, 'matches'>[],
    shardFiles: string[],
    searchRun: SearchRun,
  ): StreamPart & { counted: number } {
    const found = this.shards.resolve(matches, shardFiles, outcomes[0]!.stats);
    let filesReturned = 0;
    const countedFiles = (): FileSink<Buffer[]> => {
      const files = renderFiles(this.renderScratch);
      return {
        add: (file, match) => {
          filesReturned++;
          files.add(file, match);
        },
        result: () => files.result(),
      };
    };
    const part = buildResponse(countedFiles, request, query, found, outcomes, this.options.publicUrl, searchedNow(searchRun));
    const { stats, repositoryInfo, isSearchExhaustive } = part;
    // A copy: the files were written into the scratch the next response reuses.
    return {
      stats,
      files: Buffer.concat(part.files),
      repositoryInfo,
      isSearchExhaustive,
      counted: resultTypeOf(query) ? filesReturned : stats.actualMatchCount,
    };
  }

  /** A stream's part built by a worker (renderPart); here when that fails (its worker died). */
  private async partByWorker(
    request: SearchRequest,
    query: QueryNode,
    matches: ScoredMatch[],
    outcome: Omit<ShardsOutcome, 'matches'>,
    shardFiles: string[],
    searchRun: SearchRun,
  ): Promise<StreamPart> {
    const { timeOrigin } = performance;
    const render = {
      request,
      publicUrl: this.options.publicUrl,
      startedEpochMs: timeOrigin + searchRun.started,
      plannedEpochMs: timeOrigin + searchRun.planned,
    };
    const task: RenderMergedTask = { generation: this.catalog.generation, shardFiles, query, matches, outcomes: [outcome], render };
    try {
      return (await this.workers.run(task, 'renderPart', searchRun.caller)) as RenderedPart;
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      this.workerFailures++;
      return this.partHere(request, query, matches, [outcome], shardFiles, searchRun);
    }
  }

  /**
   * Like `search`, answering the response as JSON text, built and serialized by a worker: by the one
   * that ran the search when it ran as one task (every search under load), else, unless the response
   * is small, by one more task given the groups' outcomes.
   */
  async searchJson(query: QueryNode, request: SearchRequest, call: SearchCall): Promise<SearchJson> {
    return this.admit(call, async (signal, searchRun) => {
      const groups = this.groupsFor(call);
      const { timeOrigin } = performance;
      const slot = this.renderSlots.acquire();
      const render = {
        request,
        publicUrl: this.options.publicUrl,
        startedEpochMs: timeOrigin + searchRun.started,
        plannedEpochMs: timeOrigin + searchRun.planned,
        slot,
      };
      // The slot goes with a response written into it; otherwise it is free again once the task answered
      // (a task that failed, its worker dying say, writes nothing after that).
      let slotHandedOver = false;
      try {
        const answer =
          groups.length === 1
            ? await this.searchRendered(request, query, signal, searchRun, groups[0]!, render)
            : await this.fanOutRendered(request, query, signal, searchRun, groups, render);
        if ('rendered' in answer) {
          slotHandedOver = answer.rendered.results === null;
          return this.renderedJson(answer.rendered, answer.waitMs, slot);
        }
        if ('files' in answer) {
          // The merged files as views of the groups' bytes, never copied here.
          const { stats } = answer.files;
          timeStats(stats, searchedNow(searchRun));
          this.waited(stats, answer.waitMs);
          return { stats, body: responsePieces(answer.files), release: noRelease };
        }
        const { matches, shardFiles, outcomes } = answer.here;
        return jsonOf(
          this.respond(
            () => renderFiles(this.renderScratch),
            request,
            query,
            this.shards.resolve(matches, shardFiles, outcomes[0]!.stats),
            outcomes,
            searchRun,
            answer.waitMs,
          ),
        );
      } finally {
        if (slot !== undefined && !slotHandedOver) this.renderSlots.release(slot);
      }
    });
  }

  /**
   * The search as one task that renders its response; a crash outcome (its worker failed) when it could not.
   * A task that gave its worker up is resumed by others, and their outcomes rendered as `fanOutRendered`'s.
   */
  private async searchRendered(
    request: SearchRequest,
    query: QueryNode,
    signal: SearchSignal,
    searchRun: SearchRun,
    shardFiles: string[],
    render: RenderSpec,
  ): Promise<Rendering> {
    const submitted = performance.now();
    const task = this.task(request, query, signal, searchRun, shardFiles, render);
    const result = await this.runTask(task, searchRun);
    const waitMs = performance.now() - submitted;
    if (result.kind === 'rendered') return { rendered: result, waitMs };
    const outcome = outcomeOf(result);
    if (!outcome.resume) return { here: { matches: outcome.matches, shardFiles, outcomes: [outcome] }, waitMs };
    const merged = mergedOutcomes();
    merged.add(outcome, shardFiles);
    const restWaitMs = await this.runGroup(resumed(task, outcome.resume), searchRun, merged.add);
    return this.renderMerged(request, query, searchRun, merged, render, Math.max(waitMs, restWaitMs));
  }

  /**
   * The search as one task per group, each rendering its files unless they are few, merged here
   * (response/rendered-files.ts); when they cannot be (a task did not render, or a match is not to be had), a task
   * rendering the groups' merged outcomes unless the response is small (`buildsOnFrontEnd`); when it is, or
   * that task fails, those outcomes (the matches indexing every group's files, one group's after the other's).
   */
  private async fanOutRendered(
    request: SearchRequest,
    query: QueryNode,
    signal: SearchSignal,
    searchRun: SearchRun,
    groups: string[][],
    render: RenderSpec,
  ): Promise<Rendering> {
    const merged = mergedOutcomes();
    const waitMs = await this.runGroups(request, query, signal, searchRun, groups, merged.add, { ...render, slot: undefined });
    const files = merged.rendered.length === merged.outcomes.length ? this.mergedFiles(request, merged) : undefined;
    if (files) return { files, waitMs };
    merged.unpackRendered();
    return this.renderMerged(request, query, searchRun, merged, render, waitMs);
  }

  /** The files every task of `merged` rendered, merged here (response/rendered-files.ts); undefined when they cannot be. */
  private mergedFiles(request: SearchRequest, merged: MergedOutcomes): MergedFiles | undefined {
    const matchOf = (part: number, file: number) => {
      const { files, shardOffset } = merged.rendered[part]!;
      const match = findPackedMatch(files.packedMatches, files.shards[file]!, files.docs[file]!, shardOffset);
      return match && this.shards.resolve([match], merged.shardFiles, emptyEvaluationStats())[0];
    };
    return mergeRenderedFiles(
      merged.rendered.map((part) => part.files),
      request,
      this.options.publicUrl,
      matchOf,
    );
  }

  /** `merged` rendered by a worker, or left to render here (see `fanOutRendered`). */
  private async renderMerged(
    request: SearchRequest,
    query: QueryNode,
    searchRun: SearchRun,
    merged: MergedOutcomes,
    render: RenderSpec,
    waitMs: number,
  ): Promise<Rendering> {
    const { matches, shardFiles, outcomes } = merged;
    const ranges = Math.min(
      request.matches,
      outcomes.reduce((sum, outcome) => sum + outcome.totalRanges, 0),
    );
    if (buildsOnFrontEnd(request, query, ranges)) return { here: { matches, shardFiles, outcomes }, waitMs };
    const task: RenderMergedTask = { generation: this.catalog.generation, shardFiles, query, matches, outcomes, render };
    try {
      return { rendered: (await this.workers.run(task, 'renderMerged', searchRun.caller)) as RenderedResponse, waitMs };
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      this.workerFailures++;
      return { here: { matches, shardFiles, outcomes }, waitMs };
    }
  }

  /** The worker's response with the wait for it, its members in SearchResponse's order: in `slot` when `results` is null. */
  private renderedJson({ stats, results, slotBytesUsed }: RenderedResponse, waitMs: number, slot: number | undefined): SearchJson {
    const prefix = responseOpening(this.waited(stats, waitMs));
    if (results === null) {
      const { body, release } = this.renderSlots.response(slot!, prefix, slotBytesUsed);
      return { stats, body: [body], release };
    }
    const { body } = prefixedResponse(Buffer.from(results.buffer, results.byteOffset, results.byteLength), prefix, results.byteLength - PREFIX_ROOM);
    return { stats, body: [body], release: noRelease };
  }

  /** `stats` with the search's wait, its crashes counted. */
  private waited(stats: SearchStats, waitMs: number): SearchStats {
    stats.wait = nanoseconds(waitMs);
    this.shardFailures += stats.crashes;
    return stats;
  }

  /** Counts `run` as a search in flight of `caller` that keeps its place (or refuses it) for as long as it runs. */
  private async admitted<T>(caller: string | undefined, run: () => Promise<T>): Promise<T> {
    const admission = this.admissions.admit(caller ?? '');
    if (admission === undefined) throw new SearchQueueFullError(this.options.maxQueuedSearches);
    try {
      return await run();
    } finally {
      this.admissions.release(admission);
    }
  }

  /**
   * `run` admitted, with the search's signal (cancelled when it ends) and its start. Until a worker answers one of
   * its tasks it may give its place to another caller's search (admissions.ts): it is cancelled and rejects at once
   * with SearchQueueFullError; what `run` still does rejects at its next answer (`runTask`), unseen.
   */
  private async admit<T>(call: Pick<SearchCall, 'signal' | 'caller'>, run: (signal: SearchSignal, searchRun: SearchRun) => Promise<T>): Promise<T> {
    const started = performance.now();
    const signal = call.signal ?? createSignal();
    let gaveItsPlace!: (error: SearchQueueFullError) => void;
    const displaced = new Promise<never>((_, reject) => (gaveItsPlace = reject));
    const admission = this.admissions.admit(call.caller ?? '', () => {
      this.searchesDisplaced++;
      cancelSearch(signal);
      gaveItsPlace(new SearchQueueFullError(this.options.maxQueuedSearches, true));
    });
    if (admission === undefined) throw new SearchQueueFullError(this.options.maxQueuedSearches);
    this.searchSignals.add(signal);
    const running = run(signal, { started, planned: performance.now(), caller: call.caller, admission });
    running.catch(() => {}); // a displaced search's rejection, nobody's to see
    try {
      return await Promise.race([running, displaced]);
    } finally {
      this.admissions.release(admission);
      this.searchSignals.delete(signal);
      cancelSearch(signal); // tasks still queued for a finished search return at once
    }
  }

  /**
   * The shard groups of the shards `call` may see, one per task. Each search in flight gets an equal
   * share of the workers, at least one. Splitting a search only pays while workers would otherwise
   * idle: under load it adds task round trips, and parallel groups of a capped search both scan
   * until together they have enough.
   */
  private groupsFor(call: Pick<SearchCall, 'visible'>): string[][] {
    const files = this.catalog.repositories.filter((repo) => call.visible(repo.config)).flatMap((repo) => repo.shards);
    return groupShards(files, Math.max(1, Math.floor(this.options.workers / this.admissions.size)));
  }

  /** One literal, not a spread plus members: docs/design.md, "The hot path's memory". */
  private task(
    request: SearchRequest,
    query: QueryNode,
    signal: SearchSignal,
    searchRun: SearchRun,
    shardFiles: string[],
    render?: RenderSpec,
    renderFiles?: RenderSpec,
  ): SearchTask {
    return {
      generation: this.catalog.generation,
      shardFiles,
      query,
      contexts: this.options.contexts,
      wanted: request.matches + 1,
      deadlineEpochMs: performance.timeOrigin + searchRun.started + this.options.timeBudgetMs,
      signal,
      render,
      renderFiles,
    };
  }

  /** The search over `groups`, one task each, merged and built here as objects. */
  private async fanOut(request: SearchRequest, query: QueryNode, signal: SearchSignal, searchRun: SearchRun, groups: string[][]): Promise<SearchResponse> {
    const found: Found[] = [];
    const outcomes: Omit<ShardsOutcome, 'matches'>[] = [];
    const waitMs = await this.runGroups(request, query, signal, searchRun, groups, (outcome, shardFiles) => {
      for (const match of this.shards.resolve(outcome.matches, shardFiles, outcome.stats)) found.push(match);
      outcomes.push(outcome);
    });
    return this.respond(collectFiles, request, query, found, outcomes, searchRun, waitMs);
  }

  /** One task per group (`runGroup`), rendering its files with `renderFiles`; each outcome goes to `onOutcome` as it comes. Resolves with the longest wait for a task. */
  private async runGroups(
    request: SearchRequest,
    query: QueryNode,
    signal: SearchSignal,
    searchRun: SearchRun,
    groups: string[][],
    onOutcome: OnOutcome,
    renderFiles?: RenderSpec,
  ): Promise<number> {
    const waits = await Promise.all(
      groups.map((shardFiles) => this.runGroup(this.task(request, query, signal, searchRun, shardFiles, undefined, renderFiles), searchRun, onOutcome)),
    );
    return Math.max(0, ...waits);
  }

  /**
   * `task`, then the tasks resuming it where each gave its worker up (search/contention.ts); each outcome goes to
   * `onOutcome` with the files its matches index. Resolves with the longest wait for one of them.
   */
  private async runGroup(task: SearchTask, searchRun: SearchRun, onOutcome: OnOutcome): Promise<number> {
    let waitMs = 0;
    for (let next: SearchTask | undefined = task; next !== undefined;) {
      const submitted = performance.now();
      const result = await this.runTask(next, searchRun);
      if (result.kind === 'rendered') throw new Error('a search task without `render` answered a rendered response');
      waitMs = Math.max(waitMs, performance.now() - submitted);
      const outcome = outcomeOf(result);
      onOutcome(outcome, next.shardFiles, result.kind === 'files' ? result : undefined);
      next = outcome.resume && resumed(next, outcome.resume);
    }
    return waitMs;
  }

  private respond<T>(
    files: () => FileSink<T>,
    request: SearchRequest,
    query: QueryNode,
    found: Found[],
    outcomes: Omit<ShardsOutcome, 'matches'>[],
    searchRun: SearchRun,
    waitMs: number,
  ): Built<T> {
    const response = buildResponse(files, request, query, found, outcomes, this.options.publicUrl, searchedNow(searchRun));
    response.stats.wait = nanoseconds(waitMs);
    this.shardFailures += response.stats.crashes;
    return response;
  }

  /** The task's answer; a worker that failed (or died) costs its group's results, never the search. */
  /** `task` run by a worker (a crash outcome when its worker failed); the search keeps its place from then on, unless displaced before (see `admit`). */
  private async runTask(task: SearchTask, searchRun: SearchRun): Promise<SearchTaskResult> {
    let result: SearchTaskResult;
    try {
      result = (await this.workers.run(task, undefined, searchRun.caller, task.resume !== undefined)) as SearchTaskResult;
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      this.workerFailures++;
      const stats = { ...emptyEvaluationStats(), crashes: task.shardFiles.length, shardFilesConsidered: task.shardFiles.length };
      result = { kind: 'matches', matches: [], totalRanges: 0, stop: 'complete', stats };
    }
    if (searchRun.admission.displaced) throw new SearchQueueFullError(this.options.maxQueuedSearches, true);
    searchRun.admission.keep();
    if (result.kind === 'matches' && result.resume) this.tasksYielded++;
    return result;
  }

  /** Whether the workers take tasks (the systemd watchdog's probe): workers.ts, `responsive`. */
  responsive(timeoutMs: number): Promise<boolean> {
    return this.workers.responsive(timeoutMs);
  }

  /** Resolves true when a worker answers a no-op task within `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean> {
    return this.workers.ping(timeoutMs);
  }

  /** Refuses new searches (SearchPoolClosingError, 503), stops those in flight at their next check, and ends the workers. */
  async close(): Promise<void> {
    clearImmediate(this.mapping);
    await this.workers.close(() => {
      for (const signal of this.searchSignals) cancelSearch(signal);
    });
  }
}

const noRelease = () => {};

function jsonOf(response: Built<Buffer[]>): SearchJson {
  return { stats: response.stats, body: [responseJson(response)], release: noRelease };
}

const nanoseconds = (ms: number) => Math.round(ms * 1e6);

/** `searchRun` with the search done now: one literal, not a spread plus a member (docs/design.md, "The hot path's memory"). */
const searchedNow = ({ started, planned }: SearchRun) => ({ started, planned, searched: performance.now() });
