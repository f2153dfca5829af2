/**
 * The authentication and visibility decision, in one place: every route gets
 * its Caller from `authorize`, and asks the Caller what it may see.
 *
 * Credentials: `Authorization: Bearer <API key | scoped token>`, or
 * `X-Service-Api-Key: <API key>` (also read as `X-Sourcebot-Api-Key`, the
 * name Sourcebot's own clients send), or without either the sign-in
 * session's cookie (its writes need the CSRF token: docs/sessions.md). An invalid, expired, revoked or
 * removed-user credential counts as none (audited as a failed
 * authentication): read endpoints then serve the caller anonymously when the
 * instance allows it, and answer 401 otherwise. A scoped token in an API
 * key header is refused outright. Failed authentications have a budget per
 * address (FAILED_AUTHENTICATIONS); past it they are answered 429 and not
 * audited, so guessing is slow and the audit log cannot be flooded.
 */
import { ApiError } from '../api/errors.js';
import type { Operation } from '../api/openapi.js';
import type { AuditAction } from '../auth/audit-actions.js';
import { credentialRecord, type Credential, type User } from '../auth/model.js';
import type { RepositoryConfig } from '../config/config.js';
import type { Catalog } from '../search/catalog.js';
import type { Request } from './http.js';
import { FAILED_AUTHENTICATIONS, RateLimiter } from './rate-limit.js';
import { secureCookies, sessionSecretOf } from './session-cookie.js';
import { MCP_RESOURCE_PATH, PROTECTED_RESOURCE_METADATA_PATH } from './mcp/resource.js';
import type { ServerContext } from './route.js';
import { addressKey } from './client-address.js';
import { ON_BEHALF_OF_HEADER } from '../cluster/fan-out.js';
import { CLUSTER_KEY_HEADER } from '../cluster/peer-client.js';

/**
 * Who may call a route: anyone ('public': health, version, OpenAPI, sign-in);
 * readers, anonymous when allowed ('read'); a user's API key or session
 * ('user': their keys, tokens, sessions); a user's API key ('apiKey': token
 * creation); an owner's API key or session ('owner': users, audit, settings).
 */
export type Access = Operation['access'];

export interface Caller {
  kind: 'anonymous' | Credential['kind'];
  credential: Credential | null;
  /** The user behind the credential; null for anonymous callers. */
  user: User | null;
  canSee(repo: RepositoryConfig): boolean;
  /** False once the credential was revoked, expired or its user removed (open streams and MCP sessions end then). */
  stillValid(): boolean;
  /** Set when another node of the cluster asks on behalf of its caller (peer-forward.ts): who that was, for the audit trail. */
  onBehalfOf?: Actor;
}

export interface Actor {
  actorId: string | null;
  actorType: 'user' | 'anonymous';
}

const BEARER = /^bearer\s+(\S+)\s*$/i;
/** The API key headers, in the order they are read: trawl's name, then Sourcebot's. */
const API_KEY_HEADERS = ['X-Service-Api-Key', 'X-Sourcebot-Api-Key'] as const;

/** What a request presents: a secret in a header (which one), else its session cookie's secret. */
interface Presented {
  secret: string | undefined;
  bearer: string | undefined;
  keyHeader: string | undefined;
  cookie: string | undefined;
}

/**
 * The Caller of `request` for `operation`; NOT_AUTHENTICATED or INSUFFICIENT_PERMISSIONS when it may not call it.
 * Decided at once on a single node; in a cluster after the credential log is waited for (when it may be behind).
 */
export function authorize(context: ServerContext, operation: Pick<Operation, 'access' | 'ee'>, request: Request): Caller | Promise<Caller> {
  if (operation.access === 'public') return anonymousCaller;
  if (request.headers[CLUSTER_KEY_HEADER] !== undefined) return peerCaller(context, operation, request);
  const { auth } = context;
  // Requests hold header names in lower case.
  const keyHeader = API_KEY_HEADERS.find((name) => request.headers[name.toLowerCase()] !== undefined);
  const bearer = BEARER.exec(request.headers.authorization ?? '')?.[1];
  const secret = bearer ?? (keyHeader && request.headers[keyHeader.toLowerCase()]);
  // A credential sent in a header is the request's; the session cookie counts only without one.
  const cookie = secret === undefined ? sessionSecretOf(request.headers, secureCookies(context.config.publicUrl)) : undefined;
  const presented = { secret, bearer, keyHeader, cookie };
  const lookup = () => (secret !== undefined ? auth.authenticate(secret) : cookie !== undefined ? auth.authenticateSession(cookie) : null);
  const { access, ee } = operation;
  if (!auth.log.shared) return callerOf(context, access, ee, request, presented, lookup());
  return (async () => {
    // Managing credentials sees every change a node acknowledged before: a key made on one node is listed on the next.
    if (access !== 'read') await auth.log.latest();
    if (secret === undefined && cookie === undefined) return callerOf(context, access, ee, request, presented, null);
    // A credential made on another node a moment ago may not have arrived yet: it is waited for, briefly, unless its
    // address has spent its failed authentications (a guesser holds no connection open for the wait).
    const waitMs = failedAuthentications.allows(addressKey(request.remoteAddress)) ? undefined : 0;
    return callerOf(context, access, ee, request, presented, await auth.log.eventually(lookup, waitMs));
  })();
}

