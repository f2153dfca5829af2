/**
 * Where a connection's repositories live and how the indexer sees them: a mirror's directory, named from the
 * host's id (a rename keeps it), and the RepositoryConfig each mirrored repository is indexed as.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Config, RepositoryConfig } from '../config/config.js';
import type { ConnectionConfig } from '../config/connections.js';
import { globToRegExp } from '../config/glob.js';
import type { CodeHostType, ConnectionType } from '../index/code-host.js';
import type { ListedRepository } from './listing.js';
import { SyncState, type MirroredRepository } from './sync-state.js';

const CODE_HOST: Record<ConnectionType, (connection: ConnectionConfig) => CodeHostType> = {
  github: () => 'github',
  gitlab: () => 'gitlab',
  gitea: () => 'gitea',
  gerrit: () => 'gerrit',
  bitbucket: (connection) => (connection.deploymentType === 'server' ? 'bitbucketServer' : 'bitbucketCloud'),
  azuredevops: () => 'azuredevops',
  git: () => 'genericGitHost',
};

/**
 * The repositories the connections of `config` have mirrored, as the indexer takes them: what the daemon
 * indexes besides the configuration file's, and what `trawl index` must keep (from the state on disk).
 * `listed`: also those listed but never fetched here (in a cluster, other nodes fetch them).
 */
export function mirroredRepositories(config: Config, state = SyncState.open(config.dataDir), listed = false): RepositoryConfig[] {
  return config.connections.flatMap((connection) => {
    const publicRepos = connection.publicRepos.map(globToRegExp);
    return state
      .record(connection.name)
      .repos.filter((repo) => repo.fetchedAt !== undefined || (listed && repo.goneSince === undefined))
      .map((repo) => repositoryConfig(config.dataDir, connection, publicRepos, repo));
  });
}

export function mirrorPath(dataDir: string, connection: string, repo: MirroredRepository): string {
  return path.join(dataDir, 'mirrors', connection, repo.mirror);
}

/** `publicRepos`: the connection's `publicRepos` globs, compiled once for all its repositories. */
export function repositoryConfig(dataDir: string, connection: ConnectionConfig, publicRepos: readonly RegExp[], repo: MirroredRepository): RepositoryConfig {
  const config: RepositoryConfig = {
    name: repo.name,
    path: mirrorPath(dataDir, connection.name, repo),
    branches: connection.branches,
    tags: connection.tags,
    codeHostType: CODE_HOST[connection.type](connection),
    public: connection.public || publicRepos.some((glob) => glob.test(repo.name)),
    archived: repo.archived,
    fork: repo.fork,
    connection: connection.name,
  };
  if (repo.webUrl !== undefined) config.webUrl = repo.webUrl.replace(/\/+$/, '');
  if (repo.renamedFrom !== undefined) config.renamedFrom = repo.renamedFrom;
  return config;
}

/** A mirror's directory name: from the host's id when it has one (a rename keeps it), else from the clone URL. */
export function mirrorName(repo: ListedRepository): string {
  return `${createHash('sha256')
    .update(repo.hostId !== undefined ? `id:${repo.hostId}` : `url:${repo.cloneUrl}`)
    .digest('hex')
    .slice(0, 32)}.git`;
}
