/**
 * Searches fanned out to a Piscina pool: the front end plans the query (a
 * worker compiles its regexes), sends
 * one task per shard group of the visible repositories (as many groups as
 * the search's share of the workers), merges the groups' matches by score and
 * builds the response (chunks for the returned files only) from its own
 * mappings of the same shards. A search answered as JSON that runs as one
 * task has its response built and serialized by the worker instead, into a
 * render slot of shared memory: the front end's thread is the one every
 * request passes through.
 */
import { Piscina, queueOptionsSymbol, type PiscinaTask } from 'piscina';
import type { SearchRequest, SearchResponse, SearchStats } from '../api/types.js';
import type { RepositoryConfig, SearchContextConfig } from '../config/config.js';
import type { QueryNode } from '../query/ast.js';
import { invalidRegexError } from '../query/parser.js';
import type { CheckRegexesResult, CheckRegexesTask, MapShardTask, RenderedResponse, RenderSpec, SearchTask, SearchTaskResult } from '../worker/protocol.js';
import { groupShards, type Catalog } from './catalog.js';
import { buildResponse, emptyEvaluationStats, parseSearch, resultsCounted, type Found, type ShardsOutcome } from './engine.js';
import { ShardCache } from './shard-cache.js';
import { RenderSlots } from './render-slots.js';
import { cancelSearch, createSignal, type SearchSignal } from './signal.js';

export interface SearchPoolOptions {
  workers: number;
  /** Searches in flight at most; more are refused with SearchQueueFullError. */
  maxQueuedSearches: number;
  timeBudgetMs: number;
  publicUrl: string;
  contexts: Record<string, SearchContextConfig>;
  /** Bytes of a render slot (see render-slots.ts); a response whose members need more travels as bytes of its own. Default 64 KiB. */
  renderSlotBytes?: number;
}

export class SearchQueueFullError extends Error {
  constructor(limit: number) {
    super(`the search queue is full (${limit} searches in flight)`);
    this.name = 'SearchQueueFullError';
  }
}

/** A task asked of a pool that is closing: the daemon is shutting down. */
export class SearchPoolClosingError extends Error {
  constructor() {
    super('the server is shutting down');
    this.name = 'SearchPoolClosingError';
  }
}

export interface SearchCall {
  /** Which repositories the caller may see (the rest do not exist for this search). */
  visible: (repo: RepositoryConfig) => boolean;
  /** Set by the caller to cancel (client gone); the pool also sets it when the search ends. */
  signal?: SearchSignal;
  /** Receives each shard group's part of the response as it completes (streaming), within the match budget. */
  onPartial?: (partial: SearchResponse) => void;
}

/** A search's response as UTF-8 JSON, and its stats. */
export interface SearchJson {
  stats: SearchStats;
  /** Valid until `release`: it may be a render slot's memory, which the next search reuses. */
  body: Buffer;
  /** Gives the body's memory back once it is written or dropped; idempotent. */
  release(): void;
}

/** When a search started and when its query was planned (performance.now() of this thread). */
interface Timings {
  started: number;
  planned: number;
}

/** How much lower the search workers' scheduling priority is than the front end's (nice(2) steps). */
export const WORKER_NICE_INCREMENT = 10;

/** Render slots at most (64 KiB each by default): each search in flight holds at most one. */
const MAX_RENDER_SLOTS = 256;

export class SearchPool {
  private readonly piscina: Piscina;
  private readonly shards = new ShardCache();
  private readonly renderSlots: RenderSlots;
  private catalog: Catalog = { generation: -1, repositories: [] };
  private inFlight = 0;
  private workerFailures = 0;
  private shardFailures = 0;
  /** Set by close: no task is started after it. */
  private closing = false;
  /** Tasks given to the workers and not yet answered, and who waits for there to be none. */
  private tasksRunning = 0;
  private idleWaiters: (() => void)[] = [];
  /** The signals of the searches in flight, cancelled by close. */
  private readonly searchSignals = new Set<SearchSignal>();
  /** Tasks the workers answered, and how many had been when `responsive` last looked. */
  private tasksAnswered = 0;
  private answeredAtLastProbe = 0;
  /** The next step of mapping the current catalog's shards in the background. */
  private mapping: NodeJS.Immediate | undefined;
  /** Shards each search worker had mapped when it last answered a MapShardTask of the current generation, by thread id. */
  private readonly workerShards = new Map<number, number>();

