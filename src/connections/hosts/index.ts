/**
 * Discovery: the repositories a connection names on its host, listed through the host's API (or, for a
 * `git` connection, the one repository at its URL), checked and filtered by a Listing.
 */
import type { ConnectionConfig } from '../../config/connections.js';
import type { ConnectionType } from '../../index/code-host.js';
import { ConnectionError } from '../errors.js';
import { refusal } from '../host-api.js';
import { hostFetch, safeUrl } from '../host-fetch.js';
import { Listing, type ListedRepository } from '../listing.js';
import { listAzureDevops } from './azuredevops.js';
import { listBitbucket } from './bitbucket.js';
import { listGerrit } from './gerrit.js';
import { githubApiBase, listGithub } from './github.js';
import { listGitea } from './gitea.js';
import { listGitlab } from './gitlab.js';
import type { HostListing } from './host.js';

type RemoteType = Exclude<ConnectionType, 'git'>;

const LISTERS: Record<RemoteType, (host: HostListing) => Promise<void>> = {
  github: listGithub,
  gitlab: listGitlab,
  gitea: listGitea,
  gerrit: listGerrit,
  bitbucket: listBitbucket,
  azuredevops: listAzureDevops,
};

export interface DiscoverOptions {
  token: string | undefined;
  timeoutMs: number;
  maxRepositories: number;
  signal: AbortSignal;
}

export async function discover(connection: ConnectionConfig, options: DiscoverOptions): Promise<{ repositories: ListedRepository[]; warnings: string[] }> {
  if (connection.type === 'git') {
    const listing = new Listing(connection, 1, null);
    const url = new URL(connection.url);
    listing.add({
      path: (url.protocol === 'file:' ? (url.pathname.split('/').filter(Boolean).at(-1) ?? '') : url.pathname.replace(/^\/+|\/+$/g, '')).replace(/\.git$/, ''),
      cloneUrl: connection.url,
    });
    return { repositories: listing.repositories, warnings: listing.warnings };
  }
  const listing = new Listing(connection, options.maxRepositories, cloneOrigins(connection));
  const apiOrigin = new URL(connection.type === 'github' ? githubApiBase(connection.url) : connection.url).origin;
  const fetch = hostFetch({
    origin: apiOrigin,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    headers: { 'User-Agent': 'trawl', Accept: 'application/json', ...authHeaders(connection, options.token) },
  });
  try {
    await LISTERS[connection.type]({ connection, token: options.token, fetch, listing });
  } catch (error) {
    // octokit wraps what its fetch threw (a ConnectionError: the cause) and the host's refusals (a RequestError with the status).
    const { status, request, cause } = error as { status?: number; request?: { url?: string }; cause?: unknown };
    if (cause instanceof ConnectionError) throw cause;
    if (!(error instanceof ConnectionError) && typeof status === 'number' && request?.url) {
      throw new ConnectionError(cause instanceof Error ? `GET ${safeUrl(request.url)}: ${cause.message}` : refusal(status, request.url));
    }
    throw error;
  }
  return { repositories: listing.repositories, warnings: listing.warnings };
}

function authHeaders(connection: ConnectionConfig, token: string | undefined): Record<string, string> {
  if (token === undefined) return {};
  switch (connection.type) {
    case 'gitlab':
      return { 'PRIVATE-TOKEN': token };
    case 'gitea':
      return { Authorization: `token ${token}` };
    case 'bitbucket':
      return { Authorization: connection.user ? `Basic ${Buffer.from(`${connection.user}:${token}`).toString('base64')}` : `Bearer ${token}` };
    case 'azuredevops':
      return { Authorization: `Basic ${Buffer.from(`:${token}`).toString('base64')}` };
    default:
      return {}; // github: octokit sends it; gerrit: anonymous
  }
}

/** The origins a host's clone URLs may have: its web origin (github.com's API lives on another). */
function cloneOrigins(connection: ConnectionConfig): string[] {
  const url = new URL(connection.url);
  if (url.host === 'api.github.com') return ['https://github.com'];
  if (connection.type === 'bitbucket' && url.host === 'api.bitbucket.org') return ['https://bitbucket.org'];
  return [url.origin];
}

/** The user name git sends with the token over http(s), as each host expects it. */
export function gitUser(connection: ConnectionConfig): string {
  if (connection.user) return connection.user;
  const users: Record<ConnectionType, string> = {
    github: 'x-access-token',
    gitlab: 'oauth2',
    gitea: 'oauth2',
    gerrit: 'anonymous',
    bitbucket: 'x-token-auth',
    azuredevops: 'pat',
    git: 'git',
  };
  return users[connection.type];
}
