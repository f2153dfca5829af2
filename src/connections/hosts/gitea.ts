/** Gitea (and Forgejo), API v1: `orgs`, `users`, `repos`; paged by Link, 50 a page; repositories in GitHub's shape. */
import { getJson, linkNext, pages, arrayOf, under } from '../host-api.js';
import { describe } from './github.js';
import type { HostListing } from './host.js';

export async function listGitea({ connection, fetch, listing }: HostListing): Promise<void> {
  const api = (path: string, query: Record<string, string | number> = {}) => under(connection.url, `/api/v1${path}`, query);
  const walk = async (first: URL) => {
    for await (const repo of pages(
      fetch,
      first,
      (body) => arrayOf(body, first.pathname),
      (_body, response) => linkNext(response),
    ))
      listing.add(describe(repo));
  };
  for (const org of connection.orgs) await walk(api(`/orgs/${encodeURIComponent(org)}/repos`, { limit: 50 }));
  for (const user of connection.users) await walk(api(`/users/${encodeURIComponent(user)}/repos`, { limit: 50 }));
  for (const full of connection.repos) {
    const [owner = '', name = ''] = full.split('/');
    listing.add(describe((await getJson(fetch, api(`/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`))).body as Record<string, unknown>));
  }
}
