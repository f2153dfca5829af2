/**
 * The auth state replayed from the state log's records (model.ts): one replay, one switch over the record
 * types, and its snapshot, kept together so that what a removal ends is in one place; and the decisions made
 * from it — which credential a secret's digest is, and which repositories a caller can see.
 */
import { sameDigest } from './secrets.js';
import type { StateRecord } from './state-record.js';
import {
  authRecord,
  DEFAULT_SESSION_LIMITS,
  MAX_OAUTH_CLIENTS,
  MAX_SESSIONS_PER_USER,
  OAUTH_ACCESS_LIFETIME_MS,
  OAUTH_REFRESH_LIFETIME_MS,
  SCOPED_TOKEN_LIFETIME_MS,
  SESSION_SEEN_INTERVAL_MS,
  type ApiKey,
  type AuthRecord,
  type Credential,
  type OAuthClient,
  type OAuthGrant,
  type ScopedToken,
  type Session,
  type SessionLimits,
  type SingleSignOnIdentity,
  type User,
  type VisibleRepository,
} from './model.js';

/** The map key of a single sign-on account (a NUL cannot be in either part of a URL or a subject the provider signs). */
function identityKey(identity: SingleSignOnIdentity): string {
  return `${identity.issuer}\0${identity.subject}`;
}

export class AuthState {
  readonly users = new Map<string, User>();
  readonly apiKeys = new Map<string, ApiKey>();
  readonly tokens = new Map<string, ScopedToken>();
  readonly sessions = new Map<string, Session>();
  readonly oauthClients = new Map<string, OAuthClient>();
  readonly oauthGrants = new Map<string, OAuthGrant>();
  /** userId → password hash (users who sign in with a password). */
  readonly passwords = new Map<string, string>();
  /** `issuer subject` → userId, and back: members bound to their single sign-on account. */
  private readonly userByIdentity = new Map<string, string>();
  private readonly identityByUser = new Map<string, SingleSignOnIdentity>();
  /** userId → repository ids granted. */
  readonly grants = new Map<string, Set<number>>();
  /** Set by an administrator; until then (undefined) the config file's `auth.anonymousAccess` decides. */
  anonymousAccess: boolean | undefined;
  /** The license key installed last (verified by its reader, not here). */
  licenseKey: string | undefined;
  private readonly keyByDigest = new Map<string, string>();
  private readonly tokenByDigest = new Map<string, string>();
  private readonly sessionByDigest = new Map<string, string>();
  private readonly grantByAccess = new Map<string, string>();
  private readonly grantByRefresh = new Map<string, string>();

  constructor(readonly sessionLimits: SessionLimits = DEFAULT_SESSION_LIMITS) {}

  /** Forgets everything applied: the state of an empty log. */
  clear(): void {
    const maps = [this.users, this.apiKeys, this.tokens, this.sessions, this.oauthClients, this.oauthGrants, this.passwords, this.grants];
    const indexes = [
      this.userByIdentity,
      this.identityByUser,
      this.keyByDigest,
      this.tokenByDigest,
      this.sessionByDigest,
      this.grantByAccess,
      this.grantByRefresh,
    ];
    for (const map of [...maps, ...indexes]) map.clear();
    this.anonymousAccess = undefined;
    this.licenseKey = undefined;
  }

