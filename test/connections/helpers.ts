/** What the connection tests share: a daemon with an owner and a member, and the API reads they repeat. */
import type { Test } from 'tap';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { startGitHttpHost } from '../helpers/git-host.js';
import { github } from './fixtures/github.js';
import { startFixture, type FixtureState } from './fixtures/server.js';

export interface ConnectionStatus {
  id: number;
  name: string;
  connectionType: string;
  syncState: {
    status: string;
    error?: string;
    repoCount: number;
    failedRepoCount: number;
    failedRepos?: { repo: string; error: string }[];
    lastSyncedAt?: string;
  };
}

export interface FoundFile {
  repository: string;
  fileName: { text: string };
  branches?: string[];
}

/** The daemon with `config` (no ctags unless it says), an owner and a member with API keys; `env` for its tokens. */
export async function daemonWithUsers(
  t: Test,
  config: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<{ daemon: Daemon; owner: SeededUser; member: SeededUser }> {
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { index: { ctagsCommand: '' }, ...config },
    {
      env: { ...LICENSE_ENV, ...env },
      prepare: async (configFile) => {
        users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner' },
          { email: 'dev@example.com', role: 'member' },
        ]);
      },
    },
  );
  return { daemon, owner: users['owner@example.com']!, member: users['dev@example.com']! };
}

/** GET /api/connections as `user`. */
export async function connectionStatuses(daemon: Daemon, user: SeededUser): Promise<ConnectionStatus[]> {
  return (await (await daemon.fetch('/api/connections', { headers: bearer(user.key) })).json()) as ConnectionStatus[];
}

/** The names GET /api/repos lists to `user`. */
export async function repositoryNames(daemon: Daemon, user: SeededUser): Promise<string[]> {
  return ((await (await daemon.fetch('/api/repos', { headers: bearer(user.key) })).json()) as { repoName: string }[]).map((repo) => repo.repoName);
}

/** The files a search finds for `user` (up to 50 matches). */
export async function searchFiles(daemon: Daemon, user: SeededUser, query: string): Promise<FoundFile[]> {
  const response = await daemon.fetch('/api/search', { method: 'POST', headers: bearer(user.key), body: JSON.stringify({ query, matches: 50 }) });
  return ((await response.json()) as { files?: FoundFile[] }).files ?? [];
}

/**
 * A GitHub Enterprise-like host: its API (the fixture) listing `repos`, and git over http behind the same origin
 * with the token as password; each repository is created with `files`.
 */
export async function githubHost(t: Test, token: string, repos: (FixtureState['repos'][number] & { files: Record<string, string> })[]) {
  const fixture = await startFixture(t, github, { token, repos: repos.map(({ files: _files, ...repo }) => repo) });
  const host = await startGitHttpHost(t, { user: 'x-access-token', password: token }, fixture.port);
  fixture.state.gitOrigin = host.origin;
  for (const repo of repos) host.createRepository(`${repo.owner}/${repo.name}`, repo.files);
  return { fixture, host };
}
