/**
 * Keeps each connection's repositories in step with its host: every `syncIntervalMinutes`, on SIGHUP and on
 * demand it lists the host's repositories, reconciles them with what it holds (new ones mirrored, renamed ones
 * kept with their mirror and id, gone ones dropped after `sync.removeAfterHours`), and fetches every mirror,
 * at most `sync.processes` git processes at once over all connections. A failed listing keeps what was held;
 * a failed fetch keeps the mirror's last good state. The daemon learns of changes through two callbacks and
 * reads `repositories()` (docs/connections.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config, RepositoryConfig } from '../config/config.js';
import type { ConnectionConfig } from '../config/connections.js';
import type { ConnectionType } from '../index/code-host.js';
import type { Logger } from '../obs/logger.js';
import { ConnectionError, RateLimitedError } from './errors.js';
import { discover, gitUser } from './hosts/index.js';
import type { ListedRepository } from './listing.js';
import { fetchMirror, writeAskpass } from './mirror.js';
import { departures } from './retention.js';
import { FetchSlots } from './fetch-slots.js';
import { mirroredRepositories, mirrorName, mirrorPath } from './mirrored-repositories.js';
import { SyncState, type ConnectionRecord, type MirroredRepository } from './sync-state.js';
import { readToken } from './token.js';

export interface SyncerOptions {
  config: Config;
  logger: Logger;
  /** The set of repositories changed (one mirrored for the first time, renamed, dropped): read `repositories()` again. */
  onRepositories(): void;
  /** A fetch moved the refs of the mirror of repository `name`: index it. */
  onFetched(name: string): void;
  /** In a cluster: whether this node holds repository `name`. Every repository is listed; only those held are fetched. */
  holds?: (name: string) => boolean;
}

export interface ConnectionStatus {
  id: number;
  name: string;
  connectionType: ConnectionType;
  syncState: {
    status: 'pending' | 'syncing' | 'synced' | 'failed';
    lastSyncedAt?: string;
    nextSyncAt?: string;
    error?: string;
    warnings: string[];
    repoCount: number;
    failedRepoCount: number;
    /** The first repositories whose last fetch failed, and why (owners only: names of repositories they may not see). */
    failedRepos?: { repo: string; error: string }[];
  };
}

/** What `/api/repos` says of a repository of a connection. */
export interface RepositorySync {
  connectionId: number;
  connectionName: string;
  fetchedAt?: string;
  error?: string;
  goneSince?: string;
}

/** Running totals per connection, for the metrics. */
export interface SyncTotals {
  syncs: number;
  failures: number;
  fetchFailures: number;
  bytes: number;
  seconds: number;
}

interface Live {
  syncing: boolean;
  /** A sync was asked for while one ran: another follows it. */
  again: boolean;
  timer: NodeJS.Timeout | null;
  nextAt: number | null;
  totals: SyncTotals;
}

const PUBLISH_DEBOUNCE_MS = 500;

export class ConnectionSyncer {
  private readonly live = new Map<string, Live>();
  private readonly closing = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private readonly slots: FetchSlots;
  private readonly askpass: string;
  private publishTimer: NodeJS.Timeout | null = null;
  private started = false;
  /** Repository name → its connection; rebuilt after the sets of repositories change. */
  private holders: Map<string, { id: number; connection: string; repo: MirroredRepository }> | null = null;

  private constructor(
    private options: SyncerOptions,
    private readonly state: SyncState,
  ) {
    this.slots = new FetchSlots(options.config.sync.processes);
    this.askpass = writeAskpass(path.join(options.config.dataDir, 'mirrors', '.git-home'));
  }

  /** Reads the sync state (throws when it is damaged). Nothing runs before `start`. */
  static open(options: SyncerOptions): ConnectionSyncer {
    return new ConnectionSyncer(options, SyncState.open(options.config.dataDir));
  }

  private get config(): Config {
    return this.options.config;
  }

  /** Schedules every connection: one never synced, or overdue, syncs now. */
  start(): void {
    this.started = true;
    this.dropUnconfigured();
    for (const connection of this.config.connections) {
      const record = this.state.record(connection.name);
      const due = record.lastSyncedAt ? Date.parse(record.lastSyncedAt) + connection.syncIntervalMinutes * 60_000 : 0;
      this.schedule(connection.name, Math.max(0, due - Date.now()));
    }
    this.state.save();
  }