  constructor(private options: SearchPoolOptions) {
    this.renderSlots = new RenderSlots(Math.min(options.maxQueuedSearches, MAX_RENDER_SLOTS), options.renderSlotBytes ?? 64 * 1024);
    this.piscina = new Piscina({
      workerData: this.renderSlots.share,
      filename: new URL('../worker/search-worker.js', import.meta.url).href,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      // A task that finds every worker busy goes back to the head of the queue: by default Piscina puts it
      // at the tail, so under sustained load searches overtake each other and p99 was 3.7 × p50 at c = 64.
      stricterFIFO: true,
      // A second task waits in a busy worker's port, so the worker starts it the moment it is done instead of
      // idling for the front end's round trip (workers were idle ≈ 20 % of the time under full load).
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      loadBalancer: balance,
      // Workers yield the CPU to the front end's thread, which feeds them and answers for them: with the
      // cores saturated, a front end left waiting for a core left the workers waiting for tasks (machine idle
      // 7 % → 3 %, requests/s median 876 → 975 and p99 120 → 106 ms over six alternating runs at c = 64).
      niceIncrement: WORKER_NICE_INCREMENT,
      // Piscina's run and wait histograms are not read anywhere (the daemon keeps its own metrics).
      recordTiming: false,
    });
    // A worker that starts (one replacing a worker that died, or one still starting when setCatalog ran)
    // maps the current shards before a search needs them. Piscina emits this just before it counts the
    // worker as ready: a task sent at once would go to another.
    this.piscina.on('workerCreate', (worker: PiscinaWorker) => setImmediate(() => this.warmWorker(worker.id)));
    // Piscina's one error event: an answer for a task it no longer knows, which a worker destroyed by close can send.
    this.piscina.on('error', (error: Error) => {
      if (!this.closing) throw error;
    });
  }