  /** Applies one record; unknown types are ignored. */
  apply(record: StateRecord): void {
    const r = record as unknown as AuthRecord;
    switch (r.type) {
      case 'user.added':
        this.users.set(r.userId, { id: r.userId, name: r.name, email: r.email, role: r.role, createdAt: record.at, updatedAt: record.at });
        break;
      case 'user.role': {
        const user = this.users.get(r.userId);
        if (user) Object.assign(user, { role: r.role, updatedAt: record.at });
        break;
      }
      case 'user.removed':
        // Membership ends; the user's keys and tokens die with it (in one record, so atomically).
        this.users.delete(r.userId);
        this.unbindIdentity(r.userId);
        this.grants.delete(r.userId);
        this.passwords.delete(r.userId);
        for (const session of this.sessions.values()) if (session.userId === r.userId) this.endSession(session.id);
        for (const grant of this.oauthGrants.values()) if (grant.userId === r.userId && grant.revokedAt === undefined) grant.revokedAt = record.at;
        for (const key of this.apiKeys.values()) if (key.userId === r.userId) this.deleteKey(key.id);
        for (const token of this.tokens.values()) if (token.userId === r.userId && token.revokedAt === undefined) token.revokedAt = record.at;
        break;
      case 'user.identity':
        if (this.users.has(r.userId)) {
          this.unbindIdentity(r.userId);
          this.identityByUser.set(r.userId, { issuer: r.issuer, subject: r.subject });
          this.userByIdentity.set(identityKey(r), r.userId);
        }
        break;
      case 'apikey.created':
        this.apiKeys.set(r.keyId, { id: r.keyId, userId: r.userId, name: r.name, digest: r.digest, createdAt: record.at });
        this.keyByDigest.set(r.digest, r.keyId);
        break;
      case 'apikey.deleted':
        this.deleteKey(r.keyId);
        break;
      case 'token.created':
        this.tokens.set(r.tokenId, {
          id: r.tokenId,
          userId: r.userId,
          digest: r.digest,
          repoIds: [...r.repoIds],
          createdAt: record.at,
          expiresAt: record.at + SCOPED_TOKEN_LIFETIME_MS,
        });
        this.tokenByDigest.set(r.digest, r.tokenId);
        break;
      case 'token.revoked':
        if (this.tokens.has(r.tokenId)) this.tokens.get(r.tokenId)!.revokedAt = record.at;
        break;
      case 'user.password':
        if (this.users.has(r.userId)) this.passwords.set(r.userId, r.hash);
        break;
      case 'session.created': {
        const own = [...this.sessions.values()].filter((session) => session.userId === r.userId);
        if (own.length >= MAX_SESSIONS_PER_USER) this.endSession(own.reduce((a, b) => (b.lastSeenAt < a.lastSeenAt ? b : a)).id);
        const { sessionId: id, userId, digest, userAgent, address } = r;
        this.sessions.set(id, { id, userId, digest, createdAt: record.at, lastSeenAt: record.at, loggedSeenAt: record.at, userAgent, address });
        this.sessionByDigest.set(digest, id);
        break;
      }
      case 'session.seen': {
        const session = this.sessions.get(r.sessionId);
        if (session) {
          session.lastSeenAt = Math.max(session.lastSeenAt, record.at);
          session.loggedSeenAt = Math.max(session.loggedSeenAt, record.at);
        }
        break;
      }
      case 'session.ended':
        this.endSession(r.sessionId);
        break;
      case 'oauth.client.registered': {
        if (this.oauthClients.size >= MAX_OAUTH_CLIENTS) {
          const unused = [...this.oauthClients.values()].find(
            (client) => ![...this.oauthGrants.values()].some((grant) => grant.clientId === client.id && this.grantLive(grant, record.at)),
          );
          if (unused) this.oauthClients.delete(unused.id);
        }
        this.oauthClients.set(r.clientId, { id: r.clientId, name: r.name, redirectUris: [...r.redirectUris], createdAt: record.at });
        break;
      }
      case 'oauth.grant.issued': {
        const { grantId: id, userId, clientId, accessDigest, refreshDigest, scope } = r;
        this.oauthGrants.set(id, { id, userId, clientId, accessDigest, refreshDigest, scope, familyId: r.familyId ?? id, createdAt: record.at });
        this.grantByAccess.set(accessDigest, id);
        this.grantByRefresh.set(refreshDigest, id);
        break;
      }
      case 'oauth.grant.revoked': {
        const grant = this.oauthGrants.get(r.grantId);
        if (grant && grant.revokedAt === undefined) grant.revokedAt = record.at;
        break;
      }
      case 'grant.added':
        this.grants.set(r.userId, new Set([...(this.grants.get(r.userId) ?? []), r.repoId]));
        break;
      case 'grant.removed':
        this.grants.get(r.userId)?.delete(r.repoId);
        break;
      case 'settings.anonymousAccess':
        this.anonymousAccess = r.enabled;
        break;
      case 'license.installed':
        this.licenseKey = r.key;
        break;
    }
  }

