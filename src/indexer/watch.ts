/**
 * What a repository's watcher sees: a git repository's HEAD and refs, or a
 * plain directory's files — never through a symbolic link (a link to `/`
 * must not make the daemon watch the disk), never in the directories the
 * indexer skips, and at most `maxDirectories` directories of one tree: past
 * that the rest is not watched (the periodic rescan still covers it) and
 * `onLimit` is told once.
 *
 * A plain directory's files are seen through their directories' watches
 * (chokidar's raw events), not a watch and a record each: a change only
 * queues the repository, whose pass finds what changed (docs/design.md,
 * "Watching").
 */
import path from 'node:path';
import type { Stats } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import { gitDirectoryOf } from '../git/repository.js';
import { SKIPPED_DIRECTORIES } from '../git/plain-directory.js';

export interface WatchOptions {
  maxDirectories: number;
  onChange(): void;
  onLimit(watched: number): void;
  onError(error: unknown): void;
}

export function watchRepository(repositoryPath: string, options: WatchOptions): FSWatcher {
  const gitDirectory = gitDirectoryOf(repositoryPath);
  const watcher = gitDirectory
    ? watch([path.join(gitDirectory, 'HEAD'), path.join(gitDirectory, 'refs'), path.join(gitDirectory, 'packed-refs')], {
        ignoreInitial: true,
        followSymlinks: false,
        ignored: (file: string) => file.endsWith('.lock'),
      })
    : watch(repositoryPath, { ignoreInitial: true, followSymlinks: false, ignored: boundedTree(repositoryPath, options) });
  watcher.on('all', () => options.onChange());
  // Raw events come from the tree's directory watches only (its files and skipped directories have none).
  if (!gitDirectory) watcher.on('raw', () => options.onChange());
  watcher.on('error', (error) => options.onError(error));
  return watcher;
}

/** chokidar's `ignored` for a plain directory: every file (its directory's watch sees it), skipped names, and every directory past the bound. */
function boundedTree(root: string, options: WatchOptions): (file: string, stats?: Stats) => boolean {
  const directories = new Set<string>();
  let limited = false;
  return (file, stats) => {
    if (file !== root && SKIPPED_DIRECTORIES.has(path.basename(file))) return true;
    if (stats && !stats.isDirectory()) return true;
    if (!stats || directories.has(file)) return false;
    if (directories.size >= options.maxDirectories) {
      if (!limited) options.onLimit(directories.size);
      limited = true;
      return true;
    }
    directories.add(file);
    return false;
  };
}