  /**
   * Switches to a new manifest generation. Its shards are mapped here in the
   * background, one per turn of the event loop: opening a shard of the Linux
   * index takes this thread 50–100 ms, and all ten at once held every request
   * for 0.5–0.8 s after each publication. A search that needs a shard not yet
   * mapped maps it itself.
   */
  setCatalog(catalog: Catalog): void {
    this.catalog = catalog;
    this.shards.advance(catalog.generation);
    this.workerShards.clear();
    for (const { threadId } of this.piscina.threads) this.warmWorker(threadId);
    const files = shardFilesOf(catalog);
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

  /**
   * Has the search worker of `threadId` map the current catalog's shards,
   * one shard per task so that searches interleave with them. Each worker
   * used to map a generation at its first search of it, and that search
   * waited: 0.6 s for the first search after the Linux index was published.
   * Stops when a newer generation replaces the catalog, the worker fails or
   * the pool closes.
   */
  private warmWorker(threadId: number): void {
    const catalog = this.catalog;
    void (async () => {
      for (const shardFile of shardFilesOf(catalog)) {
        if (this.catalog !== catalog) return;
        const task: MapShardTask & TargetedTask = { generation: catalog.generation, shardFile, [queueOptionsSymbol]: { thread: threadId } };
        try {
          const mapped = (await this.run(task, 'mapShard')) as number;
          if (this.catalog === catalog) this.workerShards.set(threadId, mapped);
        } catch {
          return; // the worker failed (Piscina's replacement is warmed as it starts) or the pool closed
        }
      }
    })();
  }

  /** New link base or contexts (the port bound for `listen.port` 0, a reloaded config); the pool's size stays. */
  configure(options: Pick<SearchPoolOptions, 'publicUrl' | 'contexts' | 'timeBudgetMs'>): void {
    this.options = { ...this.options, ...options };
  }

  get currentCatalog(): Catalog {
    return this.catalog;
  }

  get searchesInFlight(): number {
    return this.inFlight;
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
    const counts = this.piscina.threads.map(({ threadId }) => this.workerShards.get(threadId) ?? 0);
    return counts.length === 0 ? 0 : Math.min(...counts);
  }

  /** Tasks that failed in a worker (not corrupt shards: those are per-search `crashes`). */
  get failedTasks(): number {
    return this.workerFailures;
  }

  /** Shards that searches could not read (the `crashes` of every response): corrupt, missing, or changed under their mappings. */
  get failedShards(): number {
    return this.shardFailures;
  }

  /**
   * Runs one search, of `request.query` or of an already built `query`.
   * Throws QueryParseError / UnknownSearchContextError for a bad query and
   * SearchQueueFullError when too many searches are in flight.
   */
  async search(request: SearchRequest, call: SearchCall, prebuilt?: QueryNode): Promise<SearchResponse> {
    return this.admit(request, call, prebuilt, (query, signal, timings) => this.fanOut(request, query, call, signal, timings, this.groupsFor(call)));
  }

  /**
   * Like `search`, answering the response as JSON text. A search that runs
   * as one task (every search under load) has it built by its worker.
   */
  async searchJson(request: SearchRequest, call: Omit<SearchCall, 'onPartial'>, prebuilt?: QueryNode): Promise<SearchJson> {
    return this.admit(request, call, prebuilt, async (query, signal, timings) => {
      const groups = this.groupsFor(call);
      if (groups.length !== 1) return jsonOf(await this.fanOut(request, query, call, signal, timings, groups));
      const { timeOrigin } = performance;
      const slot = this.renderSlots.acquire();
      const render = { request, publicUrl: this.options.publicUrl, startedEpochMs: timeOrigin + timings.started, plannedEpochMs: timeOrigin + timings.planned, slot };
      const submitted = performance.now();
      // The slot goes with a response written into it; otherwise it is free again once the task answered
      // (a task that failed, its worker dying say, writes nothing after that).
      let slotHandedOver = false;
      try {
        const result = await this.runTask(this.task(request, query, signal, timings, groups[0]!, render));
        const waitMs = performance.now() - submitted;
        if ('results' in result) {
          slotHandedOver = result.results === null;
          return this.renderedJson(result, waitMs, slot);
        }
        // The worker failed: its crash outcome is answered from here.
        return jsonOf(this.respond(request, query, this.resolve(result, groups[0]!), [result], timings, waitMs));
      } finally {
        if (slot !== undefined && !slotHandedOver) this.renderSlots.release(slot);
      }
    });
  }

  /** The worker's response with the wait for it, its members in SearchResponse's order: in `slot` when `results` is null. */
  private renderedJson({ stats, results, slotBytesUsed }: RenderedResponse, waitMs: number, slot: number | undefined): SearchJson {
    stats.wait = nanoseconds(waitMs);
    this.shardFailures += stats.crashes;
    const prefix = `{"stats":${JSON.stringify(stats)},`;
    if (results === null) return { stats, ...this.renderSlots.response(slot!, prefix, slotBytesUsed) };
    return { stats, body: Buffer.concat([Buffer.from(prefix), results]), release: noRelease };
  }

  /**
   * The query of `request`, as planSearch plans it, but with its regexes compiled by a worker: RE2
   * takes up to 100 ms and more over a 4 KiB pattern, time every request waits for on this thread.
   * Throws what planSearch throws, and SearchQueueFullError.
   */
  async plan(request: SearchRequest): Promise<QueryNode> {
    const parsed = parseSearch(request, this.options.contexts);
    // Only the worker's task is counted in flight: a query without regexes is planned here and now.
    return parsed.regexTerms.length === 0 ? parsed.node : this.admitted(() => this.compiled(request, parsed));
  }

  /** `parsed.node` once a worker has compiled its regexes; the parse error of the first RE2 refuses. */
  private async compiled(request: SearchRequest, parsed: ReturnType<typeof parseSearch>): Promise<QueryNode> {
    const task: CheckRegexesTask = parsed.regexTerms.map((term) => term.value);
    const failure = (await this.run(task, 'checkRegexes')) as CheckRegexesResult;
    if (failure) throw invalidRegexError(request.query, parsed.regexTerms[failure.index]!, failure.message);
    return parsed.node;
  }

  /** As plan, for a search already counted in flight. */
  private async planned(request: SearchRequest): Promise<QueryNode> {
    const parsed = parseSearch(request, this.options.contexts);
    return parsed.regexTerms.length === 0 ? parsed.node : this.compiled(request, parsed);
  }

  /** Counts `run` as a search in flight (or refuses it) for as long as it runs. */
  private async admitted<T>(run: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.options.maxQueuedSearches) throw new SearchQueueFullError(this.options.maxQueuedSearches);
    this.inFlight++;
    try {
      return await run();
    } finally {
      this.inFlight--;
    }
  }

