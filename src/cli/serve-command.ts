import type { Config } from '../config/config.js';
import { createLogger } from '../obs/logger.js';
import { loadCatalog, shardFiles } from '../search/catalog.js';
import { startWorkerThreads, workerOptions } from '../search/workers.js';
import type { Daemon } from '../server/daemon.js';
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

/** Runs the daemon with `config`, read from `configFile` (undefined: the zero-config default), until a signal stops it. */
async function serve(config: Config, configFile: string | undefined): Promise<number> {
  // The search workers start before the daemon's modules load: they load theirs and map the shards
  // meanwhile (docs/design.md, "Start").
  const threads = startWorkerThreads(workerOptions(config));
  try {
    const catalog = loadCatalog(config);
    threads.workers.mapShards(catalog.generation, shardFiles(catalog));
  } catch {
    // A manifest that cannot be read is reported by Daemon.start, which reads it again.
  }
  const { Daemon } = await import('../server/daemon.js');
  const logger = createLogger('trawl');
  let daemon: Daemon;
  try {
    daemon = await Daemon.start(config, logger, packageVersion(), threads);
  } catch (error) {
    logger.error({ err: error }, 'cannot start');
    console.error(`trawl serve: ${(error as Error).message}`);
    return 1;
  }
  /** SIGHUP: re-read the config file; an invalid one leaves the running configuration in place. */
  const reload = async () => {
    if (configFile === undefined || daemon.stopping) return;
    const next = configOrProblem(configFile);
    if (typeof next === 'string') logger.error({ problem: next }, 'SIGHUP: the configuration is invalid; keeping the running one');
    else await daemon.reload(next);
  };
  return new Promise<number>((resolve) => {
    const shutdown = async (signal: string) => {
      if (daemon.stopping) {
        logger.warn({ signal }, 'second signal: exiting at once');
        process.exit(1);
      }
      await daemon.shutdown(signal);
      resolve(0);
      // Clients' idle keep-alive connections would hold the event loop open; nothing is left to finish.
      setImmediate(() => process.exit(0));
    };
    process.on('SIGHUP', () => void reload());
    process.on('SIGTERM', () => void shutdown('SIGTERM'));
    process.on('SIGINT', () => void shutdown('SIGINT'));
    // Announced only now: a supervisor that signals as soon as it reads the line must find the handlers in place
    // (docs/operations.md, "Signals").
    const { url } = daemon;
    console.log(`trawl listening on ${url}`);
    if (configFile === undefined) {
      console.log(`Indexing ${config.repos[0]!.path}; anonymous reads are allowed from this machine only.`);
      console.log(`Open ${url}/ in a browser, or try:`);
      console.log(`  curl -s ${url}/api/search -H 'Content-Type: application/json' -d '{"query": "TODO", "matches": 10}'`);
    }
  });
}
