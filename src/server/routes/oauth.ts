/**
 * OAuth 2.1 for MCP clients (EE; docs/oauth.md), as the MCP authorization
 * specification asks: protected-resource metadata (RFC 9728), authorization
 * server metadata (RFC 8414), dynamic client registration (RFC 7591), the
 * consent of the signed-in person (the web app's /oauth/authorize page calls
 * the two authorization routes), the token endpoint, revocation (RFC 7009).
 * Errors carry both the API's error object and RFC 6749's `error` and
 * `error_description`, so OAuth clients and API clients each read theirs.
 */
import { Type } from '../../api/typebox.js';
import { ApiError, type ErrorCode } from '../../api/errors.js';
import { parseBody, validator } from '../../api/validate.js';
import { OAUTH_SCOPE, OAuthFailure, type OAuthServer } from '../../auth/oauth.js';
import { secureOrLoopback } from '../../config/loopback.js';
import { audit, type Caller } from '../access.js';
import { MCP_RESOURCE_PATH, PROTECTED_RESOURCE_METADATA_PATH } from '../mcp/resource.js';
import type { JsonReply, Request } from '../http.js';
import { addressKey } from '../client-address.js';
import { RateLimiter } from '../rate-limit.js';
import type { Route, ServerContext } from '../route.js';

const TAG = 'OAuth';
/** The browser page that asks the signed-in person to consent (served by the web app). */
const AUTHORIZE_PAGE = '/oauth/authorize';
const MAX_REDIRECT_URIS = 10;
/** A client's redirect URIs together, at most: they travel in its client_id, which must fit in an authorization URL. */
const MAX_REDIRECT_URI_BYTES = 1024;
/** What a client's self-chosen name may not hold: control characters, and bidirectional formatting that would reorder how it reads. */
const UNSHOWABLE_NAME = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

/** Registrations per address: ten in a burst, then one a minute (each writes an audit record; nothing else is kept). */
const registrations = new RateLimiter(1 / 60, 10, 'client registrations per second from this address');

const RegisterRequest = Type.Object(
  {
    redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: MAX_REDIRECT_URIS }),
    client_name: Type.Optional(Type.String({ maxLength: 256 })),
    token_endpoint_auth_method: Type.Optional(Type.Literal('none', { description: 'Clients are public: PKCE instead of a secret' })),
    grant_types: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 8 })),
    response_types: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 8 })),
  },
  { additionalProperties: true },
);
const registerBody = validator(RegisterRequest);
const AuthorizationDecision = Type.Object(
  { params: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 32 }), approve: Type.Boolean() },
  { additionalProperties: false },
);
const decisionBody = validator(AuthorizationDecision);

/** An error with both vocabularies: the API's error object and RFC 6749's fields. */
class OAuthApiError extends ApiError {
  constructor(
    code: ErrorCode,
    readonly oauthError: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(code, message, headers);
  }

  override toBody() {
    return { ...super.toBody(), error: this.oauthError, error_description: this.message };
  }
}

const API_CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_REQUEST_BODY',
  401: 'NOT_AUTHENTICATED',
  403: 'INSUFFICIENT_PERMISSIONS',
  503: 'SERVICE_UNAVAILABLE',
};

/** Runs a step of the OAuth server; its refusals become errors in both vocabularies. */
async function step<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof OAuthFailure)) throw error;
    throw new OAuthApiError(API_CODE_OF_STATUS[error.status] ?? 'INVALID_REQUEST_BODY', error.error, error.message);
  }
}

/** OAuth is an enterprise feature: without an active license every step is refused, saying so. */
function requireLicense(context: ServerContext): void {
  if (!context.auth.activeLicense())
    throw new OAuthApiError(
      'INSUFFICIENT_PERMISSIONS',
      'access_denied',
      'OAuth for MCP clients is an enterprise feature and this instance has no active license: use an API key (Authorization: Bearer trawl_ak_…) or install a license',
    );
}