  /**
   * The live credential whose digest this is at `now`, or null: unknown,
   * deleted, revoked, expired (at exactly one hour), or of a removed user.
   */
  credential(kind: Credential['kind'], digest: string, now: number): Credential | null {
    // Looking a digest up in a map reveals nothing about the secret: it is an HMAC under the instance key.
    if (kind === 'session') {
      const session = this.sessions.get(this.sessionByDigest.get(digest) ?? '');
      const user = session && sameDigest(session.digest, digest) && this.sessionLive(session, now) ? this.users.get(session.userId) : undefined;
      return session && user ? { kind, session, user } : null;
    }
    if (kind === 'oauth') {
      const grant = this.oauthGrants.get(this.grantByAccess.get(digest) ?? '');
      const user =
        grant && sameDigest(grant.accessDigest, digest) && grant.revokedAt === undefined && now < grant.createdAt + OAUTH_ACCESS_LIFETIME_MS
          ? this.users.get(grant.userId)
          : undefined;
      return grant && user ? { kind, grant, user } : null;
    }
    if (kind === 'apiKey') {
      const key = this.apiKeys.get(this.keyByDigest.get(digest) ?? '');
      const user = key && sameDigest(key.digest, digest) ? this.users.get(key.userId) : undefined;
      return key && user ? { kind, key, user } : null;
    }
    const token = this.tokens.get(this.tokenByDigest.get(digest) ?? '');
    const user = token && sameDigest(token.digest, digest) ? this.users.get(token.userId) : undefined;
    if (!token || !user || token.revokedAt !== undefined || now >= token.expiresAt) return null;
    return { kind, token, user };
  }

  /** Whether a session is within its idle and absolute lifetimes at `now`. */
  sessionLive(session: Session, now: number): boolean {
    return now < session.lastSeenAt + this.sessionLimits.idleMs && now < session.createdAt + this.sessionLimits.maxAgeMs;
  }

  /** A use of `session` at `now`: its idle clock restarts at once; true when the log should hear of it (SESSION_SEEN_INTERVAL_MS since it last did). */
  touchSession(session: Session, now: number): boolean {
    session.lastSeenAt = Math.max(session.lastSeenAt, now);
    return now - session.loggedSeenAt >= SESSION_SEEN_INTERVAL_MS;
  }

  /** The live grant whose refresh token has this digest (not revoked, within its lifetime, its user a member). */
  grantByRefreshDigest(digest: string, now: number): OAuthGrant | null {
    const grant = this.oauthGrants.get(this.grantByRefresh.get(digest) ?? '');
    return grant && sameDigest(grant.refreshDigest, digest) && this.grantLive(grant, now) && this.users.has(grant.userId) ? grant : null;
  }

  /** The grant, live or revoked, whose refresh token has this digest, or null (unknown, or past its lifetime and compacted away). */
  grantOfRefreshDigest(digest: string): OAuthGrant | null {
    const grant = this.oauthGrants.get(this.grantByRefresh.get(digest) ?? '');
    return grant && sameDigest(grant.refreshDigest, digest) ? grant : null;
  }

  /** The unrevoked grant whose access or refresh token has this digest, or null. */
  grantOfTokenDigest(digest: string): OAuthGrant | null {
    const grant = this.oauthGrants.get(this.grantByAccess.get(digest) ?? this.grantByRefresh.get(digest) ?? '');
    return grant && grant.revokedAt === undefined ? grant : null;
  }

  /** Whether a grant can still be refreshed at `now`. */
  grantLive(grant: OAuthGrant, now: number): boolean {
    return grant.revokedAt === undefined && now < grant.createdAt + OAUTH_REFRESH_LIFETIME_MS;
  }

  /** The member bound to this single sign-on account, if any. */
  userOfIdentity(identity: SingleSignOnIdentity): User | undefined {
    return this.users.get(this.userByIdentity.get(identityKey(identity)) ?? '');
  }

  /** The single sign-on account a member is bound to, if any. */
  identityOf(userId: string): SingleSignOnIdentity | undefined {
    return this.identityByUser.get(userId);
  }

  private unbindIdentity(userId: string): void {
    const identity = this.identityByUser.get(userId);
    if (identity) this.userByIdentity.delete(identityKey(identity));
    this.identityByUser.delete(userId);
  }

  /** The member with this email (compared without case), if any. */
  userByEmail(email: string): User | undefined {
    const wanted = email.toLowerCase();
    for (const user of this.users.values()) if (user.email.toLowerCase() === wanted) return user;
    return undefined;
  }

