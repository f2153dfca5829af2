/**
 * Single sign-on through an OpenID Connect provider (docs/sessions.md): the
 * authorization code flow with PKCE (S256), state and nonce, through
 * openid-client with the ID token's signature checked; and which member a
 * provider's verified claims are. Nothing is kept per sign-in under way: its
 * state travels sealed in the browser's cookie.
 */
import type * as OpenIdClient from 'openid-client';
import type { OidcConfig } from '../config/config.js';
import { readSecretFile } from '../config/secret-file.js';
import { AuthError } from './errors.js';
import type { Role, SingleSignOnIdentity, User } from './model.js';
import { seal, unseal } from './secrets.js';
import type { AuthStore } from './store.js';

/** Why a single sign-on failed; the sign-in page says each in words. */
export type OidcFailure = 'provider' | 'flow' | 'unverified_email' | 'domain' | 'not_member' | 'no_seat' | 'identity';

type Claims = Record<string, unknown>;

export class OidcError extends Error {
  constructor(
    readonly reason: OidcFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OidcError';
  }
}

/** What a finished sign-in tells about the person: the ID token's claims (checked by openid-client: signature, issuer, audience, nonce, expiry) over the user info endpoint's (same subject). */
export interface OidcIdentity {
  claims: Claims;
  /** Where the person was going (a local path). */
  next: string;
}

/** A sign-in under way, sealed (AES-256-GCM under a key derived from the instance key) into the browser's cookie. */
interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  expiresAt: number;
}

/** How long a browser has to come back from the provider. */
export const PENDING_SECONDS = 600;
/** What the sealed cookie is bound to: a value sealed for anything else does not open as a sign-in. */
const SEAL_CONTEXT = 'trawl oidc sign-in';
/** The provider's answers are waited for this long. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/** The client secret file: its first line; refused when others can read it. */
export function readClientSecret(file: string): string {
  return readSecretFile(file, 'auth.oidc.clientSecretFile');
}

export class OidcSignIn {
  /** Loaded only when single sign-on is configured (it costs the start ~25 ms otherwise). */
  private readonly library: Promise<typeof OpenIdClient> = import('openid-client');
  private configuration: Promise<OpenIdClient.Configuration> | null = null;

  constructor(
    readonly config: OidcConfig,
    private readonly clientSecret: string,
    private readonly redirectUri: () => string,
    /** Seals the sign-in state into the browser's cookie. */
    private readonly stateKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /** The provider's authorization URL for a new sign-in, and the sealed cookie value that binds it to the browser. */
  async begin(next: string): Promise<{ url: string; cookie: string }> {
    const configuration = await this.discover();
    const client = await this.library;
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const pending: PendingSignIn = { state, nonce, verifier, next, expiresAt: this.now() + PENDING_SECONDS * 1000 };
    const cookie = seal(this.stateKey, SEAL_CONTEXT, JSON.stringify(pending));
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri(),
      scope: this.config.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, cookie };
  }

