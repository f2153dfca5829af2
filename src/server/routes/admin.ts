/**
 * Administration beyond spec/api.md (what `trawl admin` calls against a
 * running daemon): API keys (each user their own; owners anyone's),
 * repository grants, the anonymous-access setting and the license (owners).
 */
import {
  ApiKeyList,
  ApiKeysQuery,
  CreateApiKeyRequest,
  CreatedApiKey,
  GrantQuery,
  GrantRequest,
  InstallLicenseRequest,
  LicenseResponse,
  Settings,
  Success,
} from '../../api/auth-schemas.js';
import { ApiError } from '../../api/errors.js';
import { listedRepository } from '../../search/catalog.js';
import { parseBody, parseQuery, validator } from '../../api/validate.js';
import { apiKeyView } from '../../auth/views.js';
import { audit, type Caller } from '../access.js';
import type { Request } from '../http.js';
import type { Route, ServerContext } from '../route.js';
import { deleteByIdRoute } from './delete-by-id.js';

const TAG = 'Administration';
const KEYS_PATH = '/api/admin/api_keys';
const CREDENTIAL_ERRORS = ['NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS'] as const;
const createKeyBody = validator(CreateApiKeyRequest);
const keysQuery = validator(ApiKeysQuery);
const grantBody = validator(GrantRequest);
const settingsBody = validator(Settings);
const licenseBody = validator(InstallLicenseRequest);

/** The user an API-key caller acts for: themselves, or (owners only) the one named. */
function subject(caller: Caller, userId: string | undefined): string {
  if (userId === undefined || userId === caller.user!.id) return caller.user!.id;
  if (caller.user!.role !== 'owner') throw new ApiError('INSUFFICIENT_PERMISSIONS', 'only owners may manage the API keys of other users');
  return userId;
}

export const createApiKeyRoute: Route = {
  method: 'post',
  path: KEYS_PATH,
  operationId: 'createApiKey',
  tag: TAG,
  summary: 'Create an API key for yourself (owners: for any member)',
  access: 'user',
  body: CreateApiKeyRequest,
  response: { status: 201, schema: CreatedApiKey, description: 'The key; its secret is shown this once' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_FOUND', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { name, userId } = parseBody(createKeyBody, request.body);
    const { key, secret } = await context.auth.createApiKey(subject(caller, userId), name);
    audit(context, caller, 'apikey.created', { id: key.id, type: 'apiKey' }, { userId: key.userId, name });
    return { status: 201, body: { ...apiKeyView(key), key: secret } };
  },
};

export const listApiKeysRoute: Route = {
  method: 'get',
  path: KEYS_PATH,
  operationId: 'listApiKeys',
  tag: TAG,
  summary: 'Your API keys (owners: any member’s, or everyone’s with userId=*); never their secrets',
  access: 'user',
  query: ApiKeysQuery,
  response: { status: 200, schema: ApiKeyList, description: 'The keys' },
  errors: ['INVALID_QUERY_PARAMS', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { userId } = parseQuery(keysQuery, request.query);
    const whose = subject(caller, userId); // '*' (owners only): every member's
    const keys = [...context.auth.state.apiKeys.values()].filter((key) => whose === '*' || key.userId === whose);
    return { status: 200, body: keys.map((key) => apiKeyView(key, context.auth.keyLastUsedAt(key.id))) };
  },
};

export const deleteApiKeyRoute = deleteByIdRoute({
  base: KEYS_PATH,
  operationId: 'deleteApiKey',
  tag: TAG,
  summary: 'Delete one of your API keys (owners: anyone’s); it stops working at once',
  access: 'user',
  errors: ['NOT_FOUND', ...CREDENTIAL_ERRORS],
  remove: (caller, context, id) => context.auth.deleteApiKey(id, caller.user!.role === 'owner' ? undefined : caller.user!.id),
  notFound: (shown) => new ApiError('NOT_FOUND', `no API key ${shown} of yours`),
  audited: { action: 'apikey.deleted', targetType: 'apiKey' },
});

const grantQuery = validator(GrantQuery);

