/**
 * The daemon's lifecycle: start (auth state, search pool, index scheduler,
 * HTTP server, watchdog), reload of a new configuration, and graceful
 * shutdown. `trawl serve` (cli/serve-command.ts) wires signals to it.
 */
import fs from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { native } from '../../native/index.js';
import { OAuthServer } from '../auth/oauth.js';
import { OidcSignIn, readClientSecret } from '../auth/oidc.js';
import { ClusterSearch } from '../cluster/fan-out.js';
import type { ClusterNode } from '../cluster/node.js';
import { heldConfig, identifiedConfig, shardSources, shareRepositoryIds, startClusterNode } from './daemon-cluster.js';
import { openAuth, type OpenedAuth } from '../auth/open.js';
import { contextsOver, listenUrl, type Config, type OidcConfig } from '../config/config.js';
import { ConnectionSyncer } from '../connections/syncer.js';
import { ProcessSlots } from '../git/process-slots.js';
import { Backlogs } from './stream-backlog.js';
import { IndexScheduler } from '../indexer/scheduler.js';
import type { Logger } from '../obs/logger.js';
import { Metrics } from '../obs/metrics.js';
import { listedRepository, loadCatalog, type Catalog } from '../search/catalog.js';
import { SearchPool } from '../search/pool.js';
import { startWorkerThreads, workerOptions } from '../search/workers.js';
import { HttpServer } from './app.js';
import { endSessionsOfDeadCredentials } from './mcp/sessions.js';
import { forgetRepositoriesExcept } from './repositories.js';
import type { ServerContext } from './route.js';
import { ROUTES } from './routes/index.js';
import { startWatchdog } from './watchdog.js';
import { loadWebApp } from './web-app.js';

/**
 * How long the index thread outlives its last pass: a burst of commits keeps it (and the modules it
 * loaded) for the next one, an idle daemon gives its isolate back (docs/design.md, "Start").
 */
const INDEX_THREAD_IDLE_MS = 30_000;

/** How long the first index pass waits at most for the search workers to map the shards. */
const FIRST_PASS_WAIT_MS = 5_000;

type Status = 'starting' | 'ok' | 'stopping';

export class Daemon {
  private status: Status = 'starting';
  /** The URL the server answers on, with the port actually bound. */
  readonly url: string;

  private constructor(
    private readonly initial: Config,
    private config: Config,
    private readonly logger: Logger,
    private readonly auth: OpenedAuth,
    private readonly pool: SearchPool,
    private readonly catalog: CatalogHolder,
    private readonly scheduler: IndexScheduler,
    private readonly singleSignOn: SingleSignOn,
    private readonly server: HttpServer,
    private readonly watchdog: NodeJS.Timeout | null,
    private readonly syncer: ConnectionSyncer,
    /** The configuration file's repositories and contexts (the last one read); connections add to them. */
    private configured: Pick<Config, 'repos' | 'contexts'>,
    private readonly cluster: ClusterNode | null,
    /** The cluster's repository ids (daemon-cluster.ts), shared with the server context. */
    private readonly clusterIds: Map<string, number>,
  ) {
    this.url = listenUrl(config.listen.host, server.port);
  }

