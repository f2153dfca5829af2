/**
 * Reporting an indexing pass: a redrawn progress bar and plain lines on a
 * terminal, pino log lines (progress at most once per interval) everywhere else.
 */
import type { Logger } from '../obs/logger.js';
import type { IndexReporter } from './run-index.js';
import type { RepositoryOutcome } from '../worker/index-protocol.js';
import type { BuildProgress } from './build-shards.js';

const LOG_INTERVAL_MS = 5000;
const BAR_INTERVAL_MS = 100;
const BAR_WIDTH = 30;

export function createReporter(logger: Logger, stream: NodeJS.WriteStream = process.stderr): IndexReporter {
  return stream.isTTY ? terminalReporter(stream) : logReporter(logger);
}

function logReporter(logger: Logger): IndexReporter {
  let last = 0;
  return {
    repositoryStarted: (repository, index, total) => logger.info({ repository, position: `${index + 1}/${total}` }, 'indexing repository'),
    progress(repository, progress) {
      const now = Date.now();
      if (now - last < LOG_INTERVAL_MS) return;
      last = now;
      logger.info({ repository, files: progress.files, totalFiles: progress.totalFiles, megabytes: Math.round(progress.bytes / 1e6) }, 'indexing progress');
    },
    repositoryFinished: (outcome) => logOutcome(logger, outcome),
  };
}

function terminalReporter(stream: NodeJS.WriteStream): IndexReporter {
  let last = 0;
  let started = 0;
  const clear = () => stream.write('\r\x1b[2K');
  return {
    repositoryStarted(repository, index, total) {
      started = Date.now();
      stream.write(`[${index + 1}/${total}] ${repository}\n`);
    },
    progress(_repository, progress: BuildProgress) {
      const now = Date.now();
      if (now - last < BAR_INTERVAL_MS && progress.files !== progress.totalFiles) return;
      last = now;
      const fraction = progress.totalFiles === 0 ? 1 : progress.files / progress.totalFiles;
      const filled = Math.round(fraction * BAR_WIDTH);
      const rate = progress.bytes / 1e6 / Math.max(0.001, (now - started) / 1000);
      clear();
      stream.write(
        `  [${'#'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
          `${progress.files}/${progress.totalFiles} files, ${(progress.bytes / 1e6).toFixed(0)} MB, ${rate.toFixed(1)} MB/s`,
      );
    },
    repositoryFinished(outcome) {
      clear();
      stream.write(`  ${describeOutcome(outcome)}\n`);
      if (outcome.status === 'indexed') for (const warning of outcome.warnings) stream.write(`  warning: ${warning}\n`);
    },
  };
}

function describeOutcome(outcome: RepositoryOutcome): string {
  switch (outcome.status) {
    case 'failed':
      return `failed: ${outcome.error}`;
    case 'unchanged':
      return 'unchanged, skipped';
    case 'indexed':
      return (
        `indexed ${outcome.documents} documents, ${(outcome.sourceBytes / 1e6).toFixed(1)} MB in ${outcome.seconds.toFixed(1)} s ` +
        `(${(outcome.shardBytes / 1e6).toFixed(1)} MB of shards)`
      );
  }
}

function logOutcome(logger: Logger, outcome: RepositoryOutcome): void {
  const repository = outcome.name;
  if (outcome.status === 'failed') {
    logger.error({ repository, error: outcome.error }, 'repository not indexed');
    return;
  }
  if (outcome.status === 'unchanged') {
    logger.info({ repository }, 'repository unchanged, skipped');
    return;
  }
  for (const warning of outcome.warnings) logger.warn({ repository, warning }, 'indexing warning');
  logger.info(
    {
      repository,
      documents: outcome.documents,
      megabytes: +(outcome.sourceBytes / 1e6).toFixed(1),
      shardMegabytes: +(outcome.shardBytes / 1e6).toFixed(1),
      seconds: +outcome.seconds.toFixed(2),
    },
    'repository indexed',
  );
}