  private async admit<T>(request: SearchRequest, call: Pick<SearchCall, 'signal'>, prebuilt: QueryNode | undefined, run: (query: QueryNode, signal: SearchSignal, timings: Timings) => Promise<T>): Promise<T> {
    const started = performance.now();
    return this.admitted(async () => {
      const query = prebuilt ?? (await this.planned(request));
      const planned = performance.now();
      const signal = call.signal ?? createSignal();
      this.searchSignals.add(signal);
      try {
        return await run(query, signal, { started, planned });
      } finally {
        this.searchSignals.delete(signal);
        cancelSearch(signal); // tasks still queued for a finished search return at once
      }
    });
  }

  /**
   * The shard groups of the shards `call` may see, one per task. Each search in flight gets an equal
   * share of the workers, at least one. Splitting a search only pays while workers would otherwise
   * idle: under load it adds task round trips, and parallel groups of a capped search both scan
   * until together they have enough.
   */
  private groupsFor(call: Pick<SearchCall, 'visible'>): string[][] {
    const files = this.catalog.repositories.filter((repo) => call.visible(repo.config)).flatMap((repo) => repo.shards);
    return groupShards(files, Math.max(1, Math.floor(this.options.workers / this.inFlight)));
  }

  /** One literal, not a spread plus members: see searchShards on what V8 keeps alive otherwise. */
  private task(request: SearchRequest, query: QueryNode, signal: SearchSignal, timings: Timings, shardFiles: string[], render?: RenderSpec): SearchTask {
    return {
      generation: this.catalog.generation,
      shardFiles,
      query,
      contexts: this.options.contexts,
      wanted: request.matches + 1,
      deadlineEpochMs: performance.timeOrigin + timings.started + this.options.timeBudgetMs,
      signal,
      render,
    };
  }

  private async fanOut(request: SearchRequest, query: QueryNode, call: SearchCall, signal: SearchSignal, timings: Timings, groups: string[][]): Promise<SearchResponse> {
    const found: Found[] = [];
    const outcomes: Omit<ShardsOutcome, 'matches'>[] = [];
    let budget = request.matches;
    let waitMs = 0;
    await Promise.all(
      groups.map(async (shardFiles) => {
        const submitted = performance.now();
        const outcome = (await this.runTask(this.task(request, query, signal, timings, shardFiles))) as ShardsOutcome; // a task without `render` answers its outcome
        waitMs = Math.max(waitMs, performance.now() - submitted);
        const groupFound = this.resolve(outcome, shardFiles);
        found.push(...groupFound);
        outcomes.push(outcome);
        if (call.onPartial && budget > 0) {
          const partial = buildResponse({ ...request, matches: budget }, query, groupFound, [outcome], this.options.publicUrl, searchedNow(timings));
          budget -= resultsCounted(query, partial);
          call.onPartial(partial);
        }
      }),
    );
    return this.respond(request, query, found, outcomes, timings, waitMs);
  }

  private respond(request: SearchRequest, query: QueryNode, found: Found[], outcomes: Omit<ShardsOutcome, 'matches'>[], timings: Timings, waitMs: number): SearchResponse {
    const response = buildResponse(request, query, found, outcomes, this.options.publicUrl, searchedNow(timings));
    response.stats.wait = nanoseconds(waitMs);
    this.shardFailures += response.stats.crashes;
    return response;
  }

  private async runTask(task: SearchTask): Promise<SearchTaskResult> {
    try {
      const result = (await this.run(task)) as SearchTaskResult;
      this.tasksAnswered++;
      return result;
    } catch (error) {
      if (error instanceof SearchPoolClosingError) throw error;
      // A worker that failed (or died) costs its group's results, never the search.
      this.workerFailures++;
      const stats = { ...emptyEvaluationStats(), crashes: task.shardFiles.length, shardFilesConsidered: task.shardFiles.length };
      return { matches: [], totalRanges: 0, stop: 'complete', stats };
    }
  }

  /** The group's matches with their shards mapped here; matches of a shard this thread cannot open are dropped and counted. */
  private resolve(outcome: ShardsOutcome, shardFiles: string[]): Found[] {
    const found: Found[] = [];
    for (const match of outcome.matches) {
      try {
        found.push({ ...match, shard: this.shards.get(shardFiles[match.shard]!) });
      } catch {
        outcome.stats.crashes++;
      }
    }
    return found;
  }

