/**
 * JSON from a code host's API through a HostFetch: an answer other than 2xx becomes a ConnectionError that
 * says what the host refused (a wrong token, a name it does not know), and listings are walked page by page.
 */
import { ConnectionError } from './errors.js';
import { safeUrl, type HostFetch } from './host-fetch.js';

/** Pages of one listing read at most: a host paging forever is cut off with an error. */
const MAX_PAGES = 10_000;

/** The parsed JSON body of GET `url`; `prefix` is stripped first (Gerrit's `)]}'`). */
export async function getJson(fetch: HostFetch, url: URL, prefix = ''): Promise<{ body: unknown; response: Response }> {
  const response = await fetch(url);
  if (!response.ok) throw new ConnectionError(refusal(response.status, url));
  let text = await response.text();
  if (prefix && text.startsWith(prefix)) text = text.slice(prefix.length);
  try {
    return { body: JSON.parse(text), response };
  } catch {
    throw new ConnectionError(`GET ${safeUrl(url)}: the answer is not JSON`);
  }
}

/** What an answer of `status` to GET `url` means for the connection. */
export function refusal(status: number, url: URL | string): string {
  const what = `GET ${safeUrl(url)}: HTTP ${status}`;
  if (status === 401) return `${what}: the host refused the credentials (check the token)`;
  if (status === 403) return `${what}: the token may not read this`;
  if (status === 404) return `${what}: no such organisation, user, group, project or repository (or the token cannot see it)`;
  return what;
}

/**
 * Every item of a paged listing: `items` reads one page's body, `next` says where the following page is
 * (null: the last). Yields as it reads, so a caller that stops early reads no further page.
 */
export async function* pages<T>(
  fetch: HostFetch,
  first: URL,
  items: (body: unknown) => T[],
  next: (body: unknown, response: Response, url: URL) => URL | null,
  prefix = '',
): AsyncGenerator<T> {
  let url: URL | null = first;
  for (let page = 0; url; page++) {
    if (page >= MAX_PAGES) throw new ConnectionError(`${safeUrl(first)}: more than ${MAX_PAGES} pages`);
    const { body, response } = await getJson(fetch, url, prefix);
    yield* items(body);
    url = next(body, response, url);
  }
}

/** The `rel="next"` target of a Link header (GitHub, GitLab, Gitea), or null. */
export function linkNext(response: Response): URL | null {
  const link = response.headers.get('link');
  const target = link && /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1];
  return target ? new URL(target, response.url) : null;
}

/** `value` as an array, or a ConnectionError naming what the host answered instead. */
export function arrayOf(value: unknown, what: string): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw new ConnectionError(`${what}: the host did not answer a list`);
  return value.filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null);
}

/** A URL under `base` (whose path is kept) with `path` appended and `query` set. */
export function under(base: string, path: string, query: Record<string, string | number> = {}): URL {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, String(value));
  return url;
}
