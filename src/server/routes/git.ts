/** The git endpoints (spec/api.md §4): tree, source, commits, commit, diff. */
import { CommitDetail, CommitList, CommitQuery, CommitsQuery, DiffQuery, DiffResponse, SourceQuery, SourceResponse, TreeRequest, TreeResponse } from '../../api/schemas.js';
import { ApiError } from '../../api/errors.js';
import { dateParameter, parseBody, parseQuery, validator } from '../../api/validate.js';
import { blobAt } from '../../git/blob.js';
import { diffCommits } from '../../git/diff.js';
import { commitDetail, listCommits } from '../../git/history.js';
import { normalizeTreePath, resolveCommit } from '../../git/refs.js';
import { treeOf } from '../../git/tree.js';
import { detectLanguage } from '../../index/languages.js';
import { browseUrl, externalUrl } from '../../search/links.js';
import { audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import { pageHeaders } from '../pagination.js';
import { gitRepository, visibleRepository } from '../repositories.js';
import type { Route, ServerContext } from '../route.js';

const GIT_ERRORS = ['NOT_FOUND', 'INVALID_GIT_REF', 'NOT_AUTHENTICATED'] as const;
const treeBody = validator(TreeRequest);
const sourceQuery = validator(SourceQuery);
const commitsQuery = validator(CommitsQuery);
const commitQuery = validator(CommitQuery);
const diffQuery = validator(DiffQuery);

/** The repository and the commit `ref` names in it, as the caller may see them. */
async function commitIn(context: ServerContext, caller: Caller, name: string, ref: string) {
  const repo = visibleRepository(context, caller, name);
  const repository = await gitRepository(repo);
  return { repo, repository, commit: await resolveCommit(repository, ref) };
}

/** Files with a NUL byte in their first 8 KiB are binary (git's rule). */
function isBinary(content: Buffer): boolean {
  return content.subarray(0, 8000).includes(0);
}

export const treeRoute: Route = {
  method: 'post',
  path: '/api/tree',
  operationId: 'getTree',
  tag: 'Git',
  summary: 'The file tree at a revision: the root listed, each requested directory (and those on the way) expanded one level',
  access: 'read',
  body: TreeRequest,
  response: { status: 200, schema: TreeResponse, description: 'The tree' },
  errors: ['INVALID_REQUEST_BODY', 'FILE_NOT_FOUND', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const tree = parseBody(treeBody, request.body);
    const { commit } = await commitIn(context, caller, tree.repoName, tree.revisionName);
    const body = { tree: await treeOf(commit, tree.paths) };
    audit(context, caller, 'tree.read', { id: tree.repoName, type: 'repository' }, { ref: tree.revisionName, expanded: tree.paths.length });
    return { status: 200, body };
  },
};

export const sourceRoute: Route = {
  method: 'get',
  path: '/api/source',
  operationId: 'getSource',
  tag: 'Git',
  summary: "A file's content at a revision (default HEAD); binary files come base64-encoded",
  access: 'read',
  query: SourceQuery,
  response: { status: 200, schema: SourceResponse, description: 'The file' },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(sourceQuery, request.query);
    const ref = params.ref ?? 'HEAD';
    const { repo, commit } = await commitIn(context, caller, params.repo, ref);
    const blob = await blobAt(commit, params.path);
    const binary = isBinary(blob.content);
    const body: Record<string, unknown> = {
      source: blob.content.toString(binary ? 'base64' : 'utf8'),
      encoding: binary ? 'base64' : 'utf-8',
      language: detectLanguage(blob.path, blob.content) ?? '',
      path: blob.path,
      repo: repo.name,
      repoCodeHostType: repo.codeHostType,
      webUrl: browseUrl(context.config.publicUrl, repo.name, ref, blob.path),
      blobSha: blob.blobSha,
    };
    if (repo.displayName !== undefined) body.repoDisplayName = repo.displayName;
    const external = externalUrl(repo, commit.sha(), blob.path);
    if (external) body.externalWebUrl = external;
    audit(context, caller, 'file.read', { id: repo.name, type: 'repository' }, { path: blob.path, ref });
    return { status: 200, body };
  },
};

export const commitsRoute: Route = {
  method: 'get',
  path: '/api/commits',
  operationId: 'listCommits',
  tag: 'Git',
  summary: 'Commits reachable from a ref (default HEAD), newest first, filtered by path, message, author and date',
  access: 'read',
  query: CommitsQuery,
  response: { status: 200, schema: CommitList, description: 'One page of commits', headers: ['X-Total-Count', 'Link'] },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(commitsQuery, request.query);
    const { repository, commit } = await commitIn(context, caller, params.repo, params.ref ?? 'HEAD');
    const page = { number: params.page ?? 1, size: params.perPage ?? 30 };
    const filter = {
      path: params.path === undefined ? undefined : normalizeTreePath(params.path),
      query: params.query,
      author: params.author,
      since: dateParameter(params.since, 'since'),
      until: dateParameter(params.until, 'until'),
    };
    const { total, commits } = await listCommits(repository, commit, filter, page);
    return { status: 200, body: commits, headers: pageHeaders(total, page, context.config.publicUrl, '/api/commits', request.query) };
  },
};

export const commitRoute: Route = {
  method: 'get',
  path: '/api/commit',
  operationId: 'getCommit',
  tag: 'Git',
  summary: 'One commit with its parents',
  access: 'read',
  query: CommitQuery,
  response: { status: 200, schema: CommitDetail, description: 'The commit' },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(commitQuery, request.query);
    const { repository, commit } = await commitIn(context, caller, params.repo, params.ref);
    return { status: 200, body: await commitDetail(repository, commit) };
  },
};

export const diffRoute: Route = {
  method: 'get',
  path: '/api/diff',
  operationId: 'getDiff',
  tag: 'Git',
  summary: 'What changed between two revisions, optionally under one path',
  access: 'read',
  query: DiffQuery,
  response: { status: 200, schema: DiffResponse, description: 'Changed files with their hunks' },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(diffQuery, request.query);
    const { repository, commit: head } = await commitIn(context, caller, params.repo, params.head);
    const { commit: base } = await commitIn(context, caller, params.repo, params.base);
    const filePath = params.path === undefined ? undefined : normalizeTreePath(params.path);
    return { status: 200, body: { files: await diffCommits(repository, base, head, filePath || undefined) } };
  },
};