  /**
   * Opens the state, starts the scheduler, binds the port. `threads`: the search workers, started by
   * the caller with `workerOptions(initial)` (serve does, before this module loads: docs/design.md,
   * "Start"), else here. Rejects (having closed what it opened, `threads` too) when the state is locked
   * or damaged or the port cannot be bound. Ready (`READY=1`) once the first index pass is done.
   */
  static async start(initial: Config, logger: Logger, version: string, threads = startWorkerThreads(workerOptions(initial))): Promise<Daemon> {
    let config = initial;
    let daemon: Daemon | undefined;
    const pool = new SearchPool({ ...workerOptions(config), ...searchSettings(config) }, threads);
    let auth: OpenedAuth;
    try {
      fs.mkdirSync(initial.dataDir, { recursive: true });
      auth = await openAuth(initial, logger);
    } catch (error) {
      await pool.close();
      throw error;
    }
    auth.store.onChange(endSessionsOfDeadCredentials);
    let syncer: ConnectionSyncer;
    let cluster: ClusterNode | null = null;
    try {
      syncer = ConnectionSyncer.open({
        config,
        logger,
        onRepositories: () =>
          void daemon?.connectionsChanged().catch((error: unknown) => logger.error({ err: error }, "the connections' repositories could not be applied")),
        onFetched: (name) => scheduler.changed(name),
        ...(config.cluster ? { holds: (name: string) => cluster?.holds(name) ?? false } : {}),
      });
    } catch (error) {
      await Promise.all([pool.close(), auth.close()]);
      throw error;
    }
    config = withConnectionRepositories(config, config, syncer);
    const applyHeld = () =>
      void daemon?.heldChanged().catch((error: unknown) => logger.error({ err: error }, 'cluster: the partitions held could not be applied'));
    const clusterIds = new Map<string, number>();
    try {
      if (config.cluster) {
        cluster = await startClusterNode(config, auth, logger, () => applyHeld());
        await shareRepositoryIds(cluster, config, clusterIds);
      }
    } catch (error) {
      await Promise.all([pool.close(), syncer.close(), auth.close(), cluster?.close()]);
      throw error;
    }
    const catalog = new CatalogHolder(pool);
    catalog.publish(loadCatalog(identifiedConfig(config, cluster, clusterIds)));
    const heldVersion = cluster?.heldVersion;
    const scheduler = new IndexScheduler({
      config: heldConfig(config, cluster, clusterIds),
      logger,
      rescanIntervalMs: config.server.rescanIntervalSeconds * 1000,
      debounceMs: 100,
      threadIdleMs: INDEX_THREAD_IDLE_MS,
      onPublished: () => {
        catalog.publish(loadCatalog(identifiedConfig(daemon?.config ?? config, cluster, clusterIds)));
        void daemon?.clusterPublished();
      },
      ...(cluster ? { replicas: shardSources(cluster) } : {}),
    });
    const singleSignOn = new SingleSignOn(() => daemon?.config ?? config, auth.store.keyFor('oidc sign-in state'));
    try {
      singleSignOn.configure(config.auth.oidc);
    } catch (error) {
      await Promise.all([pool.close(), scheduler.close(), syncer.close(), auth.close(), cluster?.close()]);
      throw error;
    }
    const context = serverContext(
      () => daemon?.config ?? config,
      () => daemon?.status ?? 'starting',
      { pool, catalog, scheduler, auth, singleSignOn, syncer, logger, version, cluster, clusterIds },
    );
    let server: HttpServer;
    try {
      server = await HttpServer.listen({
        host: config.listen.host,
        port: config.listen.port,
        maxBodyBytes: config.server.maxBodyBytes,
        streamStallMs: config.server.streamStallSeconds * 1000,
        rateLimitPerSecond: config.server.rateLimitPerSecond,
        routes: ROUTES,
        context,
        web: loadWebApp(),
      });
    } catch (error) {
      await Promise.all([pool.close(), scheduler.close(), syncer.close(), auth.close(), cluster?.close()]);
      throw error;
    }
    // With port 0 the default public URL names the port actually bound.
    if (config.listen.port === 0 && config.publicUrl.endsWith(':0')) {
      config = { ...config, publicUrl: config.publicUrl.replace(/:0$/, `:${server.port}`) };
      pool.configure(searchSettings(config));
    }
    try {
      await cluster?.join(listenUrl(config.listen.host, server.port));
    } catch (error) {
      server.stopAccepting();
      await Promise.all([pool.close(), scheduler.close(), syncer.close(), auth.close(), cluster?.close()]);
      throw error;
    }
    daemon = new Daemon(
      initial,
      config,
      logger,
      auth,
      pool,
      catalog,
      scheduler,
      singleSignOn,
      server,
      startWatchdog(pool, logger, config.server.searchTimeBudgetMs),
      syncer,
      initial,
      cluster,
      clusterIds,
    );
    // The first searches come before the first index pass: it waits for the workers' mappings (docs/design.md, "Start").
    const mapped = Promise.race([pool.firstMapping, delay(FIRST_PASS_WAIT_MS, undefined, { ref: false })]);
    void mapped.then(() => (daemon.stopping ? undefined : scheduler.start().then(() => daemon.ready())));
    syncer.start();
    // Partitions that moved while the daemon started (the scheduler took the held repositories of before).
    if (cluster && cluster.heldVersion !== heldVersion) applyHeld();
    return daemon;
  }

  /** True once shutdown began. */
  get stopping(): boolean {
    return this.status === 'stopping';
  }

  private ready(): void {
    if (this.status !== 'starting') return;
    this.status = 'ok';
    native.sdNotify('READY=1');
    this.logger.info({ url: this.url, repositories: this.config.repos.length }, 'serving');
    warnEmptyContexts(this.config, this.logger);
  }

