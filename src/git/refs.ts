/**
 * Refs and paths from API callers, checked before they reach libgit2: a ref
 * can never be taken for an option or a range, a path never leaves the tree.
 */
import type NodeGit from 'nodegit';
import { nodegit } from './nodegit.js';
import { InvalidRefError, PathNotFoundError } from './errors.js';
import type { GitRepository } from './repository.js';

/**
 * Throws InvalidRefError for a ref that starts with '-' (it could be taken
 * for an option), holds '..' (a range), NUL, control characters or spaces,
 * or uses a revision form that searches history (`:/text`, `HEAD^{/text}`:
 * a backtracking regex over every commit message) or the reflog (`@{…}`).
 * Revision suffixes (`HEAD~1`, `main^2`, `v1^{commit}`) are fine: libgit2
 * resolves them.
 */
export function checkRefSyntax(ref: string): void {
  if (ref.length === 0) throw new InvalidRefError(ref, 'it is empty');
  if (ref.startsWith('-')) throw new InvalidRefError(ref, 'it starts with "-"');
  if (ref.includes('..')) throw new InvalidRefError(ref, 'it contains ".."');
  if (/[\x00-\x1f\x7f]/.test(ref)) throw new InvalidRefError(ref, 'it contains NUL or control characters');
  if (/\s/.test(ref)) throw new InvalidRefError(ref, 'it contains spaces');
  if (ref.includes(':')) throw new InvalidRefError(ref, 'it contains ":" (a path or message search, not a commit)');
  if (ref.includes('{/')) throw new InvalidRefError(ref, 'it searches commit messages ("^{/…}")');
  if (ref.includes('@{')) throw new InvalidRefError(ref, 'it reads the reflog ("@{…}")');
}

/**
 * The commit a ref names: HEAD, a branch, a tag (peeled), a full ref name or
 * a commit id (full or abbreviated). Throws InvalidRefError when it is
 * malformed or names no commit.
 */
export async function resolveCommit(repository: GitRepository, ref: string): Promise<NodeGit.Commit> {
  checkRefSyntax(ref);
  let object: NodeGit.Object;
  try {
    object = await nodegit().Revparse.single(repository, ref);
  } catch {
    throw new InvalidRefError(ref, 'it does not resolve in this repository', true);
  }
  try {
    const peeled = await object.peel(nodegit().Object.TYPE.COMMIT);
    return await repository.getCommit(peeled.id());
  } catch {
    throw new InvalidRefError(ref, 'it does not name a commit', true);
  }
}

/**
 * A repository path as the API takes it: '/' separated, a leading '/'
 * ignored, '' for the root. Throws PathNotFoundError for a '..' or '.'
 * segment, an empty segment or NUL.
 */
export function normalizeTreePath(raw: string): string {
  const trimmed = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (raw.includes('\0')) throw new PathNotFoundError(raw, 'is not a valid path (NUL)');
  for (const segment of trimmed.split('/')) {
    if (segment === '..' || segment === '.' || segment === '') throw new PathNotFoundError(raw, 'is not a valid path (empty, "." or ".." segment)');
  }
  return trimmed;
}
