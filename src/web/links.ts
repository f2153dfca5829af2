/**
 * The page's URLs. Files: `/browse/{repo}@{branch}/-/blob/{path}` (the
 * `webUrl` of search results), directories: `/-/tree/{path}`, a repository:
 * `/browse/{repo}`. Each path segment is URL-encoded.
 */
import { browseUrl } from '../search/links.js';

export type Place =
  | { kind: 'search' }
  /** A path the app has no page for. */
  | { kind: 'unknown' }
  | { kind: 'repository'; repo: string }
  | { kind: 'blob' | 'tree'; repo: string; branch: string; path: string };

const decodeSegments = (value: string) => value.split('/').map(decodeURIComponent).join('/');

export function placeOf(pathname: string): Place {
  if (pathname === '/' || pathname === '/search') return { kind: 'search' };
  if (!pathname.startsWith('/browse/')) return { kind: 'unknown' };
  const rest = pathname.slice('/browse/'.length);
  const marker = /\/-\/(blob|tree)(\/|$)/.exec(rest);
  if (!marker) return { kind: 'repository', repo: decodeSegments(rest.replace(/\/+$/, '')) };
  const head = rest.slice(0, marker.index);
  const at = head.lastIndexOf('@');
  const repo = decodeSegments(at === -1 ? head : head.slice(0, at));
  const branch = at === -1 ? 'HEAD' : decodeURIComponent(head.slice(at + 1));
  const path = decodeSegments(rest.slice(marker.index + marker[0].length).replace(/\/+$/, ''));
  return { kind: marker[1] as 'blob' | 'tree', repo, branch, path };
}

export function blobUrl(repo: string, branch: string, path: string): string {
  return browseUrl('', repo, branch, path);
}

export function treeUrl(repo: string, branch: string, path: string): string {
  return browseUrl('', repo, branch, path, 'tree');
}

/** A search URL that keeps the query and its toggles, so searches can be shared. */
export function searchUrl(query: string, regex: boolean, caseSensitive: boolean): string {
  const params = new URLSearchParams({ q: query });
  if (regex) params.set('regex', '1');
  if (caseSensitive) params.set('case', '1');
  return `/search?${params.toString()}`;
}

/** The path part of an absolute webUrl from the API (it carries the daemon's public URL). */
export function localPath(webUrl: string): string {
  return new URL(webUrl, location.origin).pathname;
}
