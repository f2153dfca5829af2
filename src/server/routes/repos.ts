/** GET /api/repos: the repositories the caller can see, with their index state, paged. */
import { RepositoryList, ReposQuery } from '../../api/schemas.js';
import { parseQuery, validator } from '../../api/validate.js';
import type { CatalogRepository } from '../../search/catalog.js';
import { browseRepositoryUrl } from '../../search/links.js';
import type { Caller } from '../access.js';
import type { Request } from '../http.js';
import { paginate } from '../pagination.js';
import type { Route, ServerContext } from '../route.js';

const reposQuery = validator(ReposQuery);

function describe(repo: CatalogRepository, context: ServerContext) {
  const { config, entry } = repo;
  const item: Record<string, unknown> = {
    codeHostType: config.codeHostType,
    repoId: entry?.id ?? 0,
    repoName: config.name,
    webUrl: browseRepositoryUrl(context.config.publicUrl, config.name),
    defaultBranch: 'HEAD',
    branches: (entry?.branches ?? []).map((branch) => branch.name),
    isFork: config.fork,
    isArchived: config.archived,
    isPublic: config.public,
    indexState: context.indexState(config.name),
  };
  if (config.displayName !== undefined) item.repoDisplayName = config.displayName;
  if (config.webUrl !== undefined) item.externalWebUrl = config.webUrl;
  if (entry?.indexedAt !== undefined) item.indexedAt = entry.indexedAt;
  return item;
}

export const reposRoute: Route = {
  method: 'get',
  path: '/api/repos',
  operationId: 'listRepos',
  tag: 'Repositories',
  summary: 'The repositories the caller can see, with their index state; paged, sorted by name or by last index time',
  access: 'read',
  query: ReposQuery,
  response: { status: 200, schema: RepositoryList, description: 'One page of repositories', headers: ['X-Total-Count', 'Link'] },
  errors: ['INVALID_QUERY_PARAMS', 'NOT_AUTHENTICATED'],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const params = parseQuery(reposQuery, request.query);
    const needle = params.query?.toLowerCase();
    const repos = context.pool.currentCatalog.repositories.filter(
      (repo) => caller.canSee(repo.config) && (needle === undefined || repo.config.name.toLowerCase().includes(needle)),
    );
    const key = (repo: CatalogRepository) => (params.sort === 'pushed' ? repo.entry?.indexedAt ?? '' : repo.config.name);
    repos.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (params.direction === 'desc' ? -1 : 1));
    const { items, headers } = paginate(repos, params, context.config.publicUrl, '/api/repos', request.query);
    return { status: 200, body: items.map((repo) => describe(repo, context)), headers };
  },
};