/** The Caller that presented `presented`, found to be `credential` (null: none, or not a live one). */
function callerOf(
  context: ServerContext,
  access: Exclude<Access, 'public'>,
  ee: boolean | undefined,
  request: Request,
  { secret, bearer, keyHeader, cookie }: Presented,
  credential: Credential | null,
): Caller {
  const { auth } = context;
  if (secret !== undefined && !credential) {
    // Past the address's budget: 429, and no audit record (4 MB in 5 s from one connection before).
    failedAuthentications.takeFor(addressKey(request.remoteAddress));
    const header = bearer !== undefined ? 'authorization' : keyHeader!.toLowerCase();
    audit(
      context,
      anonymousCaller,
      'auth.failed',
      { id: null, type: null },
      { header, path: request.path, remoteAddress: request.remoteAddress, requestId: request.requestId },
    );
  }
  if (credential?.kind === 'scopedToken' && bearer === undefined) {
    throw new ApiError('NOT_AUTHENTICATED', `${keyHeader} takes API keys only; send a scoped access token as Authorization: Bearer <token>`);
  }
  if (!credential) {
    if (access === 'read' && auth.anonymousAccess(context.config.auth.anonymousAccess)) return anonymousCaller;
    const why = secret === undefined && cookie === undefined ? 'no credential was sent' : 'the credential is invalid, expired or revoked';
    const anonymous = access === 'read' ? 'anonymous access is off' : 'this endpoint never allows anonymous access';
    // MCP clients find the OAuth authorization server from this challenge (RFC 9728, the MCP authorization specification).
    const challenge: Record<string, string> =
      request.path === MCP_RESOURCE_PATH
        ? { 'WWW-Authenticate': `Bearer resource_metadata="${context.config.publicUrl}${PROTECTED_RESOURCE_METADATA_PATH}"` }
        : {};
    throw new ApiError('NOT_AUTHENTICATED', `${why} and ${anonymous}: send Authorization: Bearer <API key>, or sign in`, challenge);
  }
  if (credential.kind === 'session' && !SAFE_METHODS.has(request.method)) checkCsrf(context, request, cookie!);
  if (!ACCEPTS[access].includes(credential.kind)) throw new ApiError('INSUFFICIENT_PERMISSIONS', REFUSAL[access]);
  if (access === 'owner' && credential.user.role !== 'owner') throw new ApiError('INSUFFICIENT_PERMISSIONS', 'only owners may call this endpoint');
  if (ee && !auth.activeLicense())
    throw new ApiError('INSUFFICIENT_PERMISSIONS', 'this is an enterprise endpoint and the instance has no active license (trawl admin license install)');
  return {
    kind: credential.kind,
    credential,
    user: credential.user,
    canSee: (repo) =>
      auth.canSee(credential, {
        id: repositoryIds(context.catalog()).get(repo.name) ?? context.cluster?.repositoryIds.get(repo.name) ?? -1,
        public: repo.public,
      }),
    stillValid: () => auth.stillValid(credential),
  };
}

/** The credentials each access level takes: a session wherever an API key reads or manages the user's own things; token creation needs an API key (spec §5). */
const ACCEPTS: Record<Exclude<Access, 'public'>, readonly Credential['kind'][]> = {
  read: ['apiKey', 'scopedToken', 'session', 'oauth'],
  user: ['apiKey', 'session'],
  apiKey: ['apiKey'],
  owner: ['apiKey', 'session'],
};
const REFUSAL: Record<Exclude<Access, 'public'>, string> = {
  read: '',
  user: 'this endpoint needs an API key or a signed-in session; a scoped access token cannot call it',
  apiKey: 'this endpoint needs an API key; a scoped access token cannot call it, nor can a signed-in session',
  owner: 'this endpoint needs an owner’s API key or signed-in session; a scoped access token cannot call it',
};

