/**
 * GET /api/repos: the repositories the caller can see, with their index and sync state, paged;
 * GET /api/connections: where they come from — each configured code host connection (docs/connections.md),
 * and for repositories of the configuration file one connection per `codeHostType`, numbered by that type;
 * POST /api/connections/{id}/sync: a sync now (owners).
 */
import { ApiError } from '../../api/errors.js';
import { ConnectionList, ConnectionSyncAccepted, RepositoryList, ReposQuery } from '../../api/schemas.js';
import { parseQuery, validator } from '../../api/validate.js';
import { CODE_HOST_TYPES } from '../../index/code-host.js';
import type { CodeHostType } from '../../index/model.js';
import type { CatalogRepository } from '../../search/catalog.js';
import { browseRepositoryUrl } from '../../search/links.js';
import { audit, type Caller } from '../access.js';
import { decodePathSegment, type Request } from '../http.js';
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
const hostTypeId = (type: CodeHostType) => CODE_HOST_TYPES.indexOf(type) + 1;

/** The connection a repository is listed under: its configured connection's id, else its code host type's. */
const connectionIdOf = (repo: CatalogRepository, context: ServerContext) =>
  repo.config.connection === undefined ? hostTypeId(repo.config.codeHostType) : (context.connections.repositorySync(repo.config.name)?.connectionId ?? 0);

const visibleRepositories = (caller: Caller, context: ServerContext) => context.catalog().repositories.filter((repo) => caller.canSee(repo.config));

function describe(repo: CatalogRepository, context: ServerContext) {
  const { config, entry } = repo;
  const item: Record<string, unknown> = {
    codeHostType: config.codeHostType,
    repoId: entry?.id ?? context.cluster?.repositoryIds.get(config.name) ?? 0,
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
  item.connectionId = connectionIdOf(repo, context);
  const sync = config.connection === undefined ? undefined : context.connections.repositorySync(config.name);
  if (sync) {
    const { connectionId: _id, ...state } = sync;
    item.syncState = state;
  }
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
        (needle === undefined || repo.config.name.toLowerCase().includes(needle)) &&
        (params.connectionId === undefined || connectionIdOf(repo, context) === params.connectionId),
    );
    const key = (repo: CatalogRepository) => (params.sort === 'pushed' ? (repo.entry?.pushedAt ?? '') : repo.config.name);
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
  summary:
    'The connections of the repositories the caller can see (owners: every configured connection), with their sync state; an id is usable as `connectionId` on /api/repos. Credentials and configuration are never included',
  access: 'read',
  response: { status: 200, schema: ConnectionList, description: 'Connections, by id' },
  errors: ['NOT_AUTHENTICATED'],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const visible = visibleRepositories(caller, context);
    const types = new Set(visible.filter((repo) => repo.config.connection === undefined).map((repo) => repo.config.codeHostType));
    const seen = new Set(visible.map((repo) => repo.config.connection));
    const owner = caller.user?.role === 'owner';
    const configured = context.connections
      .statuses()
      .filter((status) => owner || seen.has(status.name))
      .map((status) => (owner ? status : { ...status, syncState: { ...status.syncState, failedRepos: undefined } }));
    const connections = [...[...types].map((type) => ({ id: hostTypeId(type), name: type, connectionType: CONNECTION_TYPES[type] })), ...configured].sort(
      (a, b) => a.id - b.id,
    );
    return { status: 200, body: connections };
  },
};

export const connectionSyncRoute: Route = {
  method: 'post',
  path: '/api/connections/{id}/sync',
  operationId: 'syncConnection',
  tag: 'Repositories',
  summary: "Lists and fetches the connection's repositories now (after the sync under way, if one is); its progress shows on GET /api/connections",
  access: 'owner',
  response: { status: 202, schema: ConnectionSyncAccepted, description: 'The sync is started or queued' },
  errors: ['NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS', 'INVALID_CSRF_TOKEN', 'NOT_FOUND'],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const base = '/api/connections/';
    const raw = request.path.slice(base.length, -'/sync'.length);
    const segment = decodePathSegment(raw);
    const id = segment !== null && /^[1-9][0-9]{0,8}$/.test(segment) ? Number(segment) : null;
    const name = id === null ? undefined : context.connections.connectionName(id);
    if (name === undefined || !context.connections.syncNow(name))
      throw new ApiError('NOT_FOUND', `no configured connection has the id ${JSON.stringify(segment ?? raw)} (GET /api/connections lists them)`);
    audit(context, caller, 'connection.sync', { id: String(id), type: 'connection' }, { name });
    return { status: 202, body: { id, name, status: 'queued' } };
  },
};
