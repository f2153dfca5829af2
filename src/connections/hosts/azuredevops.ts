/**
 * Azure DevOps Services and Server: the git repositories of `orgs`, of `projects` (`org/project`) and
 * `repos` (`org/project/name`), API version 7.1 (one answer per listing; no paging).
 */
import { arrayOf, getJson, under } from '../host-api.js';
import type { RemoteRepository } from '../listing.js';
import type { HostListing } from './host.js';
import { withoutUser } from './bitbucket.js';

const VERSION = { 'api-version': '7.1' };

export async function listAzureDevops({ connection, fetch, listing }: HostListing): Promise<void> {
  const list = async (org: string, path: string) => {
    const { body } = await getJson(fetch, under(connection.url, path, VERSION));
    for (const repo of arrayOf((body as { value?: unknown }).value, path)) listing.add(describe(org, repo));
  };
  const part = (value: string) => encodeURIComponent(value);
  for (const org of connection.orgs) await list(org, `/${part(org)}/_apis/git/repositories`);
  for (const full of connection.projects) {
    const [org = '', project = ''] = full.split('/');
    await list(org, `/${part(org)}/${part(project)}/_apis/git/repositories`);
  }
  for (const full of connection.repos) {
    const [org = '', project = '', name = ''] = full.split('/');
    listing.add(
      describe(
        org,
        (await getJson(fetch, under(connection.url, `/${part(org)}/${part(project)}/_apis/git/repositories/${part(name)}`, VERSION))).body as Record<
          string,
          unknown
        >,
      ),
    );
  }
}

/** A repository of organisation `org` (the one listed: Server's remote URLs name a collection instead). */
function describe(org: string, repo: Record<string, unknown>): RemoteRepository {
  const project = (repo.project ?? {}) as { name?: string };
  const remote = typeof repo.remoteUrl === 'string' ? repo.remoteUrl : '';
  return {
    path: `${org}/${project.name ?? ''}/${String(repo.name ?? '')}`,
    hostId: typeof repo.id === 'string' ? repo.id : undefined,
    cloneUrl: withoutUser(remote),
    webUrl: typeof repo.webUrl === 'string' ? repo.webUrl : undefined,
    sizeBytes: typeof repo.size === 'number' ? repo.size : undefined,
    disabled: repo.isDisabled === true,
    fork: repo.isFork === true,
  };
}