  /**
   * The identity of a finished sign-in: `callbackUrl` as the provider
   * redirected the browser, `cookie` the sealed state the browser's cookie
   * holds (a callback the browser did not start is refused; the caller clears
   * the cookie, and the provider takes each code once).
   */
  async finish(callbackUrl: URL, cookie: string | undefined): Promise<OidcIdentity> {
    const state = callbackUrl.searchParams.get('state');
    const login = cookie === undefined ? null : this.opened(cookie);
    if (state === null || login === null || state !== login.state) throw new OidcError('flow', 'this sign-in was not started by this browser');
    if (login.expiresAt <= this.now()) throw new OidcError('flow', 'this sign-in expired; start again');
    if (callbackUrl.searchParams.has('error')) throw new OidcError('flow', `the identity provider refused: ${callbackUrl.searchParams.get('error')}`);
    try {
      const configuration = await this.discover();
      const client = await this.library;
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: login.verifier,
        expectedState: state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      // Many providers put the scopes' claims (email, groups) in the user info only (OpenID Connect Core 5.4).
      const userInfo = configuration.serverMetadata().userinfo_endpoint ? await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub) : {};
      return { claims: { ...userInfo, ...idToken }, next: login.next };
    } catch (error) {
      if (error instanceof OidcError) throw error;
      throw new OidcError('flow', `the identity provider's answer was refused: ${(error as Error).message}`);
    }
  }

  /** The sign-in a cookie holds, or null when it was not sealed here (altered, forged, another instance's). */
  private opened(cookie: string): PendingSignIn | null {
    const text = unseal(this.stateKey, SEAL_CONTEXT, cookie);
    if (text === null) return null;
    const login = JSON.parse(text) as PendingSignIn;
    return typeof login.state === 'string' && typeof login.expiresAt === 'number' ? login : null;
  }

  private discover(): Promise<OpenIdClient.Configuration> {
    if (!this.configuration) {
      const issuer = new URL(this.config.issuer);
      this.configuration = this.library
        .then((client) => {
          // The ID token's signature is checked against the provider's published keys, whatever the transport.
          const execute = [...(issuer.protocol === 'http:' ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks];
          return client.discovery(issuer, this.config.clientId, undefined, client.ClientSecretBasic(this.clientSecret), {
            execute,
            timeout: PROVIDER_TIMEOUT_SECONDS,
          });
        })
        .catch((error: Error) => {
          this.configuration = null; // the next sign-in tries again
          throw new OidcError('provider', `the identity provider ${issuer.href} cannot be reached: ${error.message}`);
        });
    }
    return this.configuration;
  }
}

/**
 * The member a provider's claims are: the email must be verified and in an
 * allowed domain. A member is bound to the provider's account (`iss`, `sub`)
 * at their first single sign-on; after that only that account is them,
 * whatever email another account claims. Someone not yet a member becomes
 * one only when `createMembers` allows it; with a role claim configured, the
 * role follows it at every sign-in (the last owner stays one).
 */
export async function memberFor(store: AuthStore, config: OidcConfig, claims: Claims): Promise<User> {
  const email = typeof claims.email === 'string' ? claims.email : '';
  if (email === '' || claims.email_verified !== true)
    throw new OidcError('unverified_email', 'the identity provider did not vouch for an email address (email and email_verified claims)');
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (config.allowedEmailDomains.length > 0 && !config.allowedEmailDomains.includes(domain))
    throw new OidcError('domain', `${domain} is not among the allowed email domains`);
  const role = roleFrom(config, claims);
  const identity = { issuer: String(claims.iss), subject: String(claims.sub) };
  const existing = store.state.userOfIdentity(identity) ?? (await bindByEmail(store, email, identity));
  if (!existing) {
    if (!config.createMembers) throw new OidcError('not_member', `${email} is not a member: an owner adds them first`);
    const name = typeof claims.name === 'string' && claims.name !== '' ? claims.name : email.split('@')[0]!;
    try {
      return await store.addUser({ name, email, role: role ?? 'member' }, identity);
    } catch (error) {
      throw new OidcError('no_seat', (error as Error).message);
    }
  }
  if (role === undefined || role === existing.role) return existing;
  try {
    return await store.setRole(existing.id, role);
  } catch (error) {
    // The last owner stays one whatever the claim says; any other failure (the log) is not a sign-in answer.
    if (error instanceof AuthError && error.code === 'LAST_OWNER') return existing;
    throw error;
  }
}

/** The member with this email, bound now to the provider's account, or undefined; refused when another account is theirs. */
async function bindByEmail(store: AuthStore, email: string, identity: SingleSignOnIdentity): Promise<User | undefined> {
  const member = store.state.userByEmail(email);
  if (!member) return undefined;
  try {
    await store.bindIdentity(member.id, identity);
  } catch (error) {
    if (error instanceof AuthError && error.code === 'IDENTITY_TAKEN')
      throw new OidcError('identity', `${email} signs in as another account of the identity provider`);
    throw error;
  }
  return member;
}

function roleFrom(config: OidcConfig, claims: Claims): Role | undefined {
  if (config.roleClaim === '') return undefined;
  const value = claims[config.roleClaim];
  const values = Array.isArray(value) ? value : [value];
  return values.some((item) => typeof item === 'string' && config.ownerValues.includes(item)) ? 'owner' : 'member';
}
