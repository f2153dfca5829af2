/**
 * The auth model the state log's records build: users and their roles and
 * password hashes, API keys, scoped access tokens, sign-in sessions, OAuth
 * clients and grants, repository grants, the anonymous-access setting and
 * the license key; and the decisions made from it — which credential a
 * secret's digest is, and which repositories a caller can see. Records of
 * unknown types are skipped, so a log written by a newer trawl still replays.
 * This module holds the records and the model's types; auth-state.ts replays them.
 */
import type { StateRecord } from './state-record.js';

export type Role = 'owner' | 'member';

export interface User {
  id: string;
  name: string;
  email: string;
  role: Role;
  createdAt: number;
  /** When the role last changed (createdAt until then). */
  updatedAt: number;
}

export interface ApiKey {
  id: string;
  userId: string;
  name: string;
  digest: string;
  createdAt: number;
}

export interface ScopedToken {
  id: string;
  userId: string;
  digest: string;
  /** Bound at creation: a later rename of a repository does not widen the scope. */
  repoIds: number[];
  createdAt: number;
  expiresAt: number;
  revokedAt?: number;
}

/** A signed-in browser (docs/sessions.md): its secret lives in a cookie, only its digest here. */
export interface Session {
  id: string;
  userId: string;
  digest: string;
  createdAt: number;
  /** The last request made with it (in this process; across restarts to the precision of SESSION_SEEN_INTERVAL_MS). */
  lastSeenAt: number;
  /** The last use the log holds. */
  loggedSeenAt: number;
  /** What signed in, as the browser said (shortened), for the sessions list. */
  userAgent: string;
  address: string;
}

/** An account at an OpenID Connect provider: its issuer and its subject, stable where an email is not. */
export interface SingleSignOnIdentity {
  issuer: string;
  subject: string;
}

/** How long a session lives unused, and at most. */
export interface SessionLimits {
  idleMs: number;
  maxAgeMs: number;
}

/** Idle 7 days, at most 30. */
export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 7 * 86_400_000, maxAgeMs: 30 * 86_400_000 };

/** A session's use is written to the log at most this often (so idle expiry survives a restart). */
export const SESSION_SEEN_INTERVAL_MS = 10 * 60 * 1000;
/** Signing in once more ends the user's least recently used session. */
export const MAX_SESSIONS_PER_USER = 32;

/** A client registered through OAuth dynamic client registration (RFC 7591): public, PKCE only; sealed into its id (auth/oauth.ts), or, registered by an earlier trawl, in the log. */
export interface OAuthClient {
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: number;
}

/** An OAuth access token and its refresh token, issued together; a refresh revokes the pair and issues the next. */
export interface OAuthGrant {
  id: string;
  userId: string;
  clientId: string;
  accessDigest: string;
  refreshDigest: string;
  scope: string;
  /** The authorization (one code) the grant descends from: each refresh carries it on, and reuse revokes them all (RFC 9700 §4.14). */
  familyId: string;
  createdAt: number;
  revokedAt?: number;
}

export const OAUTH_ACCESS_LIFETIME_MS = 60 * 60 * 1000;
export const OAUTH_REFRESH_LIFETIME_MS = 30 * 86_400_000;
/** Clients an earlier trawl registered in the log, kept at most on replay: one more drops the oldest that holds no live grant. */
export const MAX_OAUTH_CLIENTS = 1_000;

/** Exactly one hour; no refresh. */
export const SCOPED_TOKEN_LIFETIME_MS = 60 * 60 * 1000;

/** What a repository needs for visibility decisions. */
export interface VisibleRepository {
  id: number;
  public: boolean;
}

/** The auth records of the state log (all `v: 1`), by type. */
export type AuthRecord =
  | { type: 'user.added'; userId: string; name: string; email: string; role: Role }
  | { type: 'user.role'; userId: string; role: Role }
  | { type: 'user.removed'; userId: string }
  | ({ type: 'user.identity'; userId: string } & SingleSignOnIdentity)
  | { type: 'apikey.created'; keyId: string; userId: string; name: string; digest: string }
  | { type: 'apikey.deleted'; keyId: string }
  | { type: 'token.created'; tokenId: string; userId: string; digest: string; repoIds: number[] }
  | { type: 'token.revoked'; tokenId: string }
  | { type: 'grant.added' | 'grant.removed'; userId: string; repoId: number }
  | { type: 'user.password'; userId: string; hash: string }
  | { type: 'session.created'; sessionId: string; userId: string; digest: string; userAgent: string; address: string }
  | { type: 'session.seen' | 'session.ended'; sessionId: string }
  | { type: 'oauth.client.registered'; clientId: string; name: string; redirectUris: string[] }
  | {
      type: 'oauth.grant.issued';
      grantId: string;
      userId: string;
      clientId: string;
      accessDigest: string;
      refreshDigest: string;
      scope: string;
      familyId?: string;
    }
  | { type: 'oauth.grant.revoked'; grantId: string }
  | { type: 'settings.anonymousAccess'; enabled: boolean }
  | { type: 'license.installed'; key: string };

/** A state-log record of an auth record, stamped `at`. */
/** Records after which some credential opens less than before (docs/cluster.md, "Credentials": other nodes confirm them). */
export const NARROWING_RECORDS: ReadonlySet<string> = new Set([
  'user.removed',
  'user.role',
  'apikey.deleted',
  'token.revoked',
  'session.ended',
  'grant.removed',
  'oauth.grant.revoked',
  'settings.anonymousAccess',
]);

export function authRecord(record: AuthRecord, at: number): StateRecord {
  return { v: 1, at, ...record };
}

export type Credential =
  | { kind: 'apiKey'; key: ApiKey; user: User }
  | { kind: 'scopedToken'; token: ScopedToken; user: User }
  | { kind: 'session'; session: Session; user: User }
  | { kind: 'oauth'; grant: OAuthGrant; user: User };

/** The stored record a credential is: its id and digest. */
export function credentialRecord(credential: Credential): { id: string; digest: string } {
  switch (credential.kind) {
    case 'apiKey':
      return credential.key;
    case 'scopedToken':
      return credential.token;
    case 'session':
      return credential.session;
    case 'oauth':
      return { id: credential.grant.id, digest: credential.grant.accessDigest };
  }
}
