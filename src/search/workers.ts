/**
 * The search workers' lifecycle: the Piscina pool and how tasks reach a
 * worker, each new worker mapping the current shards before a search needs
 * them, the watchdog's liveness probe, and closing without a task lost.
 * What the tasks are is the pipeline's business (worker-source.ts, sinks.ts); their messages are
 * worker/search-protocol.ts.
 */
import { Piscina, queueOptionsSymbol, type PiscinaTask } from 'piscina';
import type { Config } from '../config/config.js';
import type { MapShardsResult, MapShardsTask, RenderSlotsShare, SearchWorkerData } from '../worker/search-protocol.js';
import { threadUrl } from '../worker/thread-url.js';
import { CallerTaskQueue, type QueueOptions } from './caller-queue.js';
import { CallerContention } from './contention.js';
import { RenderSlots } from './response/render-slots.js';

/** How much lower the search workers' scheduling priority is than the front end's (nice(2) steps). */
export const WORKER_NICE_INCREMENT = 10;

/** A task asked of workers that are closing: the daemon is shutting down. */
export class SearchPoolClosingError extends Error {
  constructor() {
    super('the server is shutting down');
    this.name = 'SearchPoolClosingError';
  }
}

/**
 * How long a search task holds its worker while another caller has tasks (contention.ts): a caller's costly
 * searches delay another's by about this much per task ahead of it in a worker, not by the search time budget.
 */
const TASK_SLICE_MS = 50;

/** Render slots at most (64 KiB each by default): each search in flight holds at most one. */
const MAX_RENDER_SLOTS = 256;

/** A search pool's threads and the render slots they share with the front end (pool.ts). */
export interface WorkerThreads {
  workers: SearchWorkers;
  renderSlots: RenderSlots;
}

/** The pool size and render slots `config` asks for. */
export function workerOptions(config: Config): Parameters<typeof startWorkerThreads>[0] {
  return { workers: config.server.workers, maxQueuedSearches: config.server.maxQueuedSearches };
}

/**
 * Starts a search pool's threads. Light to import, so that the daemon can start them before its own
 * modules load: the workers load theirs and map the shards meanwhile (docs/design.md, "Start").
 */
export function startWorkerThreads(options: { workers: number; maxQueuedSearches: number; renderSlotBytes?: number; taskSliceMs?: number }): WorkerThreads {
  const renderSlots = new RenderSlots(Math.min(options.maxQueuedSearches, MAX_RENDER_SLOTS), options.renderSlotBytes ?? 64 * 1024);
  return { workers: new SearchWorkers(options.workers, renderSlots.share, options.taskSliceMs ?? TASK_SLICE_MS), renderSlots };
}

/** The functions search-thread.ts exports besides its default (a search task). */
export type TaskName = 'mapShards' | 'checkRegexes' | 'matchTexts' | 'renderMerged' | 'renderPart' | 'ping';

export class SearchWorkers {
  private readonly piscina: Piscina;
  /** Set by close: no task is started after it. */
  private closing = false;
  /** Tasks given to the workers and not yet answered, and who waits for there to be none. */
  private tasksRunning = 0;
  private idleWaiters: (() => void)[] = [];
  /** Tasks the workers answered, and how many had been when `responsive` last looked. */
  private tasksAnswered = 0;
  private answeredAtLastProbe = 0;
  /** The shard files every worker maps ahead of searches, and the generation they belong to. */
  private shardFiles: { generation: number; files: readonly string[] } = { generation: -1, files: [] };
  /** Shards each worker had mapped when it last answered a MapShardsTask of the current generation, by thread id. */
  private readonly workerShards = new Map<number, number>();
  /** The workers (thread ids) that have gone through the current shard files, and who waits for all of them (`afterMapping`). */
  private readonly workersThrough = new Set<number>();
  private mappingWaiter: (() => void) | undefined;
  private firstMappingDone!: () => void;
  /** Resolves the first time every worker has gone through the shard files of a generation. */
  readonly firstMapping = new Promise<void>((resolve) => (this.firstMappingDone = resolve));
  /** The callers with tasks given to the workers, which the workers read. */
  private readonly contention = new CallerContention();

