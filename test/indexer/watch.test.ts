import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { watchRepository, type WatchOptions } from '../../src/indexer/watch.js';
import { inotifyWatches } from '../helpers/inotify.js';
import { waitFor } from '../helpers/daemon.js';
import { tempDir } from '../helpers/tmp.js';

/** Starts a watcher on `root` and resolves with it once chokidar has read the tree; closed when the test ends. */
async function watching(t: Test, root: string, options: Partial<WatchOptions> = {}) {
  const watcher = watchRepository(root, { maxDirectories: 10_000, onChange: () => {}, onLimit: () => {}, onError: () => {}, ...options });
  t.teardown(() => watcher.close());
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return watcher;
}

/** The directories under `root` the watcher holds (chokidar also watches root's parent). */
const watchedUnder = (watcher: { getWatched(): Record<string, string[]> }, root: string) =>
  Object.keys(watcher.getWatched()).filter((dir) => dir === root || dir.startsWith(`${root}/`));

t.test('a plain directory is watched without following links and without the skipped directories', async (t) => {
  const base = tempDir(t, 'trawl-watch-');
  const root = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  for (let i = 0; i < 30; i++) fs.mkdirSync(path.join(outside, `d${i}`), { recursive: true });
  fs.mkdirSync(path.join(root, 'src', 'lib'), { recursive: true });
  fs.mkdirSync(path.join(root, 'node_modules', 'dep'), { recursive: true });
  fs.mkdirSync(path.join(root, '.hg', 'store'), { recursive: true });
  fs.symlinkSync(outside, path.join(root, 'outside-link'));
  fs.symlinkSync('/', path.join(root, 'disk'));
  let changed = 0;
  const watcher = await watching(t, root, { onChange: () => changed++ });
  t.same(
    watchedUnder(watcher, root).sort(),
    [root, path.join(root, 'src'), path.join(root, 'src', 'lib')],
    'the tree only: no link followed, no skipped directory',
  );
  t.notOk(
    Object.keys(watcher.getWatched()).some((dir) => dir.startsWith(outside) || dir === '/usr' || dir === '/etc'),
    'nothing a link points at',
  );

  fs.writeFileSync(path.join(root, 'src', 'lib', 'new.c'), 'int x;\n');
  await waitFor(async () => changed > 0, 10_000, 'a change in the tree to be noticed');
  t.pass('a change in the tree is noticed');
});

t.test('past maxDirectories the rest of the tree is not watched, and that is said once', async (t) => {
  const root = path.join(tempDir(t, 'trawl-watch-'), 'repo');
  for (let i = 0; i < 20; i++) fs.mkdirSync(path.join(root, `d${i}`, 'inner'), { recursive: true });
  const limits: number[] = [];
  const watcher = await watching(t, root, { maxDirectories: 5, onLimit: (watched) => limits.push(watched) });
  t.equal(watchedUnder(watcher, root).length, 5, 'five directories watched');
  t.same(limits, [5], 'the limit reported once');
});

t.test("a plain directory's files are seen through a watch per directory: changed, added, removed, in a new directory", async (t) => {
  const base = tempDir(t, 'trawl-watch-');
  const root = path.join(base, 'repo');
  for (const dir of ['a', 'a/b', 'c']) fs.mkdirSync(path.join(root, dir), { recursive: true });
  for (const dir of ['a', 'a/b', 'c']) for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(root, dir, `f${i}.c`), `int f${i};\n`);
  const before = inotifyWatches();
  let changes = 0;
  await watching(t, root, { onChange: () => changes++ });
  t.equal(inotifyWatches() - before, 4, 'four watches: the root and its three directories, none for its 30 files');

  /** Runs `change`, then waits until the watcher has reported something. */
  const noticed = async (change: () => void, what: string) => {
    const from = changes;
    change();
    await waitFor(async () => changes > from, 10_000, what);
    t.pass(what);
  };
  await noticed(() => fs.appendFileSync(path.join(root, 'a', 'b', 'f3.c'), 'int more;\n'), 'a file deep in the tree changed');
  await noticed(() => fs.writeFileSync(path.join(root, 'c', 'new.c'), 'int added;\n'), 'a file added');
  await noticed(() => fs.rmSync(path.join(root, 'a', 'f1.c')), 'a file removed');
  await noticed(() => fs.mkdirSync(path.join(root, 'c', 'd')), 'a directory added');
  await waitFor(async () => inotifyWatches() - before === 5, 10_000, 'the new directory to be watched');
  await noticed(() => fs.writeFileSync(path.join(root, 'c', 'd', 'later.c'), 'int later;\n'), 'a file added later in the new directory');
});
