/** The git endpoints (spec/api.md §4): tree, source, blame, commits, commit authors, commit, diff; and branches. */
import {
  AuthorList,
  AuthorsQuery,
  BlameQuery,
  BlameResponse,
  BranchesQuery,
  BranchList,
  CommitDetail,
  CommitList,
  CommitQuery,
  CommitsQuery,
  DiffQuery,
  DiffResponse,
} from '../../api/git-schemas.js';
import { SourceQuery, SourceResponse, TreeRequest, TreeResponse } from '../../api/schemas.js';
import { ApiError } from '../../api/errors.js';
import { listedRepository } from '../../search/catalog.js';
import { parseBody, parseQuery, validator } from '../../api/validate.js';
import { blameFile } from '../../git/blame.js';
import { blobAt } from '../../git/blob.js';
import { parseGitDate } from '../../git/dates.js';
import { diffCommits } from '../../git/diff.js';
import { InvalidRefError, readLimit, type ReadLimit } from '../../git/errors.js';
import { commitDetail, listAuthors, listCommits, type CommitFilter, type CommitSummary, type TextMatcher } from '../../git/history.js';
import { normalizeTreePath, resolveCommit } from '../../git/refs.js';
import { directoryFileAt, directoryTreeOf } from '../../git/plain-directory.js';
import { isGitRepository, localBranchesByDate, type GitCommit } from '../../git/repository.js';
import { treeOf } from '../../git/tree.js';
import type { RepositoryConfig } from '../../config/config.js';
import { detectLanguage } from '../../language/languages.js';
import { browseUrl, externalUrl } from '../../search/links.js';
import { audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import { pageHeaders, paginate, requestedPage } from '../pagination.js';
import { callerKey } from '../rate-limit.js';
import { gitRepository, repositoryHere } from '../repositories.js';
import type { Route, ServerContext } from '../route.js';

const GIT_ERRORS = ['NOT_FOUND', 'INVALID_GIT_REF', 'NOT_AUTHENTICATED'] as const;
const treeBody = validator(TreeRequest);
const sourceQuery = validator(SourceQuery);
const commitsQuery = validator(CommitsQuery);
const commitQuery = validator(CommitQuery);
const diffQuery = validator(DiffQuery);
const authorsQuery = validator(AuthorsQuery);
const blameQuery = validator(BlameQuery);
const branchesQuery = validator(BranchesQuery);

/** The repository and the commit `ref` names in it, as the caller may see them. */
async function commitIn(context: ServerContext, caller: Caller, name: string, ref: string) {
  const repo = repositoryHere(context, caller, name);
  const repository = await gitRepository(repo);
  return { repo, repository, commit: await resolveCommit(repository, ref) };
}

/**
 * The repository `name` as the caller may see it, with the commit `ref` names in it; `commit` is null for a plain
 * directory, whose files are read from disk and whose one revision is HEAD.
 */
async function revisionIn(context: ServerContext, caller: Caller, name: string, ref: string): Promise<{ repo: RepositoryConfig; commit: GitCommit | null }> {
  const repo = repositoryHere(context, caller, name);
  if (isGitRepository(repo.path)) return { repo, commit: await resolveCommit(await gitRepository(repo), ref) };
  if (ref !== 'HEAD') throw new InvalidRefError(ref, 'a plain directory has one revision, HEAD', true);
  return { repo, commit: null };
}

/** A git read of this request stops at the search time budget, or when the client goes away. */
function requestLimit(request: Request, context: ServerContext): ReadLimit {
  const { limit, stop } = readLimit(context.config.server.searchTimeBudgetMs);
  request.onAborted(stop);
  return limit;
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
  errors: ['INVALID_REQUEST_BODY', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const tree = parseBody(treeBody, request.body);
    const { repo, commit } = await revisionIn(context, caller, tree.repoName, tree.revisionName);
    const limit = requestLimit(request, context);
    const body = { tree: commit ? await treeOf(commit, tree.paths, limit) : await directoryTreeOf(repo.path, tree.paths, limit) };
    audit(context, caller, 'tree.read', { id: tree.repoName, type: 'repository' }, { ref: tree.revisionName, expanded: tree.paths.length });
    return { status: 200, body };
  },
};

export const sourceRoute: Route = {
  method: 'get',
  path: '/api/source',
  operationId: 'getSource',
  tag: 'Git',
  summary: "A file's content at a revision (default HEAD); binary files come base64-encoded, a symbolic link as its target's text",
  access: 'read',
  query: SourceQuery,
  response: { status: 200, schema: SourceResponse, description: 'The file' },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(sourceQuery, request.query);
    const ref = params.ref ?? 'HEAD';
    const { repo, commit } = await revisionIn(context, caller, params.repo, ref);
    const blob = commit ? await blobAt(commit, params.path) : await directoryFileAt(repo.path, params.path);
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
    const external = commit && externalUrl(repo, commit.sha(), blob.path);
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
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(commitsQuery, request.query);
    const { repository, commit } = await commitIn(context, caller, params.repo, params.ref!);
    const page = requestedPage(params);
    const from = callerKey(caller, request);
    const filter: CommitFilter = {
      path: params.path === undefined ? undefined : normalizeTreePath(params.path),
      query: await regexParameter(context, params.query, 'query', from),
      author: await regexParameter(context, params.author, 'author', from),
      since: gitDateParameter(params.since, 'since'),
      until: gitDateParameter(params.until, 'until'),
    };
    const { total, commits } = await listCommits(repository, commit, filter, page, requestLimit(request, context));
    return { status: 200, body: commits.map(withSnakeCaseAuthor), headers: pageHeaders(total, page, context.config.publicUrl, '/api/commits', request.query) };
  },
};