  /**
   * Applies a new configuration: repositories, connections (each synced now), contexts, links and anonymous
   * access change at once; listen, server, dataDir, index and sync settings wait for a restart (a warning says so).
   */
  async reload(next: Config): Promise<void> {
    if (this.status === 'stopping') return;
    const { initial } = this;
    if (
      JSON.stringify([next.listen, next.server, next.dataDir, next.index, next.sync, next.cluster]) !==
      JSON.stringify([initial.listen, initial.server, initial.dataDir, initial.index, initial.sync, initial.cluster])
    ) {
      this.logger.warn('SIGHUP: listen, server, dataDir, index, sync and cluster settings take effect at the next restart');
    }
    const publicUrl = initial.listen.port === 0 && next.publicUrl === initial.publicUrl ? this.config.publicUrl : next.publicUrl;
    this.configured = next;
    this.syncer.reconfigure({ ...initial, repos: next.repos, connections: next.connections });
    this.config = withConnectionRepositories({ ...initial, auth: next.auth, publicUrl, connections: next.connections }, next, this.syncer);
    try {
      this.singleSignOn.configure(next.auth.oidc);
    } catch (error) {
      this.logger.error({ err: error }, 'SIGHUP: auth.oidc not applied; single sign-on stays as it was');
    }
    this.pool.configure(searchSettings(this.config));
    await this.applyRepositories();
    this.logger.info({ repositories: this.config.repos.length }, 'SIGHUP: configuration reloaded');
    warnEmptyContexts(this.config, this.logger);
  }

  /** A sync added, renamed or dropped repositories: they are listed, authorized and indexed from now on. */
  private async connectionsChanged(): Promise<void> {
    if (this.status === 'stopping') return;
    this.config = withConnectionRepositories(this.config, this.configured, this.syncer);
    await this.applyRepositories();
  }

  /**
   * Lists the repositories of `config` and gives the indexer those this node holds. In a cluster, a new name is given
   * the cluster's id first: it is never listed, nor indexed, without the id it keeps.
   */
  private async applyRepositories(): Promise<void> {
    if (this.cluster) await shareRepositoryIds(this.cluster, this.config, this.clusterIds);
    this.catalog.publish(loadCatalog(identifiedConfig(this.config, this.cluster, this.clusterIds)));
    forgetRepositoriesExcept(this.config.repos);
    await this.scheduler.reconfigure(heldConfig(this.config, this.cluster, this.clusterIds));
  }

  /** The cluster moved partitions to or from this node: the indexer takes the repositories it holds now, the connections fetch them. */
  private async heldChanged(): Promise<void> {
    if (this.status === 'stopping') return;
    for (const connection of this.config.connections) this.syncer.syncNow(connection.name);
    await this.applyRepositories();
  }

  /** The index published: the held partitions now fully indexed are served to the cluster. */
  private async clusterPublished(): Promise<void> {
    if (!this.cluster || this.status === 'stopping') return;
    // A repository this node could not index (and holds no shards of) leaves its partition to a replica that did.
    const indexedBytes = new Map(
      this.catalog.current.repositories.flatMap((repo) =>
        repo.entry && (repo.entry.state !== 'error' || repo.entry.shards.length > 0)
          ? [[repo.config.name, repo.shards.reduce((sum, shard) => sum + shard.bytes, 0)] as const]
          : [],
      ),
    );
    await this.cluster.published(this.config.repos, (repo) => indexedBytes.get(repo.name));
  }

  /**
   * Stops accepting (new requests get 503), drains the requests in flight for `server.shutdownDrainSeconds`,
   * then closes the pool (searches still running end), the scheduler and the state logs.
   */
  async shutdown(signal: string): Promise<void> {
    this.status = 'stopping';
    native.sdNotify('STOPPING=1');
    if (this.watchdog) clearInterval(this.watchdog);
    this.logger.info({ signal, inFlight: this.server.requestsInFlight }, 'shutting down');
    this.server.stopAccepting();
    await this.cluster?.close(); // out of the other nodes' searches at once
    const drained = await this.server.drain(this.config.server.shutdownDrainSeconds * 1000);
    if (!drained) this.logger.warn({ inFlight: this.server.requestsInFlight }, 'drain timed out; ending the rest');
    // The pool first: searches of clients that left during the drain end there, before the audit log closes under them.
    await Promise.all([this.pool.close(), this.scheduler.close(), this.syncer.close()]);
    await this.auth.close();
    this.logger.info('stopped');
  }
}

/** `config` with the configuration file's repositories and those of the connections, and its contexts over them all. */
function withConnectionRepositories(config: Config, configured: Pick<Config, 'repos' | 'contexts'>, syncer: ConnectionSyncer): Config {
  const repos = [...configured.repos, ...syncer.repositories()];
  return { ...config, repos, contexts: contextsOver(configured.contexts, repos) };
}

