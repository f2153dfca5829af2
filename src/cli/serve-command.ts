import fs from 'node:fs';
import { native } from '../../native/index.js';
import { openAuth, type OpenedAuth } from './open-auth.js';
import type { Config } from '../config/config.js';
import { IndexScheduler } from '../indexer/scheduler.js';
import { createLogger, type Logger } from '../obs/logger.js';
import { Metrics } from '../obs/metrics.js';
import { loadCatalog } from '../search/catalog.js';
import { SearchPool } from '../search/pool.js';
import { HttpServer } from '../server/app.js';
import { endSessionsOfDeadCredentials } from '../server/mcp/sessions.js';
import { forgetRepositoriesExcept } from '../server/repositories.js';
import type { ServerContext } from '../server/route.js';
import { ROUTES } from '../server/routes/index.js';
import { loadWebApp } from '../server/web-app.js';
import { configFromArgs, configOrProblem } from './config-option.js';
import type { Command } from './main.js';
import { packageVersion } from './version.js';

export const serveCommand: Command = {
  summary: 'run the search daemon: HTTP API, worker pool, live indexing',
  usage: `Usage: trawl serve [--config FILE]

Serves the HTTP API on the configured address, searching with a pool of
worker threads, and keeps the index current: repositories are watched and
re-indexed when their branches (or, for plain directories, files) change.

Without --config or $TRAWL_CONFIG it runs the zero-config demo: the git
repository in the current directory, readable anonymously on 127.0.0.1.

Options:
  --config FILE   configuration file (default: $TRAWL_CONFIG)
  -h, --help      show this help

Prints "trawl listening on <url>" once the port is bound. SIGHUP re-reads
the config file: repositories added or removed, contexts, publicUrl and
anonymous access change without a restart. SIGTERM or SIGINT stops it
gracefully (new requests get 503, requests in flight finish); a second
signal exits at once. Exit status 0 after a graceful stop, 2 for a
usage or configuration error.`,

  async run(args) {
    const loaded = configFromArgs('serve', args);
    return loaded ? serve(loaded.config, loaded.file) : 2;
  },
};

