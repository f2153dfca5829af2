/**
 * nodegit wrappers for what the indexer reads from a git repository:
 * branches and the files of a commit's tree (contents: blob-stream.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type NodeGit from 'nodegit';
import { checkReadLimit, GitObjectMissingError, missingObjectError, type ReadLimit } from './errors.js';
import { nodegit } from './nodegit.js';
import { globToRegExp } from '../config/glob.js';

export type GitRepository = NodeGit.Repository;
export type GitCommit = NodeGit.Commit;

/** A regular file (or executable) in a commit's tree. Symlinks and submodules are not listed. */
export interface TreeFile {
  path: string;
  oid: string;
}

export interface ResolvedBranch {
  name: string;
  commit: string;
}

/** What HEAD is: the branch it names ('HEAD' when detached) and its commit's committer time (ISO 8601). */
export interface HeadInfo {
  defaultBranch: string;
  committedAt: string;
}

const FILEMODE_BLOB = 0o100644;
const FILEMODE_EXECUTABLE = 0o100755;

/** True when `directory` looks like a git repository: a working tree with .git, or a bare repository. */
export function isGitRepository(directory: string): boolean {
  const exists = (name: string) => fs.existsSync(path.join(directory, name));
  return exists('.git') || (exists('HEAD') && exists('objects') && exists('refs'));
}

/** The git directory of a repository (`.git` of a working tree, the path of a bare one), or null for a plain directory. */
export function gitDirectoryOf(directory: string): string | null {
  const dotGit = path.join(directory, '.git');
  try {
    const stats = fs.statSync(dotGit);
    if (stats.isDirectory()) return dotGit;
    const pointer = /^gitdir: (.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1]; // a worktree or submodule
    return pointer ? path.resolve(directory, pointer.trim()) : null;
  } catch {
    return isGitRepository(directory) ? directory : null;
  }
}

export async function openRepository(directory: string): Promise<GitRepository> {
  try {
    return await nodegit().Repository.open(directory);
  } catch (error) {
    throw new Error(`${directory}: not a readable git repository (${(error as Error).message})`);
  }
}

/**
 * The default branch as "HEAD", then under its own name (so that `rev:main`
 * finds it, as Sourcebot's clients ask), then every local branch matching
 * `patterns` (in pattern order, each branch once). Patterns that match
 * nothing are returned as warnings, not errors: the rest of the repository
 * still indexes. Branches at one commit share their documents.
 */
export async function resolveBranches(
  repository: GitRepository,
  patterns: readonly string[],
  /** Tags indexed as branches of their name (a tag peeled to its commit). */
  tagPatterns: readonly string[] = [],
): Promise<{ branches: ResolvedBranch[]; head: HeadInfo; warnings: string[] }> {
  let head: NodeGit.Commit;
  try {
    head = await repository.getHeadCommit();
  } catch (error) {
    throw new Error(`HEAD does not resolve to a commit (${(error as Error).message})`);
  }
  if (!head) throw new Error('HEAD does not resolve to a commit (empty repository?)');
  const headRef = await repository.head().catch(() => null);
  const headInfo: HeadInfo = { defaultBranch: headRef?.isBranch() ? headRef.shorthand() : 'HEAD', committedAt: head.date().toISOString() };
  const taken = new Set<string>(['HEAD', headInfo.defaultBranch]);
  const branches: ResolvedBranch[] = [...taken].map((name) => ({ name, commit: head.sha() }));
  const warnings: string[] = [];
  const refNames = await repository.getReferenceNames(nodegit().Reference.TYPE.ALL);
  const take = async (kind: 'branch' | 'tag', prefix: string, globs: readonly string[]) => {
    const names = refNames
      .filter((ref) => ref.startsWith(prefix))
      .map((ref) => ref.slice(prefix.length))
      .sort();
    for (const pattern of globs) {
      const matcher = globToRegExp(pattern);
      const matches = names.filter((name) => matcher.test(name));
      if (matches.length === 0) warnings.push(`${kind} ${JSON.stringify(pattern)} matches no ${kind}`);
      for (const name of matches) {
        if (taken.has(name)) continue;
        taken.add(name);
        const commit = await (await repository.getReference(prefix + name)).peel(nodegit().Object.TYPE.COMMIT);
        branches.push({ name, commit: commit.id().toString() });
      }
    }
  };
  await take('branch', 'refs/heads/', patterns);
  await take('tag', 'refs/tags/', tagPatterns);
  return { branches, head: headInfo, warnings };
}

/** Commits read at once by localBranchesByDate, between checks of its limit. */
const BRANCH_COMMITS_AT_ONCE = 256;

/**
 * The repository's local branches whose names `wanted` takes, with the time of their last commit, newest first (then
 * by name); GitReadStoppedError once `limit` fires (a repository of very many branches).
 */
export async function localBranchesByDate(
  repository: GitRepository,
  wanted: (name: string) => boolean,
  limit: ReadLimit,
): Promise<{ name: string; committedAt: Date }[]> {
  const names = (await localBranchNames(repository)).filter(wanted);
  const branches: { name: string; committedAt: Date }[] = [];
  for (let at = 0; at < names.length; at += BRANCH_COMMITS_AT_ONCE) {
    checkReadLimit(limit, 'the branch listing', 'narrow it with `query`');
    const batch = names.slice(at, at + BRANCH_COMMITS_AT_ONCE);
    branches.push(...(await Promise.all(batch.map(async (name) => ({ name, committedAt: (await repository.getBranchCommit(name)).date() })))));
  }
  return branches.sort((a, b) => b.committedAt.getTime() - a.committedAt.getTime() || (a.name < b.name ? -1 : 1));
}

/** The names of the repository's local branches (without `refs/heads/`), sorted. */
export async function localBranchNames(repository: GitRepository): Promise<string[]> {
  return (await repository.getReferenceNames(nodegit().Reference.TYPE.ALL))
    .filter((ref) => ref.startsWith('refs/heads/'))
    .map((ref) => ref.slice('refs/heads/'.length))
    .sort();
}

/**
 * Every regular file of a commit's tree, in no particular order, and the directories whose tree object is
 * missing (a damaged repository, a partial clone): their files cannot be listed, the rest can.
 */
export async function listTreeFiles(
  repository: GitRepository,
  commitId: string,
): Promise<{ files: TreeFile[]; unreadable: { path: string; error: GitObjectMissingError }[] }> {
  const commit = await repository.getCommit(commitId);
  const files: TreeFile[] = [];
  const unreadable: { path: string; error: GitObjectMissingError }[] = [];
  const walk = async (tree: NodeGit.Tree, prefix: string): Promise<void> => {
    const subtrees: Promise<void>[] = [];
    for (const entry of tree.entries()) {
      const entryPath = prefix + entry.name();
      if (entry.isTree()) {
        const missing = (thrown: unknown) => {
          const error = missingObjectError(thrown);
          if (!(error instanceof GitObjectMissingError)) throw thrown;
          unreadable.push({ path: entryPath, error });
        };
        subtrees.push(entry.getTree().then((subtree) => walk(subtree, `${entryPath}/`), missing));
      } else {
        const mode = entry.filemode() as number;
        if (mode === FILEMODE_BLOB || mode === FILEMODE_EXECUTABLE) files.push({ path: entryPath, oid: entry.sha() });
      }
    }
    await Promise.all(subtrees);
  };
  await walk(await commit.getTree(), '');
  return { files, unreadable };
}
