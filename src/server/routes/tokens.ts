/** Scoped access tokens (spec/api.md §5): create (API keys only), revoke and list the caller's own (API keys or a signed-in session, never a scoped token); EE. */
import { CreatedToken, CreateTokenRequest, TokenList } from '../../api/auth-schemas.js';
import { ApiError } from '../../api/errors.js';
import { parseBody, validator } from '../../api/validate.js';
import type { ScopedToken } from '../../auth/model.js';
import { iso } from '../../auth/views.js';
import { audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import type { Route, ServerContext } from '../route.js';
import { deleteByIdRoute } from './delete-by-id.js';

const createBody = validator(CreateTokenRequest);
const TAG = 'Scoped Access Tokens';
const TOKEN_PATH = '/api/ee/scoped_access_token';
const CREDENTIAL_ERRORS = ['NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS'] as const;

/** A token as listed: its scope by id with the names the repositories have now. */
function describe(token: ScopedToken, context: ServerContext) {
  const names = new Map(context.catalog().repositories.flatMap((repo) => (repo.entry ? [[repo.entry.id, repo.config.name] as const] : [])));
  return {
    id: token.id,
    createdAt: iso(token.createdAt),
    expiresAt: iso(token.expiresAt),
    ...(token.revokedAt !== undefined ? { revokedAt: iso(token.revokedAt) } : {}),
    repos: token.repoIds.map((id) => ({ id, name: names.get(id) ?? '' })),
  };
}

export const createTokenRoute: Route = {
  method: 'post',
  path: TOKEN_PATH,
  operationId: 'createScopedAccessToken',
  tag: TAG,
  summary: 'Create a scoped access token for repositories the caller can see; it expires exactly one hour later',
  access: 'apiKey',
  ee: true,
  body: CreateTokenRequest,
  response: { status: 201, schema: CreatedToken, description: 'The token; its secret is shown this once' },
  errors: ['INVALID_REQUEST_BODY', 'INVALID_REPOSITORY_SCOPE', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { repos, repoIds } = parseBody(createBody, request.body);
    if ((repos === undefined) === (repoIds === undefined))
      throw new ApiError('INVALID_REQUEST_BODY', 'request body: send exactly one of `repos` (names) and `repoIds` (ids)');
    const { repositories } = context.catalog();
    const scope = [...new Set<string | number>(repos ?? repoIds)].map((wanted) => {
      const repo = repositories.find((candidate) => (repos ? candidate.config.name : candidate.entry?.id) === wanted);
      const what = `repository ${JSON.stringify(wanted)}`;
      if (!repo || !caller.canSee(repo.config)) throw new ApiError('INVALID_REPOSITORY_SCOPE', `${what} is not one you can see`);
      if (!repo.entry) throw new ApiError('INVALID_REPOSITORY_SCOPE', `${what} is not indexed yet; try again once it is`);
      return { id: repo.entry.id, name: repo.config.name };
    });
    const ids = scope.map((repo) => repo.id);
    const { token, secret } = await context.auth.createToken(caller.user!.id, ids);
    audit(context, caller, 'token.created', { id: token.id, type: 'scopedToken' }, { repos: scope.map((repo) => repo.name) });
    return { status: 201, body: { id: token.id, token: secret, createdAt: iso(token.createdAt), expiresAt: iso(token.expiresAt), repos: scope, repoIds: ids } };
  },
};

export const revokeTokenRoute = deleteByIdRoute({
  base: TOKEN_PATH,
  operationId: 'revokeScopedAccessToken',
  tag: TAG,
  summary:
    'Revoke one of your live scoped access tokens (a revoked or expired one is not found); the very next request with it fails, and open streams and MCP sessions using it end',
  access: 'user',
  ee: true,
  errors: ['SCOPED_ACCESS_TOKEN_NOT_FOUND', ...CREDENTIAL_ERRORS],
  remove: (caller, context, id) => context.auth.revokeToken(caller.user!.id, id),
  notFound: (shown) => new ApiError('SCOPED_ACCESS_TOKEN_NOT_FOUND', `you have no live scoped access token ${shown} (unknown, revoked or expired)`),
  audited: { action: 'token.revoked', targetType: 'scopedToken' },
});

export const listTokensRoute: Route = {
  method: 'get',
  path: '/api/ee/scoped_access_tokens',
  operationId: 'listScopedAccessTokens',
  tag: TAG,
  summary: 'Your scoped access tokens (never their secrets), newest first',
  access: 'user',
  ee: true,
  response: { status: 200, schema: TokenList, description: 'Your tokens' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, caller: Caller, context: ServerContext) {
    const mine = [...context.auth.state.tokens.values()].filter((token) => token.userId === caller.user!.id);
    return { status: 200, body: mine.sort((a, b) => b.createdAt - a.createdAt).map((token) => describe(token, context)) };
  },
};
