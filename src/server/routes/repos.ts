/**
 * GET /api/repos: the repositories the caller can see, with their index state,
 * paged; GET /api/connections: the code hosts they come from. trawl has no
 * connection objects of its own: a connection is the configured repositories
 * of one `codeHostType`, numbered by that type.
 */
import { ConnectionList, RepositoryList, ReposQuery } from '../../api/schemas.js';
import { parseQuery, validator } from '../../api/validate.js';
import { CODE_HOST_TYPES } from '../../index/code-host.js';
import type { CodeHostType } from '../../index/model.js';
import type { CatalogRepository } from '../../search/catalog.js';
import { browseRepositoryUrl } from '../../search/links.js';
import type { Caller } from '../access.js';
import type { Request } from '../http.js';
import { paginate } from '../pagination.js';
import type { Route, ServerContext } from '../route.js';

const reposQuery = validator(ReposQuery);

/** Sourcebot's connection types: one for both Bitbucket flavours, `git` for a generic host. */
const CONNECTION_TYPES: Record<CodeHostType, string> = {
  github: 'github',
  gitlab: 'gitlab',
  gitea: 'gitea',
  gerrit: 'gerrit',
  bitbucketServer: 'bitbucket',
  bitbucketCloud: 'bitbucket',
  genericGitHost: 'git',
  azuredevops: 'azuredevops',
};

/** The connection id of a code host type: its place in CODE_HOST_TYPES, from 1 (stable across restarts and configs). */
const connectionId = (type: CodeHostType) => CODE_HOST_TYPES.indexOf(type) + 1;

const visibleRepositories = (caller: Caller, context: ServerContext) => context.catalog().repositories.filter((repo) => caller.canSee(repo.config));

function describe(repo: CatalogRepository, context: ServerContext) {
  const { config, entry } = repo;
  const item: Record<string, unknown> = {
    codeHostType: config.codeHostType,
    repoId: entry?.id ?? 0,
    repoName: config.name,
    webUrl: browseRepositoryUrl(context.config.publicUrl, config.name),
    defaultBranch: entry?.defaultBranch ?? 'HEAD',
    branches: (entry?.branches ?? []).map((branch) => branch.name),
    isFork: config.fork,
    isArchived: config.archived,
    isPublic: config.public,
    indexState: context.indexState(config.name),
  };
  if (config.displayName !== undefined) item.repoDisplayName = config.displayName;
  if (config.webUrl !== undefined) item.externalWebUrl = config.webUrl;
  if (entry?.indexedAt !== undefined) item.indexedAt = entry.indexedAt;
  if (entry?.pushedAt !== undefined) item.pushedAt = entry.pushedAt;
  return item;
}

export const reposRoute: Route = {
  method: 'get',
  path: '/api/repos',
  operationId: 'listRepos',
  tag: 'Repositories',
  summary: "The repositories the caller can see, with their index state; paged, sorted by name or by the default branch's last commit time",
  access: 'read',
  query: ReposQuery,
  response: { status: 200, schema: RepositoryList, description: 'One page of repositories', headers: ['X-Total-Count', 'Link'] },
  errors: ['INVALID_QUERY_PARAMS', 'NOT_AUTHENTICATED'],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(reposQuery, request.query);
    const needle = params.query?.toLowerCase();
    const repos = visibleRepositories(caller, context).filter(
      (repo) =>
        (needle === undefined || repo.config.name.toLowerCase().includes(needle)) && (params.connectionId === undefined || connectionId(repo.config.codeHostType) === params.connectionId),
    );
    const key = (repo: CatalogRepository) => (params.sort === 'pushed' ? repo.entry?.pushedAt ?? '' : repo.config.name);
    repos.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (params.direction === 'desc' ? -1 : 1));
    const { items, headers } = paginate(repos, params, context.config.publicUrl, '/api/repos', request.query);
    return { status: 200, body: items.map((repo) => describe(repo, context)), headers };
  },
};

export const connectionsRoute: Route = {
  method: 'get',
  path: '/api/connections',
  operationId: 'listConnections',
  tag: 'Repositories',
  summary: 'The code hosts of the repositories the caller can see: one connection per `codeHostType`, its id usable as `connectionId` on /api/repos',
  access: 'read',
  response: { status: 200, schema: ConnectionList, description: 'Connections, by id' },
  errors: ['NOT_AUTHENTICATED'],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const types = new Set(visibleRepositories(caller, context).map((repo) => repo.config.codeHostType));
    const connections = [...types]
      .map((type) => ({ id: connectionId(type), name: type, connectionType: CONNECTION_TYPES[type] }))
      .sort((a, b) => a.id - b.id);
    return { status: 200, body: connections };
  },
};
