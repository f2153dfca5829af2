/** GitLab (gitlab.com and self-managed), API v4: `all`, `groups` (with subgroups), `users`, `projects`; paged by Link. */
import { getJson, linkNext, pages, arrayOf, under } from '../host-api.js';
import type { RemoteRepository } from '../listing.js';
import type { HostListing } from './host.js';

export async function listGitlab({ connection, fetch, listing }: HostListing): Promise<void> {
  const api = (path: string, query: Record<string, string | number> = {}) => under(connection.url, `/api/v4${path}`, { per_page: 100, ...query });
  const walk = async (first: URL) => {
    for await (const project of pages(
      fetch,
      first,
      (body) => arrayOf(body, first.pathname),
      (_body, response) => linkNext(response),
    ))
      listing.add(describe(project));
  };
  if (connection.all) await walk(api('/projects', { order_by: 'id', sort: 'asc' }));
  for (const group of connection.groups) await walk(api(`/groups/${encodeURIComponent(group)}/projects`, { include_subgroups: 'true' }));
  for (const user of connection.users) await walk(api(`/users/${encodeURIComponent(user)}/projects`));
  for (const project of connection.projects)
    listing.add(describe((await getJson(fetch, api(`/projects/${encodeURIComponent(project)}`))).body as Record<string, unknown>));
}

function describe(project: Record<string, unknown>): RemoteRepository {
  const statistics = project.statistics as { repository_size?: number } | undefined;
  return {
    path: String(project.path_with_namespace ?? ''),
    hostId: project.id === undefined ? undefined : String(project.id),
    cloneUrl: String(project.http_url_to_repo ?? ''),
    webUrl: typeof project.web_url === 'string' ? project.web_url : undefined,
    archived: project.archived === true,
    fork: project.forked_from_project !== undefined && project.forked_from_project !== null,
    sizeBytes: statistics?.repository_size,
    topics: Array.isArray(project.topics) ? project.topics.map(String) : [],
  };
}
