import t from 'tap';
import path from 'node:path';
import { validateConfig } from '../../src/config/config.js';
import { IndexScheduler } from '../../src/indexer/scheduler.js';
import { createLogger } from '../../src/obs/logger.js';
import type { RepositoryOutcome } from '../../src/worker/index-protocol.js';
import { waitFor } from '../helpers/daemon.js';
import { commitAll, makeRepository, writeFiles } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

t.test('the index thread runs for passes and ends when idle; a change starts it again', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, { 'src/main.c': 'int first;\n' });
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos: [{ name: 'example.com/repo', path: repoDir, public: true }], index: { ctagsCommand: '' } }, 'test');
  const passes: RepositoryOutcome[][] = [];
  const threadAtPass: boolean[] = [];
  const scheduler = new IndexScheduler({
    config,
    logger: createLogger('test', 'silent'),
    rescanIntervalMs: 0,
    debounceMs: 50,
    threadIdleMs: 300,
    onPublished: (outcomes) => {
      passes.push(outcomes);
      threadAtPass.push(scheduler.threadRunning);
    },
  });
  t.teardown(() => scheduler.close());
  t.notOk(scheduler.threadRunning, 'no thread before there is a pass');
  await scheduler.start();
  t.same(passes.map((outcomes) => outcomes.map((outcome) => outcome.status)), [['indexed']], 'the first pass indexed the repository');
  await waitFor(async () => !scheduler.threadRunning, 10_000, 'the idle thread to end');
  t.pass('the thread ended once idle');

  writeFiles(repoDir, { 'src/main.c': 'int second;\n' });
  commitAll(repoDir, 'a change');
  await waitFor(async () => passes.length === 2, 15_000, 'the change to be indexed');
  t.same(passes[1]!.map((outcome) => outcome.status), ['indexed'], 'a new thread indexed the change');
  t.same(threadAtPass, [true, true], 'each pass ran on a running thread');
  await waitFor(async () => !scheduler.threadRunning, 10_000, 'the thread to end again');
  t.pass('and then ends');
});