/** Runs the daemon with `initial`, read from `configFile` (undefined: the zero-config default). */
async function serve(initial: Config, configFile: string | undefined): Promise<number> {
  const logger = createLogger('trawl');
  let config = initial;
  fs.mkdirSync(config.dataDir, { recursive: true });
  let auth: OpenedAuth;
  try {
    auth = await openAuth(config, logger);
  } catch (error) {
    console.error(`trawl serve: ${(error as Error).message}`);
    return 1;
  }
  auth.store.onChange(endSessionsOfDeadCredentials);
  let status: 'starting' | 'ok' | 'stopping' = 'starting';
  const pool = new SearchPool({
    workers: config.server.workers,
    maxQueuedSearches: config.server.maxQueuedSearches,
    ...searchSettings(config),
  });
  pool.setCatalog(loadCatalog(config));
  const scheduler = new IndexScheduler({
    config,
    logger,
    rescanIntervalMs: config.server.rescanIntervalSeconds * 1000,
    debounceMs: 100,
    onPublished: () => pool.setCatalog(loadCatalog(config)),
  });
  const metrics = new Metrics({
    searchesInFlight: () => pool.searchesInFlight,
    shardsMapped: () => pool.shardsMapped,
    workerShardsMapped: () => pool.workerShardsMapped,
    indexLagSeconds: () => scheduler.lagSeconds(),
    failedSearchTasks: () => pool.failedTasks,
    failedShards: () => pool.failedShards,
    renderSlotsInUse: () => pool.renderSlotsInUse,
  });
  const context: ServerContext = {
    get config() {
      return config;
    },
    pool,
    metrics,
    logger,
    version: packageVersion(),
    status: () => status,
    auth: auth.store,
    audit: auth.audit,
    indexState: (name) => (scheduler.isIndexing(name) ? 'indexing' : pool.currentCatalog.repositories.find((repo) => repo.config.name === name)?.entry?.state ?? 'pending'),
  };
  let server: HttpServer;
  try {
    server = await HttpServer.listen({ host: config.listen.host, port: config.listen.port, maxBodyBytes: config.server.maxBodyBytes, streamStallMs: config.server.streamStallSeconds * 1000, rateLimitPerSecond: config.server.rateLimitPerSecond, routes: ROUTES, context, web: loadWebApp() });
  } catch (error) {
    logger.error({ err: error }, 'cannot start');
    await Promise.all([pool.close(), scheduler.close(), auth.close()]);
    console.error(`trawl serve: ${(error as Error).message}`);
    return 1;
  }
  // With port 0 the default public URL names the port actually bound.
  if (config.listen.port === 0 && config.publicUrl.endsWith(':0')) {
    config = { ...config, publicUrl: config.publicUrl.replace(/:0$/, `:${server.port}`) };
    pool.configure(searchSettings(config));
  }
  const url = `http://${config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host}:${server.port}`;
  scheduler.start().then(() => {
    if (status !== 'starting') return;
    status = 'ok';
    native.sdNotify('READY=1');
    logger.info({ url, repositories: config.repos.length }, 'serving');
  });
  const watchdog = startWatchdog(pool, logger, config.server.searchTimeBudgetMs);

  /** SIGHUP: re-read the config file; repositories, contexts, links and anonymous access change without a restart. */
  const reload = async () => {
    if (configFile === undefined || status === 'stopping') return;
    const next = configOrProblem(configFile);
    if (typeof next === 'string') {
      logger.error({ problem: next }, 'SIGHUP: the configuration is invalid; keeping the running one');
      return;
    }
    if (JSON.stringify([next.listen, next.server, next.dataDir, next.index]) !== JSON.stringify([initial.listen, initial.server, initial.dataDir, initial.index])) {
      logger.warn('SIGHUP: listen, server, dataDir and index settings take effect at the next restart');
    }
    const publicUrl = initial.listen.port === 0 && next.publicUrl === initial.publicUrl ? config.publicUrl : next.publicUrl;
    config = { ...initial, repos: next.repos, contexts: next.contexts, auth: next.auth, publicUrl };
    pool.configure(searchSettings(config));
    pool.setCatalog(loadCatalog(config));
    forgetRepositoriesExcept(config.repos);
    await scheduler.reconfigure(config);
    logger.info({ repositories: config.repos.length }, 'SIGHUP: configuration reloaded');
  };

  return new Promise<number>((resolve) => {
    const shutdown = async (signal: string) => {
      if (status === 'stopping') {
        logger.warn({ signal }, 'second signal: exiting at once');
        process.exit(1);
      }
      status = 'stopping';
      native.sdNotify('STOPPING=1');
      if (watchdog) clearInterval(watchdog);
      logger.info({ signal, inFlight: server.requestsInFlight }, 'shutting down');
      server.stopAccepting();
      const drained = await server.drain(config.server.shutdownDrainSeconds * 1000);
      if (!drained) logger.warn({ inFlight: server.requestsInFlight }, 'drain timed out; ending the rest');
      // The pool first: searches of clients that left during the drain end there, before the audit log closes under them.
      await Promise.all([pool.close(), scheduler.close()]);
      await auth.close();
      logger.info('stopped');
      resolve(0);
      // Clients' idle keep-alive connections would hold the event loop open; nothing is left to finish.
      setImmediate(() => process.exit(0));
    };
    process.on('SIGHUP', () => void reload());
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
    // Announced only now: a supervisor that signals as soon as it reads the line must find the handlers in place
    // (announced before them, 1 in 12 such SIGTERMs ended the process by the signal's default action, status 143).
    console.log(`trawl listening on ${url}`);
    if (configFile === undefined) {
      console.log(`Indexing ${config.repos[0]!.path}; anonymous reads are allowed from this machine only.`);
      console.log(`Open ${url}/ in a browser, or try:`);
      console.log(`  curl -s ${url}/api/search -H 'Content-Type: application/json' -d '{"query": "TODO", "matches": 10}'`);
    }
  });
}

/**
 * Under systemd with WatchdogSec= ($WATCHDOG_USEC set), pings the watchdog
 * at half the interval, but only while the search pool is responsive
 * (searches answered since the last tick, or a no-op task answered in time):
 * a wedged pool stops the pings and systemd restarts the daemon.
 */
function startWatchdog(pool: SearchPool, logger: Logger, searchTimeBudgetMs: number): NodeJS.Timeout | null {
  const usec = Number(process.env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return null;
  const intervalMs = Math.max(100, usec / 2000);
  if (searchTimeBudgetMs >= intervalMs) {
    logger.warn({ searchTimeBudgetMs, intervalMs }, 'server.searchTimeBudgetMs is not below half of WatchdogSec: one long search can make a busy pool look wedged');
  }
  const timer = setInterval(() => {
    void pool.responsive(intervalMs).then((alive) => {
      if (alive) native.sdNotify('WATCHDOG=1');
      else logger.warn({ intervalMs }, 'search pool did not answer: watchdog not pinged');
    });
  }, intervalMs);
  timer.unref();
  return timer;
}

/** What the search pool takes from the configuration and may change while it runs. */
function searchSettings(config: Config) {
  return { publicUrl: config.publicUrl, contexts: config.contexts, timeBudgetMs: config.server.searchTimeBudgetMs };
}