  /** `slots`: the render slots every worker writes into; `taskSliceMs`: see TASK_SLICE_MS. */
  constructor(workers: number, slots: RenderSlotsShare, taskSliceMs: number) {
    const workerData: SearchWorkerData = { slots, contention: this.contention.share, taskSliceMs };
    this.piscina = new Piscina({
      workerData,
      filename: threadUrl('search-thread').href,
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: Number.POSITIVE_INFINITY,
      // A task that finds every worker busy goes back to the head of the queue: by default Piscina puts it
      // at the tail, so under sustained load searches overtake each other (docs/design.md, "Workers").
      stricterFIFO: true,
      // Waiting tasks are taken caller by caller in turn (caller-queue.ts).
      taskQueue: new CallerTaskQueue(),
      // A second task waits in a busy worker's port, so the worker starts it the moment it is done instead of
      // idling for the front end's round trip.
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      loadBalancer: balance,
      // Workers yield the CPU to the front end's thread, which feeds them and answers for them.
      niceIncrement: WORKER_NICE_INCREMENT,
      // Piscina's run and wait histograms are not read anywhere (the daemon keeps its own metrics).
      recordTiming: false,
    });
    // A worker that starts (one replacing a worker that died, or one still starting when the shards changed)
    // maps the current shards before a search needs them. Piscina emits this just before it counts the
    // worker as ready: a task sent at once would go to another.
    this.piscina.on('workerCreate', (worker: PiscinaWorker) => setImmediate(() => this.warm(worker.id)));
    // Piscina's one error event: an answer for a task it no longer knows, which a worker destroyed by close can send.
    this.piscina.on('error', (error: Error) => {
      if (!this.closing) throw error;
    });
  }

  /**
   * Has every worker map `files` (a new manifest generation), a slice of them per task so that searches interleave
   * with them (MapShardsTask); the files they map already are not asked again.
   */
  mapShards(generation: number, files: readonly string[]): void {
    const current = this.shardFiles;
    if (generation === current.generation && files.length === current.files.length && files.every((file, i) => file === current.files[i])) return;
    this.shardFiles = { generation, files };
    this.workerShards.clear();
    this.workersThrough.clear();
    this.mappingWaiter = undefined;
    for (const { threadId } of this.piscina.threads) this.warm(threadId);
  }

  /**
   * Calls `then` once every worker has gone through the current shard files (at once if they have), unless a newer
   * generation or a later call comes first: so the front end maps them after the workers, its mappings noted
   * (docs/design.md, "Start").
   */
  afterMapping(then: () => void): void {
    this.mappingWaiter = undefined;
    if (this.everyWorkerThrough()) then();
    else this.mappingWaiter = then;
  }

  private everyWorkerThrough(): boolean {
    const { threads } = this.piscina;
    return threads.length > 0 && threads.every(({ threadId }) => this.workersThrough.has(threadId));
  }

  /** The fewest shards any worker has mapped of the current generation (0 until each has mapped one). */
  get shardsMapped(): number {
    const counts = this.piscina.threads.map(({ threadId }) => this.workerShards.get(threadId) ?? 0);
    return counts.length === 0 ? 0 : Math.min(...counts);
  }

