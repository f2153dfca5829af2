/**
 * Links of a file result: trawl's own file view, and the code host's page at
 * the indexed commit. Free of Node types: the web app builds its links here too.
 */
import type { CodeHostType } from '../index/code-host.js';

/** Characters encodeURIComponent leaves alone, and '/': most paths are made of these only, and need no work. */
const UNRESERVED_PATH = /^[\w.~!*'()/-]*$/;
const encodeSegments = (value: string) => (UNRESERVED_PATH.test(value) ? value : value.split('/').map(encodeURIComponent).join('/'));

/** `{publicUrl}/browse/{repo}@{branch}/-/blob/{path}` (a file; `tree` for a directory), each path segment URL-encoded. */
export function browseUrl(publicUrl: string, repository: string, branch: string, path: string, kind: 'blob' | 'tree' = 'blob'): string {
  return `${publicUrl}/browse/${encodeSegments(repository)}@${encodeURIComponent(branch)}/-/${kind}/${encodeSegments(path)}`;
}

/** `{publicUrl}/browse/{repo}`: trawl's page of a repository. */
export function browseRepositoryUrl(publicUrl: string, repository: string): string {
  return `${publicUrl}/browse/${encodeSegments(repository)}`;
}

/** The code host's page for a file at a commit, or undefined when the repository has no web URL (or a generic host). */
export function externalUrl(repository: { webUrl?: string; codeHostType: CodeHostType }, commit: string, path: string): string | undefined {
  const base = repository.webUrl;
  if (!base) return undefined;
  const file = encodeSegments(path);
  switch (repository.codeHostType) {
    case 'github':
      return `${base}/blob/${commit}/${file}`;
    case 'gitlab':
      return `${base}/-/blob/${commit}/${file}`;
    case 'gitea':
      return `${base}/src/commit/${commit}/${file}`;
    case 'gerrit':
      return `${base}/+/${commit}/${file}`;
    case 'bitbucketServer':
      return `${base}/browse/${file}?at=${commit}`;
    case 'bitbucketCloud':
      return `${base}/src/${commit}/${file}`;
    case 'azuredevops':
      return `${base}?path=${encodeURIComponent(`/${path}`)}&version=GC${commit}`;
    case 'genericGitHost':
      return undefined;
  }
}