  /** A new configuration (SIGHUP): added connections start, removed ones go with their mirrors (told by `onRepositories` first), all sync now. */
  reconfigure(config: Config): void {
    this.options = { ...this.options, config };
    this.holders = null;
    if (!this.started) return;
    this.dropUnconfigured();
    for (const connection of config.connections) this.syncNow(connection.name);
    this.state.save();
  }

  /** Starts a sync of connection `name` (or queues one after the sync under way); false for an unknown name. */
  syncNow(name: string): boolean {
    if (!this.config.connections.some((connection) => connection.name === name) || this.closing.signal.aborted) return false;
    this.schedule(name, 0);
    return true;
  }

  /** The id of connection `name`, or undefined when none is configured by that name. */
  connectionName(id: number): string | undefined {
    return this.config.connections.find((connection) => this.state.record(connection.name).id === id)?.name;
  }

  /** The repositories to index: each one fetched at least once, under its mirror path; in a cluster also those other nodes fetch. */
  repositories(): RepositoryConfig[] {
    return mirroredRepositories(this.config, this.state, this.options.holds !== undefined);
  }

  statuses(): ConnectionStatus[] {
    return this.config.connections.map((connection) => {
      const record = this.state.record(connection.name);
      const live = this.liveOf(connection.name);
      const status = live.syncing ? 'syncing' : record.error ? 'failed' : record.lastSyncedAt ? 'synced' : 'pending';
      return {
        id: record.id,
        name: connection.name,
        connectionType: connection.type,
        syncState: {
          status,
          ...(record.lastSyncedAt ? { lastSyncedAt: record.lastSyncedAt } : {}),
          ...(live.nextAt !== null ? { nextSyncAt: new Date(live.nextAt).toISOString() } : {}),
          ...(record.error ? { error: record.error } : {}),
          warnings: record.warnings,
          repoCount: record.repos.filter((repo) => repo.fetchedAt !== undefined).length,
          failedRepoCount: record.repos.filter((repo) => repo.error !== undefined).length,
          failedRepos: record.repos
            .filter((repo) => repo.error !== undefined)
            .slice(0, 20)
            .map((repo) => ({ repo: repo.name, error: repo.error! })),
        },
      };
    });
  }

  /** The sync state of repository `name` when a connection holds it (a listing asks for each of thousands). */
  repositorySync(name: string): RepositorySync | undefined {
    this.holders ??= new Map(
      this.config.connections.flatMap((connection) => {
        const record = this.state.record(connection.name);
        return record.repos.map((repo) => [repo.name, { id: record.id, connection: connection.name, repo }] as const);
      }),
    );
    const holder = this.holders.get(name);
    return holder && { connectionId: holder.id, connectionName: holder.connection, ...pick(holder.repo, 'fetchedAt', 'error', 'goneSince') };
  }

  totals(): Map<string, SyncTotals> {
    return new Map(this.config.connections.map((connection) => [connection.name, this.liveOf(connection.name).totals]));
  }

  /** Ends every fetch and listing under way (their git processes killed) and waits for them. */
  async close(): Promise<void> {
    this.closing.abort();
    for (const live of this.live.values()) if (live.timer) clearTimeout(live.timer);
    if (this.publishTimer) clearTimeout(this.publishTimer);
    await Promise.allSettled([...this.running]);
  }

  private liveOf(name: string): Live {
    let live = this.live.get(name);
    if (!live) {
      live = { syncing: false, again: false, timer: null, nextAt: null, totals: { syncs: 0, failures: 0, fetchFailures: 0, bytes: 0, seconds: 0 } };
      this.live.set(name, live);
    }
    return live;
  }

  private schedule(name: string, delayMs: number): void {
    const live = this.liveOf(name);
    if (live.syncing) {
      if (delayMs === 0) live.again = true;
      return;
    }
    if (live.timer) clearTimeout(live.timer);
    live.nextAt = Date.now() + delayMs;
    live.timer = setTimeout(() => {
      live.timer = null;
      const run = this.sync(name).finally(() => this.running.delete(run));
      this.running.add(run);
    }, delayMs);
    live.timer.unref();
  }