/** A redirect URI a client may register: https, or http on a loopback address (native apps, RFC 8252); never with a fragment. */
function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${JSON.stringify(uri)} is not an absolute URL`;
  }
  if (url.hash) return `${JSON.stringify(uri)} has a fragment`;
  if (secureOrLoopback(url)) return null;
  return `${JSON.stringify(uri)} must be https, or http on a loopback address`;
}

/** The fields of an application/x-www-form-urlencoded body (the token and revocation endpoints take nothing else). */
function formFields(request: Request): Record<string, string> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '')) {
    throw new OAuthApiError('INVALID_REQUEST_BODY', 'invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  return Object.fromEntries(new URLSearchParams(request.body.toString('utf8')));
}

const noStore = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function server(context: ServerContext): OAuthServer {
  requireLicense(context);
  return context.oauth;
}

/** Protected resource metadata (RFC 9728), at the path-suffixed location the challenge names and at the root, where older clients look. */
const protectedResource = (path: string, operationId: string): Route => ({
  method: 'get',
  path,
  operationId,
  tag: TAG,
  summary: 'Protected resource metadata of the MCP server (RFC 9728)',
  access: 'public',
  response: { status: 200, contentType: 'application/json', description: 'The metadata' },
  errors: [],
  async handle(_request: Request, _caller: Caller, context: ServerContext): Promise<JsonReply> {
    const base = context.config.publicUrl;
    return {
      status: 200,
      body: {
        resource: `${base}${MCP_RESOURCE_PATH}`,
        authorization_servers: [base],
        bearer_methods_supported: ['header'],
        scopes_supported: [OAUTH_SCOPE],
        resource_name: 'trawl',
      },
    };
  },
});
export const protectedResourceRoute = protectedResource(PROTECTED_RESOURCE_METADATA_PATH, 'oauthProtectedResource');
export const protectedResourceRootRoute = protectedResource('/.well-known/oauth-protected-resource', 'oauthProtectedResourceRoot');

export const authorizationServerRoute: Route = {
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  operationId: 'oauthAuthorizationServer',
  tag: TAG,
  summary: 'Authorization server metadata (RFC 8414)',
  access: 'public',
  response: { status: 200, contentType: 'application/json', description: 'The metadata' },
  errors: [],
  async handle(_request: Request, _caller: Caller, context: ServerContext): Promise<JsonReply> {
    const base = context.config.publicUrl;
    return {
      status: 200,
      body: {
        issuer: base,
        authorization_endpoint: `${base}${AUTHORIZE_PAGE}`,
        token_endpoint: `${base}/api/oauth/token`,
        registration_endpoint: `${base}/api/oauth/register`,
        revocation_endpoint: `${base}/api/oauth/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        scopes_supported: [OAUTH_SCOPE],
      },
    };
  },
};