/** Says which search contexts no configured repository is in (a search with one is refused, naming its globs). */
function warnEmptyContexts(config: Config, logger: Logger): void {
  for (const [name, context] of Object.entries(config.contexts)) {
    if (context.empty) logger.warn({ context: name, include: context.include, exclude: context.exclude }, 'search context holds no configured repository');
  }
}

/** The OpenID Connect sign-in of the configuration in force: rebuilt (its secret file read again) when `auth.oidc` changes. */
class SingleSignOn {
  private settings = 'null';
  current: OidcSignIn | null = null;

  constructor(
    private readonly config: () => Config,
    /** Seals sign-ins under way into the browser's cookie. */
    private readonly stateKey: Buffer,
  ) {}

  /** Throws when the client secret file cannot be read or others can read it. */
  configure(oidc: OidcConfig | null): void {
    const settings = JSON.stringify(oidc);
    if (settings === this.settings) return;
    this.current =
      oidc && new OidcSignIn(oidc, readClientSecret(oidc.clientSecretFile), () => `${this.config().publicUrl}/api/auth/oidc/callback`, this.stateKey);
    this.settings = settings;
  }
}

/** The repositories and shards published last: what routes list and authorize against, and what the pool searches. */
class CatalogHolder {
  current: Catalog = { generation: -1, repositories: [] };

  constructor(private readonly pool: SearchPool) {}

  publish(catalog: Catalog): void {
    this.current = catalog;
    this.pool.setCatalog(catalog);
  }
}

/** What the routes see of the daemon; `config` and `status` are read at each request, as reload and shutdown change them. */
function serverContext(
  config: () => Config,
  status: () => Status,
  parts: {
    pool: SearchPool;
    catalog: CatalogHolder;
    scheduler: IndexScheduler;
    auth: OpenedAuth;
    singleSignOn: SingleSignOn;
    syncer: ConnectionSyncer;
    logger: Logger;
    version: string;
    cluster: ClusterNode | null;
    clusterIds: ReadonlyMap<string, number>;
  },
): ServerContext {
  const { pool, catalog, scheduler, auth, singleSignOn, syncer, logger, version, cluster, clusterIds } = parts;
  const initial = config();
  const gitProcesses = new ProcessSlots(initial.server.workers, initial.server.maxQueuedSearches);
  const metrics = new Metrics({
    searchesInFlight: () => pool.searchesInFlight,
    shardsMapped: () => pool.shardsMapped,
    workerShardsMapped: () => pool.workerShardsMapped,
    indexLagSeconds: () => scheduler.lagSeconds(),
    failedSearchTasks: () => pool.failedTasks,
    failedShards: () => pool.failedShards,
    renderSlotsInUse: () => pool.renderSlotsInUse,
    yieldedSearchTasks: () => pool.yieldedTasks,
    displacedSearches: () => pool.displacedSearches,
    gitReadsWaiting: () => gitProcesses.waiting,
    connectionTotals: () => syncer.totals(),
    ...(cluster ? { cluster: () => cluster.counts() } : {}),
  });
  return {
    get config() {
      return config();
    },
    pool,
    catalog: () => catalog.current,
    metrics,
    logger,
    version,
    status,
    auth: auth.store,
    audit: auth.audit,
    oauth: new OAuthServer(auth.store),
    gitProcesses,
    streamBacklogs: new Backlogs(),
    oidc: () => singleSignOn.current,
    connections: syncer,
    cluster: cluster && {
      node: cluster,
      repositoryIds: clusterIds,
      search: new ClusterSearch({
        node: cluster,
        pool,
        logger,
        repositoryIds: clusterIds,
        timeBudgetMs: () => config().server.searchTimeBudgetMs,
        countPeerRequest: (node, outcome) => metrics.peerRequests.inc({ node, outcome }),
      }),
    },
    indexState: (name) => {
      // A repository whose partition this node does not serve is ready once another node does (docs/cluster.md, "Repositories").
      if (cluster && !cluster.servesPartition(cluster.partitionOf(name))) {
        if (cluster.peersServing(name).length > 0) return 'ready';
        if (!cluster.holds(name)) return 'pending';
      }
      return scheduler.isIndexing(name) ? 'indexing' : (listedRepository(catalog.current, name)?.entry?.state ?? 'pending');
    },
  };
}

/** What the search pool takes from the configuration and may change while it runs. */
function searchSettings(config: Config) {
  return { publicUrl: config.publicUrl, contexts: config.contexts, timeBudgetMs: config.server.searchTimeBudgetMs };
}
