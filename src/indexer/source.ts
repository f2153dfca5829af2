/**
 * Where a repository's files come from: a git repository (each indexed
 * branch's tree, read through nodegit) or a plain directory (the file system,
 * one pseudo-branch HEAD). Both yield a snapshot: the branches with their
 * commits, and the distinct files with the mask of branches each is on.
 */
import fs from 'node:fs/promises';
import { statSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { RepositoryConfig } from '../config/config.js';
import type { IndexedBranch } from '../index/model.js';
import { MAX_BRANCHES } from '../index/format.js';
import { isGitRepository, listTreeFiles, openRepository, resolveBranches, type HeadInfo } from '../git/repository.js';
import { BlobStream } from '../git/blob-stream.js';
import { readInside, SKIPPED_DIRECTORIES } from '../git/plain-directory.js';
import { MAX_LISTED_WARNINGS } from './build-shards.js';

export interface SourceFile {
  path: string;
  branchMask: bigint;
  read(): Promise<Buffer>;
}

export interface Snapshot {
  branches: IndexedBranch[];
  /** HEAD's branch and commit time; absent for a plain directory. */
  head?: HeadInfo;
  /** Problems that did not stop indexing (e.g. a branch pattern matching nothing). */
  warnings: string[];
  /** Lists the files; only called when the snapshot differs from what is indexed. */
  files(): Promise<SourceFile[]>;
  /** Releases what reading the files needed. */
  close(): void;
}

/** Opens the repository and reads its branch heads. Throws an Error with a clear message for bad input. */
export async function takeSnapshot(repo: RepositoryConfig): Promise<Snapshot> {
  let stats;
  try {
    stats = statSync(repo.path);
  } catch (error) {
    throw new Error(`path ${repo.path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!stats.isDirectory()) throw new Error(`path ${repo.path} is not a directory (expected a git repository or a directory)`);
  return isGitRepository(repo.path) ? gitSnapshot(repo) : directorySnapshot(repo);
}

async function gitSnapshot(repo: RepositoryConfig): Promise<Snapshot> {
  const repository = await openRepository(repo.path);
  const { branches, head, warnings } = await resolveBranches(repository, repo.branches, repo.tags);
  let blobs: BlobStream | undefined;
  if (branches.length > MAX_BRANCHES) {
    warnings.push(`${branches.length} branches match; only the first ${MAX_BRANCHES} are indexed`);
    branches.length = MAX_BRANCHES;
  }
  return {
    branches,
    head,
    warnings,
    async files() {
      // One document per (path, blob): a file identical on several branches is stored once.
      const byPathAndBlob = new Map<string, { path: string; oid: string; branchMask: bigint }>();
      // Branches at the same commit share one tree walk.
      const maskByCommit = new Map<string, bigint>();
      for (const [bit, branch] of branches.entries()) {
        maskByCommit.set(branch.commit, (maskByCommit.get(branch.commit) ?? 0n) | (1n << BigInt(bit)));
      }
      // A directory whose tree is missing on several branches is one warning.
      const unreadable = new Map<string, string>();
      for (const [commit, mask] of maskByCommit) {
        const listed = await listTreeFiles(repository, commit);
        for (const file of listed.files) {
          const key = `${file.path}\0${file.oid}`;
          const known = byPathAndBlob.get(key);
          if (known) known.branchMask |= mask;
          else byPathAndBlob.set(key, { ...file, branchMask: mask });
        }
        for (const { path: directory, error } of listed.unreadable)
          unreadable.set(`${directory}\0${error.oid}`, `${directory}/: not indexed, its tree cannot be read (${error.message})`);
      }
      const directories = [...unreadable.values()];
      warnings.push(...directories.slice(0, MAX_LISTED_WARNINGS));
      if (directories.length > MAX_LISTED_WARNINGS)
        warnings.push(`${directories.length - MAX_LISTED_WARNINGS} more directories not indexed, their trees cannot be read`);
      return [...byPathAndBlob.values()].map((file) => ({
        path: file.path,
        branchMask: file.branchMask,
        read: () => (blobs ??= new BlobStream(repo.path)).read(file.oid),
      }));
    },
    close: () => blobs?.close(),
  };
}

async function directorySnapshot(repo: RepositoryConfig): Promise<Snapshot> {
  const root = await fs.realpath(repo.path);
  const entries = await walkDirectory(root);
  // The "commit" of a directory: a fingerprint of every file's path, size and mtime.
  const fingerprint = createHash('sha256');
  for (const entry of entries) fingerprint.update(`${entry.path}\0${entry.size}\0${entry.mtimeMs}\n`);
  return {
    branches: [{ name: 'HEAD', commit: fingerprint.digest('hex').slice(0, 40) }],
    warnings: [],
    async files() {
      return entries.map((entry) => ({
        path: entry.path,
        branchMask: 1n,
        read: () => readInside(root, entry.path),
      }));
    },
    close() {},
  };
}

async function walkDirectory(root: string): Promise<{ path: string; size: number; mtimeMs: number }[]> {
  const found: { path: string; size: number; mtimeMs: number }[] = [];
  const visit = async (relative: string): Promise<void> => {
    const dirents = await fs.readdir(path.join(root, relative), { withFileTypes: true });
    await Promise.all(
      dirents.map(async (dirent) => {
        const child = relative ? `${relative}/${dirent.name}` : dirent.name;
        if (dirent.isDirectory()) {
          if (!SKIPPED_DIRECTORIES.has(dirent.name)) await visit(child);
        } else if (dirent.isFile()) {
          const stats = await fs.lstat(path.join(root, child));
          found.push({ path: child, size: stats.size, mtimeMs: stats.mtimeMs });
        }
      }),
    );
  };
  await visit('');
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}
