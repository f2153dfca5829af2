/**
 * A plain-directory repository as the read endpoints and the indexer see it: its files on disk, one
 * pseudo-revision HEAD. Files are read as the indexer reads them (regular files inside the directory only,
 * never through a symbolic link), and the directories it skips are skipped here too.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TreeNode } from '../api/types.js';
import type { BlobAtPath } from './blob.js';
import { MAX_BLOB_BYTES } from './blob.js';
import { GitReadStoppedError, PathNotFoundError, type ReadLimit } from './errors.js';
import { normalizeTreePath } from './refs.js';
import { expandedTree } from './tree.js';

/** Directories never descended into when indexing, watching or listing a plain directory. */
export const SKIPPED_DIRECTORIES = new Set(['.git', '.hg', '.svn', 'node_modules']);

/**
 * The bytes of the regular file at `relative` under `root` (a real path),
 * refusing anything else: a symbolic link or a special file put in its place
 * after the walk, or a path whose directories now lead outside `root`.
 * (O_NOFOLLOW covers the last component; the opened file's real path, the
 * directories.) GitReadStoppedError past `maxBytes`.
 */
export async function readInside(root: string, relative: string, maxBytes = Infinity): Promise<Buffer> {
  const handle = await fs.open(path.join(root, relative), fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error('not a regular file');
    const real = await fs.readlink(`/proc/self/fd/${handle.fd}`);
    if (!real.startsWith(`${root}/`)) throw new Error('it now resolves outside the repository');
    if (stats.size > maxBytes) throw new GitReadStoppedError(`reading ${relative}`, 'size', maxBytes, 'the file is too large to serve');
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The file at `rawPath` of the directory `root`, with the id git would give its content. PathNotFoundError for anything but a file in it. */
export async function directoryFileAt(root: string, rawPath: string): Promise<BlobAtPath> {
  const filePath = normalizeTreePath(rawPath);
  if (filePath === '' || filePath.split('/').some((segment) => SKIPPED_DIRECTORIES.has(segment)))
    throw new PathNotFoundError(rawPath, 'is not a file of this directory');
  let content: Buffer;
  try {
    content = await readInside(await fs.realpath(root), filePath, MAX_BLOB_BYTES);
  } catch (error) {
    if (error instanceof GitReadStoppedError) throw error;
    throw new PathNotFoundError(rawPath, 'is not a file of this directory');
  }
  const blobSha = createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
  return { path: filePath, content, blobSha };
}

/** The tree of the directory `root`, expanded as `treeOf` expands a commit's: its directories and regular files. */
export async function directoryTreeOf(root: string, paths: readonly string[], limit: ReadLimit): Promise<TreeNode> {
  const realRoot = await fs.realpath(root);
  return expandedTree(
    async (directory) => {
      const absolute = path.join(realRoot, directory);
      // Only directories listed as such are expanded; one replaced by a link since must still lead inside.
      if (directory !== '' && !(await fs.realpath(absolute)).startsWith(`${realRoot}/`)) throw new PathNotFoundError(directory, 'is not a directory here');
      const entries = await fs.readdir(absolute, { withFileTypes: true });
      return entries
        .filter((entry) => entry.isFile() || (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)))
        .map((entry) => ({ name: entry.name, type: entry.isDirectory() ? ('tree' as const) : ('blob' as const) }));
    },
    paths,
    limit,
  );
}
