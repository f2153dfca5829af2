import { mirroredRepositories } from '../connections/mirrored-repositories.js';
import { runIndex } from '../indexer/run-index.js';
import { createReporter } from '../indexer/progress.js';
import { createLogger } from '../obs/logger.js';
import { configFromArgs } from './config-option.js';
import type { Command } from './main.js';

export const indexCommand: Command = {
  summary: 'index every configured repository once (unchanged ones are skipped)',
  usage: `Usage: trawl index [--config FILE]

Indexes each repository of the configuration into its dataDir: git
repositories branch by branch (the default branch as HEAD, plus the
configured branches), plain directories from the file system, and the
mirrors the daemon's connections have fetched (this command fetches
nothing). Repositories whose branches and settings have not changed since
the last run are skipped.

Options:
  --config FILE   configuration file (default: $TRAWL_CONFIG; without either,
                  the git repository in the current directory is indexed)
  -h, --help      show this help

Exit status: 0 when every repository is indexed or unchanged, 1 when any
failed (the others are still indexed), 2 for a usage or configuration error.`,

  async run(args) {
    const loaded = configFromArgs('index', args);
    if (!loaded) return 2;
    // The connections' mirrors as the daemon left them (no sync here): indexed too, never dropped from the index.
    const config = { ...loaded.config, repos: [...loaded.config.repos, ...mirroredRepositories(loaded.config)] };
    // On a terminal the reporter draws progress; JSON log lines are for everything else.
    const logger = createLogger('trawl-index', process.stderr.isTTY ? 'warn' : 'info');
    logger.info({ dataDir: config.dataDir, repositories: config.repos.length }, 'index pass starting');
    const outcomes = await runIndex(config, createReporter(logger));
    const failed = outcomes.filter((outcome) => outcome.status === 'failed').length;
    logger.info({ indexed: outcomes.length - failed, failed }, 'index pass finished');
    return failed > 0 ? 1 : 0;
  },
};