  private async sync(name: string): Promise<void> {
    const connection = this.config.connections.find((candidate) => candidate.name === name);
    if (!connection || this.closing.signal.aborted) return;
    const live = this.liveOf(name);
    const record = this.state.record(name);
    const started = performance.now();
    live.syncing = true;
    live.nextAt = null;
    let nextDelayMs = connection.syncIntervalMinutes * 60_000;
    let fetched = 0;
    let failed = 0;
    let bytes = 0;
    try {
      const token = readToken(connection);
      try {
        const listed = await discover(connection, {
          token,
          timeoutMs: this.config.sync.apiTimeoutSeconds * 1000,
          maxRepositories: this.config.sync.maxRepositories,
          signal: this.closing.signal,
        });
        this.reconcile(connection, record, listed.repositories, listed.warnings);
        delete record.error;
      } catch (error) {
        if (this.closing.signal.aborted) return;
        record.error = messageOf(error);
        live.totals.failures++;
        if (error instanceof RateLimitedError) nextDelayMs = Math.max(1000, error.until.getTime() - Date.now());
        this.options.logger.warn({ connection: name, error: record.error }, 'connection listing failed; its repositories are kept as they were');
      }
      this.state.save();
      await Promise.all(
        record.repos
          .filter((repo) => repo.goneSince === undefined && (this.options.holds?.(repo.name) ?? true))
          .map((repo) =>
            this.slots.run(async () => {
              if (this.closing.signal.aborted) return;
              const outcome = await this.fetch(connection, repo, token);
              if (outcome === null) {
                failed++;
              } else {
                fetched++;
                bytes += outcome;
              }
            }),
          ),
      );
      if (this.closing.signal.aborted) return;
      this.dropDeparted(connection.name, record);
      record.lastSyncedAt = new Date().toISOString();
      this.state.save();
      this.publishSoon();
    } catch (error) {
      if (this.closing.signal.aborted) return;
      record.error = messageOf(error);
      live.totals.failures++;
      this.state.save();
      this.options.logger.warn({ connection: name, error: record.error }, 'connection sync failed');
    } finally {
      const seconds = (performance.now() - started) / 1000;
      Object.assign(live.totals, { syncs: live.totals.syncs + 1, bytes: live.totals.bytes + bytes, seconds: live.totals.seconds + seconds });
      live.syncing = false;
      if (!this.closing.signal.aborted) {
        this.options.logger.info(
          { connection: name, repositories: record.repos.length, fetched, failed, bytes, seconds: Math.round(seconds * 10) / 10 },
          'connection synced',
        );
        this.schedule(name, live.again ? 0 : nextDelayMs);
        live.again = false;
      }
    }
  }

