/**
 * Live indexing: watches every repository (a git repository's HEAD and refs,
 * a plain directory's files) with chokidar, queues the repositories that
 * changed, and runs index passes one at a time on an index thread, which is
 * started when a change is seen (or a pass is due) and ends once idle for
 * `threadIdleMs` (an idle daemon keeps no isolate for it). A periodic full
 * pass catches what the watchers missed (the pass skips unchanged
 * repositories cheaply). After every pass, `onPublished` reloads the catalog.
 */
import { Worker } from 'node:worker_threads';
import type { FSWatcher } from 'chokidar';
import type { Config, RepositoryConfig } from '../config/config.js';
import type { Logger } from '../obs/logger.js';
import { stopOutsideNative, stopWord, type IndexReply, type IndexRequest, type RepositoryOutcome, type ShardSources } from '../worker/index-protocol.js';
import { threadUrl } from '../worker/thread-url.js';
import { watchRepository } from './watch.js';

export interface SchedulerOptions {
  config: Config;
  logger: Logger;
  /** A full pass this often (0: never). */
  rescanIntervalMs: number;
  /** Changes closer together than this are indexed in one pass. */
  debounceMs: number;
  /** The index thread ends once it has had no pass to run for this long. */
  threadIdleMs: number;
  /** Called after each pass, from the main thread. */
  onPublished(outcomes: RepositoryOutcome[]): void;
  /** In a cluster: the other nodes serving each of `names`, to copy shards from (indexer/shard-copy.ts). */
  replicas?: (names: readonly string[]) => ShardSources;
}

/** A stop waits this long, at most, for the index thread to leave the addon (one shard's postings take seconds). */
const STOP_WAIT_MS = 30_000;

export class IndexScheduler {
  private thread: Worker | null = null;
  private threadIdle: NodeJS.Timeout | null = null;
  private readonly watchers = new Map<string, FSWatcher>();
  /** The index thread's stop handshake (worker/index-protocol.ts). */
  private readonly stop = stopWord();
  private readonly queued = new Set<string>();
  private fullPassQueued = false;
  private running: IndexRequest | null = null;
  private readonly indexing = new Set<string>();
  /** When each repository's oldest change not yet indexed was seen. */
  private readonly dirtySince = new Map<string, number>();
  /** The entries of dirtySince the running pass covers (restored if it fails). */
  private covered = new Map<string, number>();
  private debounce: NodeJS.Timeout | null = null;
  private rescan: NodeJS.Timeout | null = null;
  private firstPass: Promise<void>;
  private firstPassDone!: () => void;
  private closed = false;

  constructor(private options: SchedulerOptions) {
    this.firstPass = new Promise((resolve) => (this.firstPassDone = resolve));
  }

  /**
   * Starts watching, queues a full pass, and resolves once that first pass is published. A reconfiguration
   * may come first (the daemon starts the scheduler once the workers have mapped the shards).
   */
  start(): Promise<void> {
    this.watchUnwatched();
    this.fullPassQueued = true;
    this.next();
    if (this.options.rescanIntervalMs > 0) {
      this.rescan = setInterval(() => {
        this.fullPassQueued = true;
        this.next();
      }, this.options.rescanIntervalMs);
      this.rescan.unref();
    }
    return this.firstPass;
  }

  /** Whether the index thread is running (a pass is under way, or was within `threadIdleMs`). */
  get threadRunning(): boolean {
    return this.thread !== null;
  }

  isIndexing(name: string): boolean {
    return this.indexing.has(name);
  }

  /** Seconds since the oldest change not yet indexed, per repository. */
  lagSeconds(): Map<string, number> {
    const now = Date.now();
    return new Map(this.options.config.repos.map((repo) => [repo.name, this.dirtySince.has(repo.name) ? (now - this.dirtySince.get(repo.name)!) / 1000 : 0]));
  }

  /**
   * Switches to a new configuration (SIGHUP): watches repositories added,
   * stops watching those removed, and queues a full pass, which indexes the
   * new ones and drops the shards of the removed ones.
   */
  async reconfigure(config: Config): Promise<void> {
    const names = new Set(config.repos.map((repo) => repo.name));
    for (const [name, watcher] of this.watchers) {
      if (names.has(name)) continue;
      this.watchers.delete(name);
      this.dirtySince.delete(name);
      await watcher.close();
    }
    this.options = { ...this.options, config };
    this.watchUnwatched();
    this.fullPassQueued = true;
    this.next();
  }