  private endSession(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    this.sessionByDigest.delete(session.digest);
  }

  private deleteKey(keyId: string): void {
    const key = this.apiKeys.get(keyId);
    if (!key) return;
    this.apiKeys.delete(keyId);
    this.keyByDigest.delete(key.digest);
  }

  /**
   * Whether `repo` is visible: public repositories to anonymous callers and
   * members, everything to owners, granted ones to their users; for a scoped
   * token, its repositories that its creator can see now.
   */
  canSee(caller: Credential | null, repo: VisibleRepository): boolean {
    if (!caller) return repo.public;
    const userSees = this.userCanSee(caller.user, repo);
    return caller.kind === 'scopedToken' ? userSees && caller.token.repoIds.includes(repo.id) : userSees;
  }

  private userCanSee(user: User, repo: VisibleRepository): boolean {
    return user.role === 'owner' || repo.public || (this.grants.get(user.id)?.has(repo.id) ?? false);
  }

  /** The owners left. */
  owners(): User[] {
    return [...this.users.values()].filter((user) => user.role === 'owner');
  }

  /**
   * Records that rebuild this state (for compaction); expired tokens, sessions and grants are dropped (revoked
   * tokens and grants stay until they would have expired: a rotated-out refresh token presented again is reuse).
   */
  snapshot(now: number): StateRecord[] {
    const records: StateRecord[] = [];
    if (this.anonymousAccess !== undefined) records.push(authRecord({ type: 'settings.anonymousAccess', enabled: this.anonymousAccess }, now));
    if (this.licenseKey !== undefined) records.push(authRecord({ type: 'license.installed', key: this.licenseKey }, now));
    for (const user of this.users.values()) {
      records.push(authRecord({ type: 'user.added', userId: user.id, name: user.name, email: user.email, role: user.role }, user.createdAt));
      if (user.updatedAt !== user.createdAt) records.push(authRecord({ type: 'user.role', userId: user.id, role: user.role }, user.updatedAt));
      const identity = this.identityByUser.get(user.id);
      if (identity) records.push(authRecord({ type: 'user.identity', userId: user.id, ...identity }, now));
      const hash = this.passwords.get(user.id);
      if (hash !== undefined) records.push(authRecord({ type: 'user.password', userId: user.id, hash }, now));
    }
    for (const client of this.oauthClients.values()) {
      records.push(
        authRecord({ type: 'oauth.client.registered', clientId: client.id, name: client.name, redirectUris: client.redirectUris }, client.createdAt),
      );
    }
    for (const grant of this.oauthGrants.values()) {
      if (now >= grant.createdAt + OAUTH_REFRESH_LIFETIME_MS) continue;
      const { id: grantId, userId, clientId, accessDigest, refreshDigest, scope, familyId } = grant;
      records.push(authRecord({ type: 'oauth.grant.issued', grantId, userId, clientId, accessDigest, refreshDigest, scope, familyId }, grant.createdAt));
      if (grant.revokedAt !== undefined) records.push(authRecord({ type: 'oauth.grant.revoked', grantId }, grant.revokedAt));
    }
    for (const session of this.sessions.values()) {
      if (!this.sessionLive(session, now)) continue;
      const { id: sessionId, userId, digest, userAgent, address } = session;
      records.push(authRecord({ type: 'session.created', sessionId, userId, digest, userAgent, address }, session.createdAt));
      if (session.lastSeenAt !== session.createdAt) records.push(authRecord({ type: 'session.seen', sessionId }, session.lastSeenAt));
    }
    for (const [userId, repoIds] of this.grants) for (const repoId of repoIds) records.push(authRecord({ type: 'grant.added', userId, repoId }, now));
    for (const key of this.apiKeys.values())
      records.push(authRecord({ type: 'apikey.created', keyId: key.id, userId: key.userId, name: key.name, digest: key.digest }, key.createdAt));
    for (const token of this.tokens.values()) {
      if (now >= token.expiresAt) continue;
      records.push(
        authRecord({ type: 'token.created', tokenId: token.id, userId: token.userId, digest: token.digest, repoIds: token.repoIds }, token.createdAt),
      );
      if (token.revokedAt !== undefined) records.push(authRecord({ type: 'token.revoked', tokenId: token.id }, token.revokedAt));
    }
    return records;
  }
}