  /** Merges a listing into the record: matches by host id (a rename keeps the mirror), then by name. */
  private reconcile(connection: ConnectionConfig, record: ConnectionRecord, listed: ListedRepository[], warnings: string[]): void {
    const now = new Date().toISOString();
    const taken = new Set([...this.config.repos.map((repo) => repo.name), ...this.otherConnectionsNames(connection.name)]);
    const byHostId = new Map(record.repos.filter((repo) => repo.hostId !== undefined).map((repo) => [repo.hostId!, repo]));
    const byName = new Map(record.repos.map((repo) => [repo.name, repo]));
    const kept = new Set<MirroredRepository>();
    const collisions: string[] = [];
    for (const item of listed) {
      if (taken.has(item.name)) {
        collisions.push(item.name);
        continue;
      }
      const known = (item.hostId !== undefined ? byHostId.get(item.hostId) : undefined) ?? byName.get(item.name);
      const repo: MirroredRepository = known ?? {
        name: item.name,
        path: item.path,
        cloneUrl: item.cloneUrl,
        archived: false,
        fork: false,
        mirror: mirrorName(item),
      };
      delete repo.renamedFrom;
      if (repo.name !== item.name) {
        this.options.logger.info({ connection: connection.name, from: repo.name, to: item.name }, 'repository renamed on its host');
        repo.renamedFrom = repo.name;
      }
      Object.assign(repo, { name: item.name, path: item.path, cloneUrl: item.cloneUrl, archived: item.archived === true, fork: item.fork === true });
      if (item.hostId !== undefined) repo.hostId = item.hostId;
      if (item.webUrl !== undefined && /^https?:\/\//.test(item.webUrl)) repo.webUrl = item.webUrl;
      delete repo.goneSince;
      kept.add(repo);
    }
    for (const repo of record.repos) if (!kept.has(repo)) repo.goneSince ??= now;
    record.repos = [...kept, ...record.repos.filter((repo) => !kept.has(repo))];
    this.holders = null;
    record.warnings = [...warnings, ...collisions.slice(0, 20).map((name) => `${name} left out: a configured repository or another connection has that name`)];
  }

  private otherConnectionsNames(name: string): string[] {
    return this.config.connections
      .filter((connection) => connection.name !== name)
      .flatMap((connection) => this.state.record(connection.name).repos.map((repo) => repo.name));
  }

  /** Fetches one mirror; the bytes it grew by, or null when it failed (recorded on the repository). */
  private async fetch(connection: ConnectionConfig, repo: MirroredRepository, token: string | undefined): Promise<number | null> {
    const first = repo.fetchedAt === undefined;
    const { sync } = this.config;
    try {
      const outcome = await fetchMirror({
        directory: this.mirrorPath(connection.name, repo),
        url: repo.cloneUrl,
        branches: connection.branches,
        tags: connection.tags,
        ...(token !== undefined ? { credential: { username: gitUser(connection), password: token } } : {}),
        askpass: this.askpass,
        allowFile: connection.type === 'git',
        timeoutMs: sync.fetchTimeoutSeconds * 1000,
        maxBytes: sync.maxRepositoryMegabytes * 1024 * 1024,
        signal: this.closing.signal,
      });
      repo.fetchedAt = new Date().toISOString();
      delete repo.error;
      if (first || repo.renamedFrom) this.publishSoon();
      else if (outcome.changed) this.options.onFetched(repo.name);
      return outcome.bytes;
    } catch (error) {
      if (this.closing.signal.aborted) return null;
      repo.error = messageOf(error);
      this.liveOf(connection.name).totals.fetchFailures++;
      this.options.logger.warn({ connection: connection.name, repo: repo.name, error: repo.error }, 'fetch failed; the mirror keeps its last good state');
      return null;
    }
  }

  /** Drops the repositories that left this node for `sync.removeAfterHours` (retention.ts `departures`), and their mirrors. */
  private dropDeparted(connection: string, record: ConnectionRecord): void {
    const { gone, released } = departures(record, this.options.holds, this.config.sync.removeAfterHours);
    if (gone.length + released.length === 0) return;
    const names = (repos: MirroredRepository[]) => repos.map((repo) => repo.name);
    this.options.logger.info({ connection, gone: names(gone), released: names(released) }, 'repositories gone from the host or not held here: mirrors removed');
    this.holders = null;
    this.removeMirrors([...gone, ...released].map((repo) => this.mirrorPath(connection, repo)));
  }

  private dropUnconfigured(): void {
    this.holders = null;
    const forgotten = this.state.forgetAllBut(new Set(this.config.connections.map((connection) => connection.name)));
    this.removeMirrors(forgotten.flatMap(({ connection, repos }) => repos.map((repo) => this.mirrorPath(connection, repo))));
  }

  /** Removes mirrors once the daemon has stopped indexing them: the state is saved and the list published first, once. */
  private removeMirrors(directories: string[]): void {
    if (directories.length === 0) return;
    this.state.save();
    this.options.onRepositories();
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  }

  private publishSoon(): void {
    if (this.publishTimer || this.closing.signal.aborted) return;
    this.publishTimer = setTimeout(() => {
      this.publishTimer = null;
      this.state.save();
      this.options.onRepositories();
    }, PUBLISH_DEBOUNCE_MS);
    this.publishTimer.unref();
  }

  private mirrorPath(connection: string, repo: MirroredRepository): string {
    return mirrorPath(this.config.dataDir, connection, repo);
  }
}

function messageOf(error: unknown): string {
  return error instanceof ConnectionError ? error.message : `unexpected: ${(error as Error)?.message ?? String(error)}`;
}

function pick<T extends object, K extends keyof T>(value: T, ...keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((key) => value[key] !== undefined).map((key) => [key, value[key]])) as Partial<Pick<T, K>>;
}