  /** Queues a pass over one repository (after the debounce). */
  changed(name: string): void {
    if (this.closed) return;
    this.indexThread(); // started now, it loads its modules during the debounce
    if (!this.dirtySince.has(name)) this.dirtySince.set(name, Date.now());
    this.queued.add(name);
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = null;
      this.next();
    }, this.options.debounceMs);
  }

  /** Watches each repository of the configuration that no watcher covers yet. */
  private watchUnwatched(): void {
    for (const repo of this.options.config.repos) if (!this.watchers.has(repo.name)) this.watchRepository(repo);
  }

  private watchRepository(repo: RepositoryConfig): void {
    const { logger, config } = this.options;
    const watcher = watchRepository(repo.path, {
      maxDirectories: config.index.maxWatchedDirectories,
      onChange: () => this.changed(repo.name),
      onLimit: (watched) =>
        logger.warn({ repo: repo.name, watched }, 'index.maxWatchedDirectories reached: the rest of this directory is covered by the periodic rescan only'),
      onError: (error) => logger.warn({ repo: repo.name, err: error }, 'watcher error; the periodic rescan still covers this repository'),
    });
    this.watchers.set(repo.name, watcher);
  }

  private next(): void {
    if (this.running || this.closed || this.debounce) return;
    let request: IndexRequest;
    if (this.fullPassQueued) {
      this.fullPassQueued = false;
      this.queued.clear();
      request = { config: this.options.config };
    } else if (this.queued.size > 0) {
      request = { config: this.options.config, only: [...this.queued].filter((name) => this.watchers.has(name)) };
      this.queued.clear();
    } else {
      return;
    }
    const names = request.only ?? this.options.config.repos.map((repo) => repo.name);
    if (this.options.replicas) request.replicas = this.options.replicas(names);
    this.running = request;
    // Changes seen from now on need another pass; the ones seen so far are covered by this one.
    for (const name of names) {
      const since = this.dirtySince.get(name);
      if (since === undefined) continue;
      this.covered.set(name, since);
      this.dirtySince.delete(name);
    }
    this.indexThread().postMessage(request);
  }

  /** The index thread, started if it is not running; it is not ended while it has a pass. */
  private indexThread(): Worker {
    if (this.threadIdle) clearTimeout(this.threadIdle);
    this.threadIdle = null;
    if (this.thread) return this.thread;
    const thread = new Worker(threadUrl('index-thread'), { workerData: { stop: this.stop } });
    thread.on('message', (reply: IndexReply) => this.onReply(reply));
    thread.on('error', (error) => this.options.logger.error({ err: error }, 'index thread failed'));
    thread.on('exit', () => {
      if (this.thread !== thread) return; // ended when idle, or replaced
      this.thread = null;
      // It died with a pass under way (an error, above): that pass failed.
      if (this.running && !this.closed) this.onReply({ type: 'failed', error: 'the index thread exited' });
    });
    this.thread = thread;
    return thread;
  }

  /** Ends the index thread once it has been idle for `threadIdleMs`. */
  private endThreadWhenIdle(): void {
    if (this.running || this.closed || !this.thread || this.threadIdle) return;
    this.threadIdle = setTimeout(() => {
      const thread = this.thread;
      this.thread = null;
      this.threadIdle = null;
      void thread?.terminate();
    }, this.options.threadIdleMs);
    this.threadIdle.unref();
  }

  private onReply(reply: IndexReply): void {
    if (reply.type === 'started') {
      this.indexing.add(reply.name);
      return;
    }
    const request = this.running!;
    this.running = null;
    this.indexing.clear();
    const covered = this.covered;
    this.covered = new Map();
    if (reply.type === 'failed') {
      this.options.logger.error({ error: reply.error }, 'index pass failed; retrying on the next change or rescan');
      for (const [name, since] of covered) this.dirtySince.set(name, Math.min(since, this.dirtySince.get(name) ?? since));
    } else {
      for (const outcome of reply.outcomes) {
        if (outcome.status === 'failed') this.options.logger.warn({ repo: outcome.name, error: outcome.error }, 'repository failed to index');
        else if (outcome.status === 'indexed') {
          for (const warning of outcome.warnings) this.options.logger.warn({ repo: outcome.name, warning }, 'indexing warning');
          for (const { node, reason, damaged } of outcome.notCopied ?? [])
            this.options.logger[damaged ? 'warn' : 'info']({ repo: outcome.name, node, reason }, "a replica's shards not copied");
          const { documents, seconds, copiedFrom } = outcome;
          this.options.logger.info({ repo: outcome.name, documents, seconds, ...(copiedFrom ? { copiedFrom } : {}) }, 'repository indexed');
        }
      }
      this.options.onPublished(reply.outcomes);
    }
    if (!request.only) this.firstPassDone();
    this.next();
    this.endThreadWhenIdle();
  }

  /** Stops watching and waits for a pass in progress to finish (its shards are published whole or not at all). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.debounce) clearTimeout(this.debounce);
    if (this.rescan) clearInterval(this.rescan);
    if (this.threadIdle) clearTimeout(this.threadIdle);
    await Promise.all([...this.watchers.values()].map((watcher) => watcher.close()));
    // A pass in progress is abandoned, not awaited: re-indexing a large repository takes minutes, longer than a
    // service manager waits for a stop. Shards and the manifest are published atomically, so the data directory
    // keeps the last published generation, and the next pass removes the files an abandoned one left.
    if (this.running) this.options.logger.info({ repositories: [...this.indexing] }, 'stopping: the index pass in progress is abandoned');
    // Not inside the addon: terminating there aborts the process.
    await stopOutsideNative(this.stop, STOP_WAIT_MS);
    await this.thread?.terminate();
  }
}