  /**
   * Whether the workers take tasks (the systemd watchdog's probe): true when
   * one answered a search since the last probe, else when one answers a no-op
   * task within `timeoutMs`. Under load the no-op waits behind every queued
   * search, so there progress is the sign of life: a busy pool is not a
   * wedged one.
   */
  async responsive(timeoutMs: number): Promise<boolean> {
    if (this.tasksAnswered !== this.answeredAtLastProbe) {
      this.answeredAtLastProbe = this.tasksAnswered;
      return true;
    }
    return this.ping(timeoutMs);
  }

  /** Resolves true when a worker answers a no-op task within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    return answeredWithin(this.run(null, 'ping'), timeoutMs);
  }

  /**
   * Destroys the workers once each has started, or after WORKER_START_WAIT_MS:
   * on Node 20, terminating a worker while it is still loading its modules can
   * abort the whole process (V8's fatal "IsGraphAsync must be used on an
   * instantiated module"; seen when a test closed a pool it had just made).
   */
  async close(): Promise<void> {
    clearImmediate(this.mapping);
    this.closing = true;
    const started = this.piscina.threads.map(({ threadId }) => {
      const task: TargetedTask = { [queueOptionsSymbol]: { thread: threadId } };
      return this.piscina.run(task, { name: 'ping' });
    });
    await answeredWithin(Promise.allSettled(started), WORKER_START_WAIT_MS);
    // The searches still in flight stop at their next check; their tasks answer before the workers go.
    for (const signal of this.searchSignals) cancelSearch(signal);
    await answeredWithin(this.idle(), WORKER_START_WAIT_MS);
    await this.piscina.destroy();
  }

  /** Runs a task in a worker (the default export of search-worker.ts, or the function `name`); refused once the pool is closing. */
  private async run(task: unknown, name?: string): Promise<unknown> {
    if (this.closing) throw new SearchPoolClosingError();
    this.tasksRunning++;
    try {
      return await this.piscina.run(task, name === undefined ? undefined : { name });
    } finally {
      if (--this.tasksRunning === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Resolves once no task is running. */
  private idle(): Promise<void> {
    return this.tasksRunning === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/** How long close waits for workers still starting (a worker loads its modules in ≈ 0.1–0.5 s). */
const WORKER_START_WAIT_MS = 3_000;

/** Whether `task` settles successfully within `timeoutMs`. */
async function answeredWithin(task: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const answered = task.then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Tasks a worker holds at once (one running, one waiting in its port). */
const TASKS_PER_WORKER = 2;

/**
 * Piscina's least-busy choice (an idle worker, else the least busy one below
 * TASKS_PER_WORKER, else none: the task waits in the queue), except that a
 * task naming a thread in its queue options goes to that thread, however
 * busy: mapping a new generation is work for each worker, not for any one.
 */
function balance(task: PiscinaTask, workers: PiscinaWorker[]): PiscinaWorker | null {
  const thread = (task[queueOptionsSymbol] as TargetedTask[typeof queueOptionsSymbol] | null)?.thread;
  const named = thread === undefined ? undefined : workers.find((worker) => worker.id === thread);
  if (named) return named;
  let choice: PiscinaWorker | null = null;
  for (const worker of workers) {
    if (worker.currentUsage === 0) return worker;
    if (worker.currentUsage < (choice?.currentUsage ?? TASKS_PER_WORKER)) choice = worker;
  }
  return choice;
}

/** A task for the worker of one thread; the symbol-keyed member stays behind (structured clone skips it). */
interface TargetedTask {
  [queueOptionsSymbol]: { thread: number };
}

type PiscinaWorker = Parameters<NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>>[1][number];

const shardFilesOf = (catalog: Catalog) => catalog.repositories.flatMap((repo) => repo.shards.map((shard) => shard.path));

const noRelease = () => {};

function jsonOf(response: SearchResponse): SearchJson {
  return { stats: response.stats, body: Buffer.from(JSON.stringify(response)), release: noRelease };
}

const nanoseconds = (ms: number) => Math.round(ms * 1e6);

/** `timings` with the search done now: one literal, not a spread plus a member (see searchShards on why). */
const searchedNow = ({ started, planned }: Timings) => ({ started, planned, searched: performance.now() });