  /**
   * Has the worker of `threadId` map the current shard files. Stops when a
   * newer generation replaces them, the worker fails or the pool closes.
   */
  private warm(threadId: number): void {
    const current = this.shardFiles;
    // Each worker starts at another shard: the first thread to open a mapping validates it for all (docs/design.md, "Start").
    const { threads } = this.piscina;
    const worker = Math.max(
      0,
      threads.findIndex((thread) => thread.threadId === threadId),
    );
    const start = Math.floor((worker * current.files.length) / Math.max(1, threads.length));
    const files = [...current.files.slice(start), ...current.files.slice(0, start)];
    void (async () => {
      for (let next = 0; next < files.length;) {
        if (this.shardFiles !== current) return;
        const task: MapShardsTask & QueuedTask = { generation: current.generation, shardFiles: files.slice(next), [queueOptionsSymbol]: { thread: threadId } };
        try {
          const { through, mapped } = (await this.run(task, 'mapShards')) as MapShardsResult;
          next += through;
          if (this.shardFiles === current) this.workerShards.set(threadId, mapped);
        } catch {
          return; // the worker failed (Piscina's replacement is warmed as it starts) or the pool closed
        }
      }
      if (this.shardFiles !== current) return;
      this.workersThrough.add(threadId);
      if (!this.everyWorkerThrough()) return;
      this.firstMappingDone();
      const waiter = this.mappingWaiter;
      this.mappingWaiter = undefined;
      waiter?.();
    })();
  }

  /**
   * Runs a task in a worker (search-thread.ts's default export, or the function `name`), queued in the turns of
   * `caller` (caller-queue.ts; the task object carries it) and counted among its tasks (contention.ts), first of
   * its caller's when it `resumes` a task that gave its worker up; refused once closing.
   */
  async run(task: unknown, name?: TaskName, caller?: string, resumes = false): Promise<unknown> {
    if (this.closing) throw new SearchPoolClosingError();
    if (caller !== undefined) {
      (task as QueuedTask)[queueOptionsSymbol] = { caller, resumes };
      this.contention.add(caller);
    }
    this.tasksRunning++;
    try {
      const answer = await this.piscina.run(task, name === undefined ? undefined : { name });
      if (name !== 'ping') this.tasksAnswered++; // a probe's own answer is no progress
      return answer;
    } finally {
      if (caller !== undefined) this.contention.remove(caller);
      if (--this.tasksRunning === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /**
   * Whether the workers take tasks (the systemd watchdog's probe): true when
   * one answered a task since the last probe, else when one answers a no-op
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
   * Refuses new tasks, waits for each worker to have started (or
   * WORKER_START_WAIT_MS: on Node 20, terminating a worker still loading its
   * modules can abort the process, V8's "IsGraphAsync must be used on an
   * instantiated module"), calls `cancelRunning` so the tasks in flight stop
   * at their next check, waits for them as long again, then destroys the workers.
   */
  async close(cancelRunning: () => void): Promise<void> {
    this.closing = true;
    this.shardFiles = { generation: -1, files: [] };
    const started = this.piscina.threads.map(({ threadId }) => {
      const task: QueuedTask = { [queueOptionsSymbol]: { thread: threadId } };
      return this.piscina.run(task, { name: 'ping' });
    });
    await answeredWithin(Promise.allSettled(started), WORKER_START_WAIT_MS);
    cancelRunning();
    await answeredWithin(this.idle(), WORKER_START_WAIT_MS);
    await this.piscina.destroy();
  }

  /** Resolves once no task is running. */
  private idle(): Promise<void> {
    return this.tasksRunning === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/** How long close waits for workers still starting (a worker loads its modules in ≈ 0.1–0.5 s), and for tasks to stop. */
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
  const thread = (task[queueOptionsSymbol] as QueueOptions | null)?.thread;
  const named = thread === undefined ? undefined : workers.find((worker) => worker.id === thread);
  if (named) return named;
  let choice: PiscinaWorker | null = null;
  for (const worker of workers) {
    if (worker.currentUsage === 0) return worker;
    if (worker.currentUsage < (choice?.currentUsage ?? TASKS_PER_WORKER)) choice = worker;
  }
  return choice;
}

/** A task with its queue options; the symbol-keyed member stays behind (structured clone skips it). */
interface QueuedTask {
  [queueOptionsSymbol]: QueueOptions;
}

type PiscinaWorker = Parameters<NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>>[1][number];
