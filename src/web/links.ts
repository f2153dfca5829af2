/**
 * The page's URLs. Files: `/browse/{repo}@{branch}/-/blob/{path}` (the
 * `webUrl` of search results), directories: `/-/tree/{path}`, the history of either: `/-/commits/{path}`, a
 * commit: `/browse/{repo}@{hash}/-/commit`, a repository: `/browse/{repo}`. Each path segment is URL-encoded.
 */
import { browseUrl } from '../search/links.js';
import { h } from './dom.js';

export type Place =
  | { kind: 'search' }
  /** A path the app has no page for. */
  | { kind: 'unknown' }
  | { kind: 'repository'; repo: string }
  | { kind: 'blob' | 'tree' | 'commits' | 'commit'; repo: string; branch: string; path: string };

const decodeSegments = (value: string) => value.split('/').map(decodeURIComponent).join('/');

export function placeOf(pathname: string): Place {
  if (pathname === '/' || pathname === '/search') return { kind: 'search' };
  if (!pathname.startsWith('/browse/')) return { kind: 'unknown' };
  const rest = pathname.slice('/browse/'.length);
  const marker = /\/-\/(blob|tree|commits|commit)(\/|$)/.exec(rest);
  if (!marker) return { kind: 'repository', repo: decodeSegments(rest.replace(/\/+$/, '')) };
  const head = rest.slice(0, marker.index);
  const at = head.lastIndexOf('@');
  const repo = decodeSegments(at === -1 ? head : head.slice(0, at));
  const branch = at === -1 ? 'HEAD' : decodeURIComponent(head.slice(at + 1));
  const path = decodeSegments(rest.slice(marker.index + marker[0].length).replace(/\/+$/, ''));
  return { kind: marker[1] as 'blob' | 'tree' | 'commits' | 'commit', repo, branch, path };
}

export function blobUrl(repo: string, branch: string, path: string): string {
  return browseUrl('', repo, branch, path);
}

export function treeUrl(repo: string, branch: string, path: string): string {
  return browseUrl('', repo, branch, path, 'tree');
}

/** The history of `path` ('' for the whole repository) from `ref`, with `filters` (author, query, page) in its query string. */
export function commitsUrl(repo: string, ref: string, path: string, filters: Record<string, string> = {}): string {
  const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== '')).toString();
  return `${treeUrl(repo, ref, path).replace('/-/tree/', '/-/commits/')}${query ? `?${query}` : ''}`;
}

export function commitUrl(repo: string, hash: string): string {
  return treeUrl(repo, hash, '').replace(/\/-\/tree\/$/, '/-/commit');
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

/** Edits the page's query string in place (no new history entry): the state of a view that a shared link restores. */
export function replaceSearchParams(edit: (params: URLSearchParams) => void): void {
  const params = new URLSearchParams(location.search);
  edit(params);
  const search = params.toString();
  history.replaceState(history.state, '', `${location.pathname}${search ? `?${search}` : ''}${location.hash}`);
}

/** Opens `url` through a link in the page, so that the app's router opens it without a reload. */
export function openInApp(url: string): void {
  const link = h('a', { href: url, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}
