import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import pino from 'pino';
import { validateConfig, type Config } from '../../src/config/config.js';
import { IndexScheduler } from '../../src/indexer/scheduler.js';
import { shardDirectory } from '../../src/index/data-directory.js';
import { readManifest } from '../../src/index/manifest.js';
import { createLogger } from '../../src/obs/logger.js';
import type { RepositoryOutcome } from '../../src/worker/index-protocol.js';
import { waitFor } from '../helpers/daemon.js';
import { commitAll, loseObject, makeRepository, writeFiles } from '../helpers/git.js';
import { inotifyWatches } from '../helpers/inotify.js';
import { tempDir } from '../helpers/tmp.js';

/** A repository of `files` in `root`, and a configuration that indexes it as `name` without ctags. */
function oneRepository(root: string, name: string, files: Record<string, string>) {
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, files);
  const config = validateConfig({ dataDir: path.join(root, 'data'), repos: [{ name, path: repoDir, public: true }], index: { ctagsCommand: '' } }, 'test');
  return { repoDir, config };
}

/** A scheduler for tests (passes 50 ms after a change, the thread ending 300 ms after its last), closed at teardown. */
function testScheduler(t: Test, config: Config, onPublished: (outcomes: RepositoryOutcome[]) => void = () => {}, logger = createLogger('test', 'silent')) {
  const scheduler = new IndexScheduler({ config, logger, rescanIntervalMs: 0, debounceMs: 50, threadIdleMs: 300, onPublished });
  t.teardown(() => scheduler.close());
  return scheduler;
}

t.test('the index thread runs for passes and ends when idle; a change starts it again', async (t) => {
  const { repoDir, config } = oneRepository(tempDir(t), 'example.com/repo', { 'src/main.c': 'int first;\n' });
  const passes: RepositoryOutcome[][] = [];
  const threadAtPass: boolean[] = [];
  const scheduler = testScheduler(t, config, (outcomes) => {
    passes.push(outcomes);
    threadAtPass.push(scheduler.threadRunning);
  });
  t.notOk(scheduler.threadRunning, 'no thread before there is a pass');
  await scheduler.start();
  t.same(
    passes.map((outcomes) => outcomes.map((outcome) => outcome.status)),
    [['indexed']],
    'the first pass indexed the repository',
  );
  await waitFor(async () => !scheduler.threadRunning, 10_000, 'the idle thread to end');
  t.pass('the thread ended once idle');

  writeFiles(repoDir, { 'src/main.c': 'int second;\n' });
  commitAll(repoDir, 'a change');
  await waitFor(async () => passes.length === 2, 15_000, 'the change to be indexed');
  t.same(
    passes[1]!.map((outcome) => outcome.status),
    ['indexed'],
    'a new thread indexed the change',
  );
  t.same(threadAtPass, [true, true], 'each pass ran on a running thread');
  await waitFor(async () => !scheduler.threadRunning, 10_000, 'the thread to end again');
  t.pass('and then ends');
});

