/**
 * Gerrit: every project of type CODE (`projects` globs narrow it), read anonymously, 500 a page (`S` skips),
 * each body after Gerrit's `)]}'` guard. Clone URL: the host URL plus the project name.
 */
import { globToRegExp } from '../../config/glob.js';
import { pages, under } from '../host-api.js';
import { ConnectionError } from '../errors.js';
import type { HostListing } from './host.js';

const PAGE = 500;
const GUARD = ")]}'";

export async function listGerrit({ connection, fetch, listing }: HostListing): Promise<void> {
  const wanted = connection.projects.map(globToRegExp);
  let skipped = 0;
  const first = under(connection.url, '/projects/', { type: 'CODE', d: '', n: PAGE, S: 0 });
  const entries = (body: unknown): [string, Record<string, unknown>][] => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ConnectionError(`${first.pathname}: the host did not answer a project map`);
    return Object.entries(body as Record<string, Record<string, unknown>>);
  };
  const next = (body: unknown, _response: Response, url: URL) => {
    const list = entries(body);
    if (list.length === 0 || list.at(-1)?.[1]?._more_projects !== true) return null;
    skipped += list.length;
    const following = new URL(url);
    following.searchParams.set('S', String(skipped));
    return following;
  };
  for await (const [name, project] of pages(fetch, first, entries, next, GUARD)) {
    if (wanted.length > 0 && !wanted.some((glob) => glob.test(name))) continue;
    const webLink = Array.isArray(project.web_links) ? (project.web_links[0] as { url?: string } | undefined)?.url : undefined;
    listing.add({
      path: name,
      hostId: typeof project.id === 'string' ? project.id : undefined,
      cloneUrl: `${connection.url}/${name.split('/').map(encodeURIComponent).join('/')}`,
      webUrl: webLink && URL.canParse(webLink, connection.url) ? new URL(webLink, connection.url).toString() : undefined,
      readOnly: project.state === 'READ_ONLY',
      hidden: project.state === 'HIDDEN',
    });
  }
}