/** POST (body) grants, DELETE (query string: DELETE requests carry no body) takes back. */
function grantRoute(method: 'post' | 'delete'): Route {
  const granted = method === 'post';
  return {
    method,
    path: '/api/admin/grants',
    operationId: granted ? 'grantRepository' : 'revokeRepository',
    tag: TAG,
    summary: granted ? 'Let a member see a repository that is not public' : 'Take back a grant',
    access: 'owner',
    ...(granted ? { body: GrantRequest } : { query: GrantQuery }),
    response: { status: 200, schema: Success, description: 'Done' },
    errors: [granted ? 'INVALID_REQUEST_BODY' : 'INVALID_QUERY_PARAMS', 'NOT_FOUND', ...CREDENTIAL_ERRORS],
    async handle(request: Request, caller: Caller, context: ServerContext) {
      const { userId, repo } = granted ? parseBody(grantBody, request.body) : parseQuery(grantQuery, request.query);
      const entry = listedRepository(context.catalog(), repo)?.entry;
      if (!entry) throw new ApiError('NOT_FOUND', `repository ${JSON.stringify(repo)} is not configured or not indexed yet`);
      await context.auth.setGrant(userId, entry.id, granted);
      audit(context, caller, granted ? 'grant.added' : 'grant.removed', { id: userId, type: 'user' }, { repo });
      return { status: 200, body: { success: true, message: `${repo} ${granted ? 'granted to' : 'no longer granted to'} ${userId}` } };
    },
  };
}

export const addGrantRoute = grantRoute('post');
export const removeGrantRoute = grantRoute('delete');

export const getSettingsRoute: Route = {
  method: 'get',
  path: '/api/admin/settings',
  operationId: 'getSettings',
  tag: TAG,
  summary: 'Instance settings',
  access: 'owner',
  response: { status: 200, schema: Settings, description: 'The settings in effect' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, _caller: Caller, context: ServerContext) {
    return { status: 200, body: { anonymousAccess: context.auth.anonymousAccess(context.config.auth.anonymousAccess) } };
  },
};

export const setSettingsRoute: Route = {
  method: 'post',
  path: '/api/admin/settings',
  operationId: 'setSettings',
  tag: TAG,
  summary: 'Change instance settings (anonymous access); overrides the config file’s auth.anonymousAccess',
  access: 'owner',
  body: Settings,
  response: { status: 200, schema: Settings, description: 'The settings in effect' },
  errors: ['INVALID_REQUEST_BODY', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { anonymousAccess } = parseBody(settingsBody, request.body);
    await context.auth.setAnonymousAccess(anonymousAccess);
    audit(context, caller, 'settings.changed', { id: null, type: null }, { anonymousAccess });
    return { status: 200, body: { anonymousAccess } };
  },
};

export const getLicenseRoute: Route = {
  method: 'get',
  path: '/api/admin/license',
  operationId: 'getLicense',
  tag: TAG,
  summary: 'The installed license and the seats in use',
  access: 'owner',
  response: { status: 200, schema: LicenseResponse, description: 'The license status' },
  errors: [...CREDENTIAL_ERRORS],
  async handle(_request: Request, _caller: Caller, context: ServerContext) {
    return { status: 200, body: context.auth.licenseStatus() };
  },
};

export const installLicenseRoute: Route = {
  method: 'post',
  path: '/api/admin/license',
  operationId: 'installLicense',
  tag: TAG,
  summary: 'Install a license key (trawl_license_…); it replaces the one before',
  access: 'owner',
  body: InstallLicenseRequest,
  response: { status: 200, schema: LicenseResponse, description: 'The license status' },
  errors: ['INVALID_REQUEST_BODY', ...CREDENTIAL_ERRORS],
  async handle(request: Request, caller: Caller, context: ServerContext) {
    const { key } = parseBody(licenseBody, request.body);
    const license = await context.auth.installLicense(key);
    audit(context, caller, 'license.installed', { id: null, type: null }, { licensee: license.licensee, seats: license.seats, expiresAt: license.expiresAt });
    return { status: 200, body: context.auth.licenseStatus() };
  },
};