t.test('an index thread that dies mid-pass fails that pass only: the published index stays, the next change is indexed', async (t) => {
  const root = tempDir(t);
  const repoDir = path.join(root, 'repo');
  makeRepository(repoDir, { 'src/main.c': 'int first;\n' });
  const dataDir = path.join(root, 'data');
  // A ctags that, started while `hold` exists, says so and never answers: the pass under it cannot end before the kill.
  const hold = path.join(root, 'hold');
  const holding = path.join(root, 'holding');
  const ctags = path.join(root, 'ctags');
  fs.writeFileSync(ctags, `#!/bin/sh\nif [ -e ${hold} ]; then touch ${holding}; exec cat > /dev/null; fi\nexec ctags "$@"\n`, { mode: 0o755 });
  const config = validateConfig({ dataDir, repos: [{ name: 'example.com/repo', path: repoDir, public: true }], index: { ctagsCommand: ctags } }, 'test');
  const passes: RepositoryOutcome[][] = [];
  const scheduler = testScheduler(t, config, (outcomes) => passes.push(outcomes));
  await scheduler.start();
  const published = readManifest(dataDir).repositories['example.com/repo']!;
  t.ok(published, 'the first pass published the repository');
  // Its thread, and the ctags processes it started, end when idle: the next pass starts ctags anew.
  await waitFor(async () => !scheduler.threadRunning, 10_000, 'the idle thread to end');

  fs.writeFileSync(hold, '');
  const inside = scheduler as unknown as { thread: Worker | null; indexing: Set<string> };
  writeFiles(repoDir, Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`gen/file${i}.c`, `int generated_${i} = ${i};\n`])));
  commitAll(repoDir, 'five files');
  await waitFor(async () => fs.existsSync(holding), 15_000, 'the pass of the change to reach ctags');
  t.ok(inside.indexing.has('example.com/repo'), 'the pass is under way');
  await inside.thread!.terminate();
  await waitFor(async () => !scheduler.threadRunning && inside.indexing.size === 0, 10_000, 'the killed pass to be failed');
  t.equal(passes.length, 1, 'the killed pass published nothing');
  t.same(readManifest(dataDir).repositories['example.com/repo'], published, 'the published index is the first pass’s, whole');

  fs.rmSync(hold);
  writeFiles(repoDir, { 'src/main.c': 'int second;\n' });
  commitAll(repoDir, 'one more change');
  await waitFor(async () => passes.length === 2, 30_000, 'the next change to be indexed');
  t.same(
    passes[1]!.map((outcome) => outcome.status),
    ['indexed'],
    'a new thread indexed it',
  );
  t.equal(passes[1]![0]!.status === 'indexed' && passes[1]![0]!.documents, 6, 'with the killed pass’s files');
  const manifest = readManifest(dataDir);
  const named = new Set([...Object.values(manifest.repositories).flatMap((entry) => entry.shards), ...(manifest.retired ?? []).map((entry) => entry.file)]);
  t.same(
    fs.readdirSync(shardDirectory(dataDir)).filter((file) => !named.has(file)),
    [],
    'nothing the killed pass wrote is left on disk',
  );
});

t.test('a pass logs each indexing warning with its repository', async (t) => {
  const { repoDir, config } = oneRepository(tempDir(t), 'example.com/damaged', { 'ok.txt': 'fine\n', 'lost.txt': 'this object will be deleted\n' });
  loseObject(repoDir, 'HEAD:lost.txt');
  const lines: { level: number; msg: string; repo?: string; warning?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const scheduler = testScheduler(t, config, () => {}, logger);
  await scheduler.start();
  const warnings = lines.filter((line) => line.msg === 'indexing warning');
  t.match(warnings, [{ level: 40, repo: 'example.com/damaged', warning: /^lost\.txt: not indexed, cannot be read \(git cat-file: [0-9a-f]{40} missing\)$/ }]);
  t.equal(warnings.length, 1, 'once');
  t.ok(
    lines.some((line) => line.msg === 'repository indexed' && line.repo === 'example.com/damaged'),
    'and the repository is indexed',
  );
});

t.test('a reconfiguration before the start leaves one watcher per repository, all closed by close', async (t) => {
  const { config } = oneRepository(tempDir(t), 'example.com/repo', { 'src/main.c': 'int first;\n', 'lib/util.c': 'int util;\n' });
  const before = inotifyWatches();
  const scheduler = testScheduler(t, config);
  await scheduler.reconfigure(config); // as the daemon may, before it starts the scheduler
  await waitFor(async () => inotifyWatches() > before, 10_000, 'the repository to be watched');
  await scheduler.start();
  const watching = inotifyWatches();
  await scheduler.close();
  t.ok(watching > before, `the repository is watched (${watching - before} watches)`);
  t.equal(inotifyWatches(), before, 'close leaves no watch behind');
});
