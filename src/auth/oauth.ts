/**
 * OAuth 2.1 for MCP clients (EE; docs/oauth.md): the authorization code
 * grant with PKCE S256 and rotating refresh tokens, done by
 * @node-oauth/oauth2-server over trawl's state. Clients register
 * themselves (RFC 7591) and are public (no secret); nothing is kept per
 * registration: the client's name and redirect URIs are sealed into its
 * client_id. Codes live in memory for five minutes; tokens are `trawl_oa_…`
 * (one hour) and `trawl_or_…` (30 days, used once), stored as HMACs in the
 * state log.
 */
import type OAuth2Server from '@node-oauth/oauth2-server';
import { randomBytes, randomUUID } from 'node:crypto';
import { OAUTH_ACCESS_LIFETIME_MS, OAUTH_REFRESH_LIFETIME_MS, type OAuthClient } from './model.js';
import { newSecret, seal, unseal } from './secrets.js';
import type { AuthStore } from './store.js';

/** The one scope: use trawl's MCP server and read API as the person who consented. */
export const OAUTH_SCOPE = 'mcp';
const CODE_LIFETIME_SECONDS = 300;
/** Codes issued and not yet exchanged, at most. */
const MAX_PENDING_CODES = 1_000;
/** Exchanged codes remembered (for their lifetime) so that a replay revokes what they issued; past it the oldest are forgotten. */
const MAX_USED_CODES = 10_000;

/** A registered client's id: this prefix, then its registration sealed under a key derived from the instance key. */
const CLIENT_ID_PREFIX = 'trawl_oc_';
const CLIENT_SEAL_CONTEXT = 'trawl oauth client';
/** A client_id longer than this is none of ours (it must fit in an authorization URL). */
const MAX_CLIENT_ID_CHARACTERS = 2048;

/** A refusal in RFC 6749's terms: `error` (e.g. invalid_grant) and the HTTP status to answer. */
export class OAuthFailure extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'OAuthFailure';
  }
}

interface PendingCode extends OAuth2Server.AuthorizationCode {
  userId: string;
  /** The authorization's grants descend from this code: its refreshes carry the id on. */
  familyId: string;
}

/** The user object the library hands back to saveToken: who, and which authorization the grant belongs to. */
interface GrantUser {
  id: string;
  familyId: string;
}

/** The library's refusals as OAuthFailure; anything else as it was. */
const asFailure = (Library: Library, error: unknown): unknown =>
  error instanceof Library.OAuthError ? new OAuthFailure(error.name, error.message, error.code) : error;

/** The library, loaded at the first OAuth step, not at start (it costs the start ~45 ms). */
type Library = typeof OAuth2Server;
let library: Promise<Library> | null = null;
const oauthLibrary = () => (library ??= import('@node-oauth/oauth2-server').then((loaded) => loaded.default));

export class OAuthServer {
  private readonly codes = new Map<string, PendingCode>();
  /** Exchanged codes → their authorization (familyId) and when the code would have expired. */
  private readonly usedCodes = new Map<string, { familyId: string; expiresAt: number }>();
  private server: Promise<{ oauth: OAuth2Server; Library: Library }> | null = null;

  private readonly clientKey: Buffer;

  constructor(private readonly store: AuthStore) {
    this.clientKey = store.keyFor('oauth clients');
  }

  /** A client registered now (RFC 7591): nothing is kept, its client_id carries its name and redirect URIs, sealed. */
  register(name: string, redirectUris: string[]): OAuthClient {
    const createdAt = Date.now();
    const id = CLIENT_ID_PREFIX + seal(this.clientKey, CLIENT_SEAL_CONTEXT, JSON.stringify({ name, redirectUris, createdAt }));
    return { id, name, redirectUris, createdAt };
  }