const SAFE_METHODS = new Set(['get', 'head']);
const CSRF_HEADER = 'x-csrf-token';

/**
 * A cookie-authenticated write must come from this server's own pages: the
 * browser's Origin must be present (checkHostAndOrigin has checked it is
 * this server's) and the session's CSRF token sent in X-CSRF-Token.
 */
function checkCsrf(context: ServerContext, request: Request, sessionSecret: string): void {
  if (request.headers.origin === undefined) throw new ApiError('INVALID_CSRF_TOKEN', 'a signed-in write must carry the Origin header of this server’s pages');
  const token = request.headers[CSRF_HEADER];
  if (token === undefined || !context.auth.validCsrfToken(sessionSecret, token)) {
    throw new ApiError('INVALID_CSRF_TOKEN', 'a signed-in write must carry the session’s X-CSRF-Token (GET /api/auth/session)');
  }
}

const failedAuthentications = new RateLimiter(
  FAILED_AUTHENTICATIONS.perSecond,
  FAILED_AUTHENTICATIONS.burst,
  'failed authentications per second from this address',
);

/** The caller without a credential. */
export const anonymousCaller: Caller = { kind: 'anonymous', credential: null, user: null, canSee: (repo) => repo.public, stillValid: () => true };

const idsByCatalog = new WeakMap<Catalog, Map<string, number>>();

/** Repository name → id (the manifest's), for the catalog searched now. */
function repositoryIds(catalog: Catalog): Map<string, number> {
  let ids = idsByCatalog.get(catalog);
  if (!ids) {
    ids = new Map(catalog.repositories.flatMap((repo) => (repo.entry ? [[repo.config.name, repo.entry.id] as const] : [])));
    idsByCatalog.set(catalog, ids);
  }
  return ids;
}

/**
 * Another node of the cluster, reading for its caller (peer-forward.ts): it presents the cluster key, may read every
 * repository (its own node decided what its caller may see), and reads only.
 */
function peerCaller(context: ServerContext, operation: Pick<Operation, 'access'>, request: Request): Caller {
  checkClusterKey(context, request);
  if (operation.access !== 'read') throw new ApiError('INSUFFICIENT_PERMISSIONS', 'a node of the cluster may only read from another');
  return { ...anonymousCaller, canSee: () => true, onBehalfOf: actorFrom(request.headers[ON_BEHALF_OF_HEADER]) };
}

/**
 * NOT_AUTHENTICATED unless the request presents this node's cluster key. A wrong key counts against the address's
 * budget of failed authentications, so guessing it is slowed as guessing a credential is.
 */
export function checkClusterKey(context: ServerContext, request: Request): void {
  const presented = request.headers[CLUSTER_KEY_HEADER];
  if (presented !== undefined && context.cluster?.node.keyMatches(presented)) return;
  if (presented !== undefined) failedAuthentications.takeFor(addressKey(request.remoteAddress));
  throw new ApiError('NOT_AUTHENTICATED', `send this cluster's key in ${CLUSTER_KEY_HEADER}`);
}

/** The actor a peer names in ON_BEHALF_OF_HEADER; anonymous when it names none that is well formed. */
function actorFrom(header: string | undefined): Actor {
  try {
    const actor = JSON.parse(header ?? 'null') as Actor | null;
    if (actor?.actorType === 'user' && typeof actor.actorId === 'string') return { actorId: actor.actorId, actorType: 'user' };
  } catch {
    // malformed: anonymous
  }
  return { actorId: null, actorType: 'anonymous' };
}

/** What an audit record says about who acted. */
export function actorOf(caller: Caller): Actor {
  if (caller.onBehalfOf) return caller.onBehalfOf;
  return caller.user ? { actorId: caller.user.id, actorType: 'user' } : { actorId: null, actorType: 'anonymous' };
}

/** Records what `caller` did to a target in the audit trail. */
export function audit(
  context: ServerContext,
  caller: Caller,
  action: AuditAction,
  target: { id: string | null; type: string | null },
  metadata: Record<string, unknown> = {},
): void {
  const credential = caller.credential ? { credential: caller.credential.kind, credentialId: credentialRecord(caller.credential).id } : {};
  context.audit.record({ action, ...actorOf(caller), targetId: target.id, targetType: target.type, metadata: { ...credential, ...metadata } });
}
