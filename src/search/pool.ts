/**
 * A daemon's searches: admits each (admissions.ts) as a SearchRun over the shard groups of the repositories its
 * caller may see (as many groups as the search's share of the workers), and answers it through one pipeline
 * (docs/design.md, "The search path"): the run's frames come from a source (worker-source.ts), one merger ranks
 * and cuts them (merger.ts), and a sink writes the answer as JSON, objects or a stream (sinks.ts). The pool also
 * keeps the catalog its workers and this thread have mapped, checks a query's regexes off this thread, and counts.
 */
import type { SearchRequest, SearchResponse } from '../api/types.js';
import type { RepositoryConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import { firstInvalidRegex, invalidRegexError } from '../query/regex-checks.js';
import { planTerms } from '../query/plan.js';
import type { CheckRegexesResult, CheckRegexesTask, MatchTextsResult, MatchTextsTask, SearchSignal } from '../worker/search-protocol.js';
import { Admissions } from './admissions.js';
import { groupShards, shardFiles, type Catalog } from './catalog.js';
import { PatternChecks } from './pattern-checks.js';
import { SearchQueueFullError } from './search-errors.js';
import { SearchRun, type PoolCounters, type SearchSettings } from './search-run.js';
import { ShardCache } from './shard-cache.js';
import { cancelSearch, createSignal } from './signal.js';
import type { FilesPart, Redraft } from './response/rendered-files.js';
import { answerFiles, answerJson, answerObjects, answerStream, type FrontEnd, type SearchJson, type StreamPart, type StreamSummary } from './sinks.js';
import { FRONT_END_SLICE_MS, WorkerSource } from './worker-source.js';
import { FEW_CANDIDATES_BYTES, taskSplit } from './task-split.js';
import { startWorkerThreads, type SearchWorkers, type WorkerThreads } from './workers.js';

export interface SearchPoolOptions extends SearchSettings {
  workers: number;
  /** Bytes of a render slot (see response/render-slots.ts); a response whose members need more travels as bytes of its own. Default 64 KiB. */
  renderSlotBytes?: number;
  /** How long a search task holds its worker while another caller has tasks (workers.ts). Default 50 ms. */
  taskSliceMs?: number;
  /** A search whose candidates come from fewer posting bytes runs as one task (task-split.ts). Default FEW_CANDIDATES_BYTES. */
  oneTaskBelowBytes?: number;
  /** How long the front end runs such a task itself before a worker takes the rest (worker-source.ts); 0: never. Default FRONT_END_SLICE_MS. */
  frontEndSliceMs?: number;
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
  /** An exhaustive search's reader (sinks.ts `answerStream`): resolves once the client has taken enough of the parts handed on. */
  ready?: () => Promise<void>;
}

export class SearchPool {
  private readonly workers: SearchWorkers;
  private readonly frontEnd: FrontEnd;
  private readonly patternChecks = new PatternChecks();
  private catalog: Catalog = { generation: -1, repositories: [] };
  private readonly admissions: Admissions;
  private readonly counters: PoolCounters = { workerFailures: 0, shardFailures: 0, tasksYielded: 0, searchesDisplaced: 0 };
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
    const shards = new ShardCache();
    this.frontEnd = {
      source: new WorkerSource(threads.workers, shards, options.frontEndSliceMs ?? FRONT_END_SLICE_MS),
      shards,
      renderSlots: threads.renderSlots,
      scratch: Buffer.allocUnsafeSlow(64 * 1024),
    };
    this.admissions = new Admissions(options.maxQueuedSearches);
  }

  /**
   * Switches to a new manifest generation. Every worker maps its shards
   * (workers.ts), and so does this thread once they have (their mappings are
   * noted then: docs/design.md, "Start"), in the background, one per turn of
   * the event loop (docs/design.md, "Shards and generations"). A search that
   * needs a shard not yet mapped maps it itself.
   */
  setCatalog(catalog: Catalog): void {
    const { shards } = this.frontEnd;
    this.catalog = catalog;
    shards.advance(catalog.generation);
    const files = shardFiles(catalog);
    this.workers.mapShards(catalog.generation, files);
    let next = 0;
    const mapNext = () => {
      const file = files[next++];
      if (file === undefined) return;
      shards.prefetch(file);
      this.mapping = setImmediate(mapNext);
    };
    clearImmediate(this.mapping); // a newer generation replaces what was left of the last one
    this.workers.afterMapping(() => (this.mapping = setImmediate(mapNext)));
  }

  /** New link base or contexts (the port bound for `listen.port` 0, a reloaded config); the pool's size stays. */
  configure(options: Pick<SearchPoolOptions, 'publicUrl' | 'contexts' | 'timeBudgetMs'>): void {
    this.options = { ...this.options, ...options };
  }

  get searchesInFlight(): number {
    return this.admissions.size;
  }

  get shardsMapped(): number {
    return this.frontEnd.shards.size;
  }

  /** Render slots held: by searches in flight, and by responses not yet written. */
  get renderSlotsInUse(): number {
    return this.frontEnd.renderSlots.inUse;
  }

  /** The fewest shards any search worker has mapped of the current generation (0 until each has mapped one). */
  get workerShardsMapped(): number {
    return this.workers.shardsMapped;
  }

  /** Resolves the first time every search worker has mapped the shards of a generation. */
  get firstMapping(): Promise<void> {
    return this.workers.firstMapping;
  }

  /** Tasks that failed in a worker (not corrupt shards: those are per-search `crashes`). */
  get failedTasks(): number {
    return this.counters.workerFailures;
  }

  /** Shards that searches could not read (the `crashes` of every response): corrupt, missing, or changed under their mappings. */
  get failedShards(): number {
    return this.counters.shardFailures;
  }

  /** Search tasks that gave their worker up to another caller's (contention.ts). */
  get yieldedTasks(): number {
    return this.counters.tasksYielded;
  }

  /** Searches that gave their place in a full queue to another caller's (admissions.ts). */
  get displacedSearches(): number {
    return this.counters.searchesDisplaced;
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

  /** Runs one search of `query`, planned from `request` (`plan`), answered as objects. Throws SearchQueueFullError when too many searches are in flight. */
  async search(query: QueryNode, request: SearchRequest, call: SearchCall): Promise<SearchResponse> {
    return this.admit(query, request, call, (run, groups) => answerObjects(run, groups, this.frontEnd));
  }

  /** Like `search`, answered as JSON text (sinks.ts `answerJson`), built where it costs this thread least. */
  async searchJson(query: QueryNode, request: SearchRequest, call: SearchCall): Promise<SearchJson> {
    return this.admit(query, request, call, (run, groups) => answerJson(run, groups, this.frontEnd));
  }

  /** Like `search`, as parts of files ranked for another node to merge with its own (sinks.ts `answerFiles`). */
  async searchFiles(query: QueryNode, request: SearchRequest, call: SearchCall): Promise<{ parts: FilesPart[]; redraft: Redraft }> {
    return this.admit(query, request, call, (run, groups) => answerFiles(run, groups, this.frontEnd));
  }

  /** Like `search`, handing each shard group's part of the answer to `onPart` as the group completes (sinks.ts `answerStream`). */
  async stream(query: QueryNode, request: SearchRequest, call: SearchCall, onPart: (part: StreamPart) => void): Promise<StreamSummary> {
    return this.admit(query, request, call, (run, groups) => answerStream(run, groups, this.frontEnd, onPart, call.ready));
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
   * `answer` of the search admitted as a SearchRun, with its shard groups; its signal is cancelled when it ends. Until a
   * worker answers one of its tasks it may give its place to another caller's search (admissions.ts): it is cancelled
   * and rejects at once with SearchQueueFullError; what `answer` still does rejects at its next answer (worker-source.ts), unseen.
   */
  private async admit<T>(query: QueryNode, request: SearchRequest, call: SearchCall, answer: (run: SearchRun, groups: string[][]) => Promise<T>): Promise<T> {
    const started = performance.now();
    const signal = call.signal ?? createSignal();
    let gaveItsPlace!: (error: SearchQueueFullError) => void;
    const displaced = new Promise<never>((_, reject) => (gaveItsPlace = reject));
    const admission = this.admissions.admit(call.caller ?? '', () => {
      this.counters.searchesDisplaced++;
      cancelSearch(signal);
      gaveItsPlace(new SearchQueueFullError(this.options.maxQueuedSearches, true));
    });
    if (admission === undefined) throw new SearchQueueFullError(this.options.maxQueuedSearches);
    this.searchSignals.add(signal);
    const { generation } = this.catalog;
    const { groups, startsHere } = this.groupsFor(query, call);
    const init = { request, query, signal, started, caller: call.caller, admission, generation, startsHere };
    const running = answer(new SearchRun({ ...init, settings: this.options, counters: this.counters }), groups);
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
   * The shard groups of the shards `call` may see, one per task, and whether this thread starts the one task of a search
   * with few candidates (task-split.ts). Each search in flight gets an equal share of the workers, at least one.
   * Splitting a search only pays while workers would otherwise idle: under load it adds task round
   * trips, and parallel groups of a capped search both scan until together they have enough.
   */
  private groupsFor(query: QueryNode, call: Pick<SearchCall, 'visible'>): { groups: string[][]; startsHere: boolean } {
    const files = this.catalog.repositories.filter((repo) => call.visible(repo.config)).flatMap((repo) => repo.shards);
    const { workers, oneTaskBelowBytes, frontEndSliceMs } = this.options;
    const share = Math.max(1, Math.floor(workers / this.admissions.size));
    const bounds = { share, alone: this.admissions.size <= 1, fewBytes: oneTaskBelowBytes ?? FEW_CANDIDATES_BYTES, frontEnd: frontEndSliceMs !== 0 };
    const split = taskSplit(query, files, this.frontEnd.shards, bounds);
    return { groups: groupShards(files, split.tasks), startsHere: split.startsHere };
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