  private library(): Promise<{ oauth: OAuth2Server; Library: Library }> {
    this.server ??= oauthLibrary().then((Library) => ({
      Library,
      oauth: new Library({
        model: this.model(),
        requireClientAuthentication: { authorization_code: false, refresh_token: false },
        accessTokenLifetime: OAUTH_ACCESS_LIFETIME_MS / 1000,
        refreshTokenLifetime: OAUTH_REFRESH_LIFETIME_MS / 1000,
        alwaysIssueNewRefreshToken: true,
        // OAuth 2.1: with PKCE, state is the client's own business.
        allowEmptyState: true,
      }),
    }));
    return this.server;
  }

  /** The registered client `clientId` (sealed here, or registered in the state log by an earlier trawl), or null. */
  client(clientId: string): OAuthClient | null {
    const recorded = this.store.state.oauthClients.get(clientId);
    if (recorded) return recorded;
    if (!clientId.startsWith(CLIENT_ID_PREFIX) || clientId.length > MAX_CLIENT_ID_CHARACTERS) return null;
    const text = unseal(this.clientKey, CLIENT_SEAL_CONTEXT, clientId.slice(CLIENT_ID_PREFIX.length));
    if (text === null) return null;
    const { name, redirectUris, createdAt } = JSON.parse(text) as Omit<OAuthClient, 'id'>;
    return { id: clientId, name, redirectUris, createdAt };
  }

  /**
   * The client and redirect URI of an authorization request, checked before
   * anyone is asked: a registered client, a redirect URI it registered (no
   * open redirect), `response_type=code`, PKCE with S256. OAuthFailure otherwise.
   */
  checkRequest(params: Record<string, string>): { client: OAuthClient; redirectUri: string } {
    const client = this.client(params.client_id ?? '');
    if (!client) throw new OAuthFailure('invalid_client', `unknown client_id ${JSON.stringify(params.client_id ?? '')}: register first`);
    const redirectUri = params.redirect_uri ?? client.redirectUris[0]!;
    if (!client.redirectUris.includes(redirectUri))
      throw new OAuthFailure('invalid_request', `redirect_uri ${JSON.stringify(redirectUri)} is not one this client registered`);
    if (params.response_type !== 'code') throw new OAuthFailure('unsupported_response_type', 'response_type must be code');
    if (!params.code_challenge || params.code_challenge_method !== 'S256')
      throw new OAuthFailure('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
    return { client, redirectUri };
  }

  /**
   * The redirect that answers an authorization request `params` for a member
   * who approved it (`approved`) or refused: the client's redirect URI with a
   * code and the state, or with `access_denied`. OAuthFailure when the
   * request itself is malformed (no redirect can be trusted then).
   */
  async authorize(params: Record<string, string>, userId: string, approved: boolean): Promise<string> {
    this.checkRequest(params);
    this.sweep();
    if (this.codes.size >= MAX_PENDING_CODES)
      throw new OAuthFailure('temporarily_unavailable', 'too many authorizations under way; try again in a minute', 503);
    const { oauth, Library } = await this.library();
    const request = new Library.Request({ method: 'GET', headers: {}, query: { ...params, allowed: approved ? 'true' : 'false' }, body: {} });
    const response = new Library.Response({ headers: {} });
    try {
      await oauth.authorize(request, response, { authenticateHandler: { handle: () => ({ id: userId }) }, authorizationCodeLifetime: CODE_LIFETIME_SECONDS });
    } catch (error) {
      // Errors after the redirect URI was checked go back to the client in it.
      const location = response.headers?.location;
      if (location) return location;
      throw asFailure(Library, error);
    }
    return response.headers!.location!;
  }

  /** Answers the token endpoint (form fields `fields`): the token response, or OAuthFailure. */
  async token(fields: Record<string, string>): Promise<Record<string, unknown>> {
    const { oauth, Library } = await this.library();
    const request = new Library.Request({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1' },
      query: {},
      body: fields,
    });
    const response = new Library.Response({ headers: {} });
    try {
      await oauth.token(request, response);
    } catch (error) {
      throw asFailure(Library, error);
    }
    return response.body as Record<string, unknown>;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [code, pending] of this.codes) if (pending.expiresAt.getTime() <= now) this.codes.delete(code);
    for (const [code, used] of this.usedCodes) if (used.expiresAt <= now) this.usedCodes.delete(code);
  }