export const registerClientRoute: Route = {
  method: 'post',
  path: '/api/oauth/register',
  operationId: 'oauthRegisterClient',
  tag: TAG,
  summary: 'Dynamic client registration (RFC 7591): public clients only (PKCE, no secret); EE',
  access: 'public',
  body: RegisterRequest,
  response: { status: 201, contentType: 'application/json', description: 'The client: client_id and what was registered' },
  errors: ['INVALID_REQUEST_BODY', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED'],
  async handle(request: Request, caller: Caller, context: ServerContext): Promise<JsonReply> {
    requireLicense(context);
    const body = parseBody(registerBody, request.body);
    // The registration is kept nowhere but in the client_id it answers (auth/oauth.ts): registering costs no state.
    for (const uri of body.redirect_uris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthApiError('INVALID_REQUEST_BODY', 'invalid_redirect_uri', `redirect_uris: ${problem}`);
    }
    const redirectUris = [...new Set(body.redirect_uris)];
    if (Buffer.byteLength(redirectUris.join('')) > MAX_REDIRECT_URI_BYTES)
      throw new OAuthApiError('INVALID_REQUEST_BODY', 'invalid_redirect_uri', `redirect_uris: at most ${MAX_REDIRECT_URI_BYTES} bytes in all`);
    const name = body.client_name?.trim() || 'MCP client';
    if (UNSHOWABLE_NAME.test(name))
      throw new OAuthApiError(
        'INVALID_REQUEST_BODY',
        'invalid_client_metadata',
        'client_name: control characters and bidirectional formatting characters are not allowed',
      );
    registrations.takeFor(addressKey(request.remoteAddress));
    const client = server(context).register(name, redirectUris);
    audit(
      context,
      caller,
      'oauth.client.registered',
      { id: client.id, type: 'oauthClient' },
      { name: client.name, redirectUris: client.redirectUris, remoteAddress: request.remoteAddress },
    );
    return {
      status: 201,
      body: {
        client_id: client.id,
        client_id_issued_at: Math.floor(client.createdAt / 1000),
        client_name: client.name,
        redirect_uris: client.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      headers: noStore,
    };
  },
};

/** Checks an authorization request before the person is asked (auth/oauth.ts), and that its resource, when named, is this MCP server (RFC 8707). */
async function checkAuthorizationRequest(context: ServerContext, params: Record<string, string>) {
  const checked = await step(() => server(context).checkRequest(params));
  const resource = `${context.config.publicUrl}${MCP_RESOURCE_PATH}`;
  if (params.resource !== undefined && params.resource !== resource && params.resource !== context.config.publicUrl) {
    throw new OAuthApiError('INVALID_REQUEST_BODY', 'invalid_target', `resource must be ${resource}`);
  }
  return checked;
}

const AUTHORIZATION_PATH = '/api/oauth/authorization';

export const describeAuthorizationRoute: Route = {
  method: 'get',
  path: AUTHORIZATION_PATH,
  operationId: 'oauthDescribeAuthorization',
  tag: TAG,
  summary: 'What an authorization request asks (the consent page shows it): the client, where it returns to, the scope; EE',
  access: 'user',
  response: { status: 200, contentType: 'application/json', description: 'The request, checked' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS'],
  async handle(request: Request, _caller: Caller, context: ServerContext): Promise<JsonReply> {
    const params = Object.fromEntries(new URLSearchParams(request.query));
    const { client, redirectUri } = await checkAuthorizationRequest(context, params);
    // A name registered before such characters were refused is shown with them replaced.
    const clientName = client.name.replace(new RegExp(UNSHOWABLE_NAME, 'g'), '\ufffd');
    return {
      status: 200,
      body: { clientId: client.id, clientName, redirectUri, scope: OAUTH_SCOPE, registeredAt: new Date(client.createdAt).toISOString() },
      headers: noStore,
    };
  },
};

export const decideAuthorizationRoute: Route = {
  method: 'post',
  path: AUTHORIZATION_PATH,
  operationId: 'oauthDecideAuthorization',
  tag: TAG,
  summary: "The signed-in person's answer to an authorization request: where to send the browser (the client's redirect URI with a code, or access_denied); EE",
  access: 'user',
  body: AuthorizationDecision,
  response: { status: 200, contentType: 'application/json', description: '{ redirect }' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS', 'INVALID_CSRF_TOKEN'],
  async handle(request: Request, caller: Caller, context: ServerContext): Promise<JsonReply> {
    const { params, approve } = parseBody(decisionBody, request.body);
    const { client } = await checkAuthorizationRequest(context, params);
    if (caller.credential?.kind !== 'session')
      throw new OAuthApiError('INSUFFICIENT_PERMISSIONS', 'access_denied', 'only a person signed in to the web app can approve an authorization');
    const redirect = await step(() => server(context).authorize(params, caller.user!.id, approve));
    audit(context, caller, approve ? 'oauth.approved' : 'oauth.denied', { id: client.id, type: 'oauthClient' }, { name: client.name });
    return { status: 200, body: { redirect }, headers: noStore };
  },
};

export const tokenRoute: Route = {
  method: 'post',
  path: '/api/oauth/token',
  operationId: 'oauthToken',
  tag: TAG,
  summary: 'The token endpoint: authorization_code (with code_verifier) or refresh_token (rotated: each is used once); form-encoded; EE',
  access: 'public',
  response: { status: 200, contentType: 'application/json', description: 'access_token (trawl_oa_…, one hour), refresh_token (trawl_or_…), token_type Bearer' },
  errors: ['INVALID_REQUEST_BODY', 'NOT_AUTHENTICATED', 'INSUFFICIENT_PERMISSIONS'],
  async handle(request: Request, _caller: Caller, context: ServerContext): Promise<JsonReply> {
    const oauth = server(context);
    return { status: 200, body: await step(() => oauth.token(formFields(request))), headers: noStore };
  },
};

export const revokeRoute: Route = {
  method: 'post',
  path: '/api/oauth/revoke',
  operationId: 'oauthRevoke',
  tag: TAG,
  summary: 'Token revocation (RFC 7009): an access or refresh token ends with its pair; an unknown token is no error; form-encoded',
  access: 'public',
  response: { status: 200, contentType: 'application/json', description: 'Done (whether or not the token was live)' },
  errors: ['INVALID_REQUEST_BODY'],
  async handle(request: Request, caller: Caller, context: ServerContext): Promise<JsonReply> {
    const { token } = formFields(request);
    if (!token) throw new OAuthApiError('INVALID_REQUEST_BODY', 'invalid_request', 'the token field is required');
    if (await context.auth.oauth.revokeToken(token))
      audit(context, caller, 'oauth.revoked', { id: null, type: 'oauthGrant' }, { remoteAddress: request.remoteAddress });
    return { status: 200, body: {}, headers: noStore };
  },
};
