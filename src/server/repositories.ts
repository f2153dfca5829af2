/** Repositories by name as a caller may see them, and their git handles. */
import fs from 'node:fs';
import { ApiError } from '../api/errors.js';
import type { RepositoryConfig } from '../config/config.js';
import { isGitRepository, openRepository, type GitRepository } from '../git/repository.js';
import type { Caller } from './access.js';
import { RepositoryElsewhere } from './peer-forward.js';
import type { ServerContext } from './route.js';

/** The configured repository named `name`, or NOT_FOUND when there is none or the caller cannot see it (indistinguishable). */
export function visibleRepository(context: ServerContext, caller: Caller, name: string): RepositoryConfig {
  const repo = context.config.repos.find((candidate) => candidate.name === name);
  if (!repo || !caller.canSee(repo)) throw new ApiError('NOT_FOUND', `repository ${JSON.stringify(name)} not found`);
  return repo;
}

/**
 * The configured repository `name` as the caller may see it, to be read from this node's disk. In a cluster, a
 * repository this node has no copy of is read by a node serving it: RepositoryElsewhere (peer-forward.ts).
 */
export function repositoryHere(context: ServerContext, caller: Caller, name: string): RepositoryConfig {
  const repo = visibleRepository(context, caller, name);
  if (!context.cluster || fs.existsSync(repo.path)) return repo;
  // A peer asked for a repository this node has no copy of: answered here, never sent on again.
  if (caller.onBehalfOf) throw new ApiError('SERVICE_UNAVAILABLE', `this node has no copy of repository ${JSON.stringify(name)}`, { 'Retry-After': '5' });
  throw new RepositoryElsewhere(name, context.cluster.node.peersServing(name));
}

const opened = new Map<string, Promise<GitRepository>>();

/** The repository's git handle (opened once); NOT_FOUND for a plain directory, which has no revisions. */
export function gitRepository(repo: RepositoryConfig): Promise<GitRepository> {
  if (!isGitRepository(repo.path)) {
    return Promise.reject(new ApiError('NOT_FOUND', `repository ${JSON.stringify(repo.name)} is a plain directory: it has no git revisions`));
  }
  let handle = opened.get(repo.path);
  if (!handle) {
    handle = openRepository(repo.path);
    handle.catch(() => opened.delete(repo.path));
    opened.set(repo.path, handle);
  }
  return handle;
}

/** Drops the handles of repositories no longer configured (after a SIGHUP reload removed them). */
export function forgetRepositoriesExcept(configured: readonly RepositoryConfig[]): void {
  const keep = new Set(configured.map((repo) => repo.path));
  for (const repoPath of opened.keys()) if (!keep.has(repoPath)) opened.delete(repoPath);
}