  private model(): OAuth2Server.AuthorizationCodeModel & OAuth2Server.RefreshTokenModel {
    const { store } = this;
    const clientOf = (client: OAuthClient): OAuth2Server.Client => ({
      id: client.id,
      redirectUris: client.redirectUris,
      grants: ['authorization_code', 'refresh_token'],
    });
    return {
      getClient: async (clientId: string) => {
        const client = this.client(clientId);
        return client ? clientOf(client) : null;
      },
      // Whatever was asked, the grant is the one scope there is.
      validateScope: async () => [OAUTH_SCOPE],
      generateAuthorizationCode: async () => randomBytes(32).toString('base64url'),
      generateAccessToken: async () => newSecret('oauthAccess'),
      generateRefreshToken: async () => newSecret('oauthRefresh'),
      saveAuthorizationCode: async (code, client, user) => {
        const userId = (user as { id: string }).id;
        const familyId = randomUUID();
        const pending: PendingCode = { ...code, client, user: { id: userId, familyId } satisfies GrantUser, userId, familyId } as PendingCode;
        this.codes.set(code.authorizationCode, pending);
        return pending;
      },
      getAuthorizationCode: async (code) => {
        const pending = this.codes.get(code);
        const used = pending ? undefined : this.usedCodes.get(code);
        // A code presented again (OAuth 2.1 §4.1.3): whoever has it is not the client alone, so what it issued ends.
        if (used) await store.oauth.revokeFamily(used.familyId);
        return pending && store.state.users.has(pending.userId) ? pending : null;
      },
      revokeAuthorizationCode: async (code) => {
        const pending = this.codes.get(code.authorizationCode);
        if (!pending) return false;
        this.codes.delete(code.authorizationCode);
        if (this.usedCodes.size >= MAX_USED_CODES) this.usedCodes.delete(this.usedCodes.keys().next().value!);
        this.usedCodes.set(code.authorizationCode, { familyId: pending.familyId, expiresAt: pending.expiresAt.getTime() });
        return true;
      },
      saveToken: async (token, client, user) => {
        const { id: userId, familyId } = user as GrantUser;
        const scope = (token.scope ?? [OAUTH_SCOPE]).join(' ');
        await store.oauth.save(userId, client.id, scope, token.accessToken, token.refreshToken!, familyId);
        return { ...token, client, user, scope: token.scope };
      },
      getRefreshToken: async (refreshToken) => {
        const grant = store.oauth.ofRefreshToken(refreshToken);
        const client = grant && this.client(grant.clientId);
        if (!grant || !client) {
          // A rotated-out refresh token presented again (OAuth 2.1 §4.3.1, RFC 9700 §4.14): the grant's live tokens end.
          const reused = grant ? null : store.oauth.revokedOfRefreshToken(refreshToken);
          if (reused) await store.oauth.revokeFamily(reused.familyId);
          return null;
        }
        const owner: GrantUser = { id: grant.userId, familyId: grant.familyId };
        return {
          refreshToken,
          refreshTokenExpiresAt: new Date(grant.createdAt + OAUTH_REFRESH_LIFETIME_MS),
          scope: grant.scope.split(' '),
          client: clientOf(client),
          user: owner,
          grantId: grant.id,
        };
      },
      // False when another refresh with the same token got there first: the library then refuses this one.
      revokeToken: async (token) => {
        const grantId = (token as { grantId?: string }).grantId;
        return grantId !== undefined && store.oauth.revoke(grantId);
      },
      getAccessToken: async () => null,
    };
  }
}