/** Sourcebot clients before 4.16.5 read `author_name` and `author_email`. */
function withSnakeCaseAuthor<T extends CommitSummary>(commit: T) {
  return { ...commit, author_name: commit.authorName, author_email: commit.authorEmail };
}

/**
 * An optional case-insensitive RE2 regex query parameter as a matcher run by the search workers (compiling
 * some 1 KiB patterns takes RE2 100 ms and more), or INVALID_QUERY_PARAMS naming it.
 */
async function regexParameter(context: ServerContext, value: string | undefined, field: string, caller: string): Promise<TextMatcher | undefined> {
  if (value === undefined || value === '') return undefined;
  const match = async (texts: string[]) => {
    const result = await context.pool.matchTexts(value, texts, caller);
    if ('invalid' in result)
      throw new ApiError('INVALID_QUERY_PARAMS', `query parameter \`${field}\`: invalid regular expression ${JSON.stringify(value)} (${result.invalid})`);
    return result.matched;
  };
  await match([]);
  return match;
}

/** An optional date query parameter in a form git takes, or INVALID_QUERY_PARAMS naming it. */
function gitDateParameter(value: string | undefined, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = parseGitDate(value);
  if (!date)
    throw new ApiError(
      'INVALID_QUERY_PARAMS',
      `query parameter \`${field}\`: expected an ISO 8601 date or a relative one such as \`30 days ago\` (got ${JSON.stringify(value)})`,
    );
  return date;
}

export const authorsRoute: Route = {
  method: 'get',
  path: '/api/commits/authors',
  operationId: 'listCommitAuthors',
  tag: 'Git',
  summary: 'The authors of the commits reachable from a ref (default HEAD), optionally of those changing a path, most commits first',
  access: 'read',
  query: AuthorsQuery,
  response: { status: 200, schema: AuthorList, description: 'One page of authors', headers: ['X-Total-Count', 'Link'] },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(authorsQuery, request.query);
    const { repository, commit } = await commitIn(context, caller, params.repo, params.ref!);
    const page = requestedPage(params);
    const filter = { path: params.path === undefined ? undefined : normalizeTreePath(params.path) };
    const { total, authors } = await listAuthors(repository, commit, filter, page, requestLimit(request, context));
    audit(context, caller, 'commits.authors.read', { id: params.repo, type: 'repository' }, { ref: params.ref });
    return { status: 200, body: authors, headers: pageHeaders(total, page, context.config.publicUrl, '/api/commits/authors', request.query) };
  },
};

export const blameRoute: Route = {
  method: 'get',
  path: '/api/blame',
  operationId: 'getFileBlame',
  tag: 'Git',
  summary: "A file's lines at a revision (default HEAD), in ranges with the commit that last changed each",
  access: 'read',
  query: BlameQuery,
  response: { status: 200, schema: BlameResponse, description: 'Ranges by line, and each commit once' },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(blameQuery, request.query);
    const { repo, commit } = await commitIn(context, caller, params.repo, params.ref!);
    const blob = await blobAt(commit, params.path);
    const blame = await blameFile(repo.path, commit.sha(), blob.path, requestLimit(request, context), {
      slots: context.gitProcesses,
      caller: callerKey(caller, request),
    });
    audit(context, caller, 'file.blamed', { id: repo.name, type: 'repository' }, { path: blob.path, ref: params.ref });
    return { status: 200, body: blame };
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
    const { repository, commit } = await commitIn(context, caller, params.repo, params.ref).catch((error: unknown) => {
      // Sourcebot answers an unknown revision here with 404 (a malformed one stays INVALID_GIT_REF).
      if (error instanceof InvalidRefError && error.unresolved) throw new ApiError('NOT_FOUND', error.message);
      throw error;
    });
    return { status: 200, body: withSnakeCaseAuthor(await commitDetail(repository, commit)) };
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
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'FILE_NOT_FOUND', 'SERVICE_UNAVAILABLE', ...GIT_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(diffQuery, request.query);
    const { repository, commit: head } = await commitIn(context, caller, params.repo, params.head);
    const { commit: base } = await commitIn(context, caller, params.repo, params.base);
    const filePath = params.path === undefined ? undefined : normalizeTreePath(params.path);
    return { status: 200, body: { files: await diffCommits(repository, base, head, filePath || undefined, requestLimit(request, context)) } };
  },
};

export const branchesRoute: Route = {
  method: 'get',
  path: '/api/branches',
  operationId: 'listBranches',
  tag: 'Git',
  summary: "A repository's branches (indexed or not), newest commit first, each with whether it is the default and whether it is searchable",
  access: 'read',
  query: BranchesQuery,
  response: { status: 200, schema: BranchList, description: 'One page of branches', headers: ['X-Total-Count', 'Link'] },
  errors: ['INVALID_QUERY_PARAMS', 'MISSING_REQUIRED_QUERY_PARAMETER', 'SERVICE_UNAVAILABLE', 'NOT_FOUND', 'NOT_AUTHENTICATED'],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(branchesQuery, request.query);
    const repo = repositoryHere(context, caller, params.repo);
    const repository = await gitRepository(repo);
    const entry = listedRepository(context.catalog(), repo.name)?.entry;
    const indexed = new Set((entry?.branches ?? []).map((branch) => branch.name));
    const needle = params.query?.toLowerCase();
    const wanted = (name: string) => needle === undefined || name.toLowerCase().includes(needle);
    const branches = (await localBranchesByDate(repository, wanted, requestLimit(request, context))).map(({ name, committedAt }) => ({
      name,
      committedAt: committedAt.toISOString(),
      isDefault: name === entry?.defaultBranch,
      isIndexed: indexed.has(name),
    }));
    const { items, headers } = paginate(branches, params, context.config.publicUrl, '/api/branches', request.query);
    return { status: 200, body: items, headers };
  },
};
