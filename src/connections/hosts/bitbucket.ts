/**
 * Bitbucket Cloud (API 2.0: `workspaces`, `repos` as `workspace/name`; paged by `next`) and Bitbucket Data
 * Center (REST 1.0: `all`, `projects` by key, `repos` as `PROJECT/name`; paged by `nextPageStart`).
 */
import { arrayOf, getJson, pages, under } from '../host-api.js';
import type { RemoteRepository } from '../listing.js';
import type { HostListing } from './host.js';

type Json = Record<string, unknown>;

export async function listBitbucket(host: HostListing): Promise<void> {
  return host.connection.deploymentType === 'server' ? listServer(host) : listCloud(host);
}

async function listCloud({ connection, fetch, listing }: HostListing): Promise<void> {
  const api = (path: string) => under(connection.url, path, { pagelen: 100 });
  const next = (body: unknown) => (typeof (body as Json).next === 'string' ? new URL((body as Json).next as string) : null);
  for (const workspace of connection.workspaces) {
    const first = api(`/repositories/${encodeURIComponent(workspace)}`);
    for await (const repo of pages(fetch, first, (body) => arrayOf((body as Json).values, first.pathname), next)) listing.add(describeCloud(repo));
  }
  for (const full of connection.repos) {
    const [workspace = '', name = ''] = full.split('/');
    listing.add(
      describeCloud((await getJson(fetch, under(connection.url, `/repositories/${encodeURIComponent(workspace)}/${encodeURIComponent(name)}`))).body as Json),
    );
  }
}

function describeCloud(repo: Json): RemoteRepository {
  const links = (repo.links ?? {}) as { clone?: { name?: string; href?: string }[]; html?: { href?: string } };
  const clone = links.clone?.find((link) => link.name === 'https')?.href ?? '';
  return {
    path: String(repo.full_name ?? ''),
    hostId: typeof repo.uuid === 'string' ? repo.uuid : undefined,
    cloneUrl: withoutUser(clone),
    webUrl: links.html?.href,
    fork: repo.parent !== undefined && repo.parent !== null,
    sizeBytes: typeof repo.size === 'number' ? repo.size : undefined,
  };
}

async function listServer({ connection, fetch, listing }: HostListing): Promise<void> {
  const api = (path: string) => under(connection.url, `/rest/api/1.0${path}`, { limit: 100 });
  const next = (body: unknown, _response: Response, url: URL) => {
    const page = body as Json;
    if (page.isLastPage !== false || typeof page.nextPageStart !== 'number') return null;
    const following = new URL(url);
    following.searchParams.set('start', String(page.nextPageStart));
    return following;
  };
  const walk = async (first: URL) => {
    for await (const repo of pages(fetch, first, (body) => arrayOf((body as Json).values, first.pathname), next)) listing.add(describeServer(repo));
  };
  if (connection.all) await walk(api('/repos'));
  for (const project of connection.projects) await walk(api(`/projects/${encodeURIComponent(project)}/repos`));
  for (const full of connection.repos) {
    const [project = '', slug = ''] = full.split('/');
    listing.add(describeServer((await getJson(fetch, api(`/projects/${encodeURIComponent(project)}/repos/${encodeURIComponent(slug)}`))).body as Json));
  }
}

function describeServer(repo: Json): RemoteRepository {
  const links = (repo.links ?? {}) as { clone?: { name?: string; href?: string }[]; self?: { href?: string }[] };
  const project = (repo.project ?? {}) as { key?: string };
  return {
    path: `${project.key ?? ''}/${String(repo.slug ?? '')}`,
    hostId: repo.id === undefined ? undefined : String(repo.id),
    cloneUrl: withoutUser(links.clone?.find((link) => link.name === 'http' || link.name === 'https')?.href ?? ''),
    webUrl: links.self?.[0]?.href,
    archived: repo.archived === true,
    fork: repo.origin !== undefined && repo.origin !== null,
  };
}

/** A clone URL without the user name hosts put in it (git is given the user separately). */
export function withoutUser(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
