/**
 * GitHub (github.com and Enterprise Server) through octokit, whose requests go through the connection's
 * HostFetch: `orgs`, `users` and `repos`, paged 100 at a time. octokit loads at the first listing, not at start.
 */
import type { RemoteRepository } from '../listing.js';
import type { HostListing } from './host.js';

/** The REST API of the host whose web address is `url`. */
export function githubApiBase(url: string): string {
  const web = new URL(url);
  return web.host === 'github.com' || web.host === 'api.github.com' ? 'https://api.github.com' : `${web.origin}/api/v3`;
}

export async function listGithub({ connection, token, fetch, listing }: HostListing): Promise<void> {
  const { Octokit } = await import('@octokit/rest');
  const octokit = new Octokit({
    baseUrl: githubApiBase(connection.url),
    auth: token,
    request: { fetch, retries: 0 },
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
  const add = (repos: unknown[]) => repos.forEach((repo) => listing.add(describe(repo as Record<string, unknown>)));
  for (const org of connection.orgs) {
    for await (const page of octokit.paginate.iterator(octokit.rest.repos.listForOrg, { org, type: 'all', per_page: 100 })) add(page.data);
  }
  for (const username of connection.users) {
    for await (const page of octokit.paginate.iterator(octokit.rest.repos.listForUser, { username, type: 'owner', per_page: 100 })) add(page.data);
  }
  for (const full of connection.repos) {
    const [owner, repo] = full.split('/');
    add([(await octokit.rest.repos.get({ owner: owner ?? '', repo: repo ?? '' })).data]);
  }
}

/** A repository object of GitHub's REST API (Gitea's API answers the same fields). */
export function describe(repo: Record<string, unknown>): RemoteRepository {
  return {
    path: String(repo.full_name ?? ''),
    hostId: repo.id === undefined ? undefined : String(repo.id),
    cloneUrl: String(repo.clone_url ?? ''),
    webUrl: typeof repo.html_url === 'string' ? repo.html_url : undefined,
    archived: repo.archived === true,
    fork: repo.fork === true,
    sizeBytes: typeof repo.size === 'number' ? repo.size * 1024 : undefined,
    topics: Array.isArray(repo.topics) ? repo.topics.map(String) : [],
  };
}
