/**
 * The auth store: the state, the journal it is committed to (committer.ts: the
 * state log, or a cluster's log on etcd), the instance key and the clock,
 * behind the operations the API and `trawl admin` perform. Every change is
 * records, applied only once they are durable (so an acknowledged change
 * survives a crash); changes that check an invariant first (the last owner,
 * free seats) run one at a time, others concurrently so their syncs are
 * shared (group commit). Each method is one operation (OAuth grants':
 * oauth-grants.ts).
 */
import { randomUUID, type KeyObject } from 'node:crypto';
import { AuthError } from './errors.js';
import { InstalledLicenses, licenseActive, readLicense, type License } from './license.js';
import { AuthState } from './auth-state.js';
import {
  credentialRecord,
  type ApiKey,
  type AuthRecord,
  type Credential,
  type Role,
  type ScopedToken,
  type Session,
  type SessionLimits,
  type SingleSignOnIdentity,
  type User,
  type VisibleRepository,
} from './model.js';
import { hashPassword, passwordProblem, UNUSABLE_HASH, verifyPassword } from './password.js';
import { csrfToken, derivedKey, newSecret, sameDigest, secretDigest, secretKind } from './secrets.js';
import { OAuthGrants } from './oauth-grants.js';
import { Committer, type CommitterOptions } from './committer.js';
import type { TailRepair } from './state-log.js';

export interface AuthStoreOptions {
  /** The state directory: the log, its lock and the instance key live here. */
  directory: string;
  /** Public keys licenses are verified with. */
  trustedLicenseKeys: readonly KeyObject[];
  /** How long sign-in sessions live unused and at most (default: model.ts's DEFAULT_SESSION_LIMITS). */
  sessionLimits?: SessionLimits;
  /** Milliseconds since the epoch; injectable for tests of expiry. */
  now?: () => number;
  /** Told when a background write fails: a compaction (the log stays as it was) or a session's last use. */
  onBackgroundError?: (error: Error, what: string) => void;
  /** Opens the journal changes are committed to (default: the state directory's own log). */
  openJournal?: CommitterOptions['openJournal'];
}

/** What a browser tells about itself when it signs in (shown in the sessions list). */
export interface SessionClient {
  userAgent: string;
  address: string;
}

/** A session just started: its cookie secret (never stored) and its CSRF token. */
export interface StartedSession {
  session: Session;
  user: User;
  secret: string;
  csrfToken: string;
}

const USER_AGENT_CHARS = 200;

export { stateDirectory } from '../index/data-directory.js';

/** Without an active license the instance has one user: the owner `trawl admin init` made. */
const UNLICENSED_SEATS = 1;

export class AuthStore {
  private readonly lastActivity = new Map<string, number>();
  /** API key id → when it was last used (since this process started). */
  private readonly keyLastUse = new Map<string, number>();
  private readonly seenWrites = new Set<string>();
  private readonly licenses: InstalledLicenses;
  /** The OAuth grants of members (oauth-grants.ts). */
  readonly oauth: OAuthGrants;
  /** The log as a cluster shares it: whether it is shared, catching up with it, revocations confirmed (committer.ts). */
  readonly log: Pick<Committer, 'shared' | 'latest' | 'eventually' | 'reached' | 'confirmNarrowingWith'>;

  private readonly instanceKey: Buffer;

  private constructor(
    private readonly committer: Committer,
    readonly state: AuthState,
    private readonly options: AuthStoreOptions,
    readonly now: () => number,
  ) {
    this.log = committer;
    const instanceKey = committer.instanceKey;
    this.instanceKey = instanceKey;
    this.licenses = new InstalledLicenses(options.trustedLicenseKeys);
    this.oauth = new OAuthGrants({
      state,
      now,
      digest: (secret) => secretDigest(instanceKey, secret),
      member: (userId) => this.member(userId),
      commit: (record) => committer.commit(record),
      exclusively: (run) => committer.exclusively(run),
    });
  }

  /** Opens the journal (by default the state directory's log, taking its lock: StateLogLockedError when another process has it) and replays it. */
  static async open(options: AuthStoreOptions): Promise<{ store: AuthStore; repair: TailRepair | null }> {
    const now = options.now ?? Date.now;
    const state = new AuthState(options.sessionLimits);
    const { committer, repair } = await Committer.open(state, { ...options, now });
    return { store: new AuthStore(committer, state, options, now), repair };
  }

  /** A key for `purpose` (e.g. sealing a sign-in's state into a cookie), derived from the instance key. */
  keyFor(purpose: string): Buffer {
    return derivedKey(this.instanceKey, purpose);
  }

  /**
   * The live credential a presented secret is, or null (malformed, unknown,
   * revoked, expired, or its user removed).
   */
  authenticate(secret: string): Credential | null {
    const kind = secretKind(secret);
    // A session's secret travels in its cookie only; a refresh token goes to the token endpoint only.
    if (!kind || kind === 'session' || kind === 'oauthRefresh') return null;
    // OAuth access tokens are an enterprise feature: without an active license they open nothing.
    if (kind === 'oauthAccess' && !this.activeLicense()) return null;
    return this.used(this.state.credential(kind === 'oauthAccess' ? 'oauth' : kind, secretDigest(this.instanceKey, secret), this.now()));
  }

  /**
   * The live session a cookie's secret is, or null (malformed, unknown,
   * ended, idle or old past its limits, or its user removed). Its use is
   * written to the log at most every SESSION_SEEN_INTERVAL_MS, in the
   * background, so idle expiry survives a restart.
   */
  authenticateSession(secret: string): Credential | null {
    if (secretKind(secret) !== 'session') return null;
    const credential = this.used(this.state.credential('session', secretDigest(this.instanceKey, secret), this.now()));
    if (credential?.kind !== 'session') return null;
    const { session } = credential;
    if (this.state.touchSession(session, this.now()) && !this.seenWrites.has(session.id)) {
      this.seenWrites.add(session.id);
      void this.commit({ type: 'session.seen', sessionId: session.id })
        .catch((error: Error) => this.options.onBackgroundError?.(error, 'session use'))
        .finally(() => this.seenWrites.delete(session.id));
    }
    return credential;
  }

  private used(credential: Credential | null): Credential | null {
    if (credential) this.lastActivity.set(credential.user.id, this.now());
    if (credential?.kind === 'apiKey') this.keyLastUse.set(credential.key.id, this.now());
    return credential;
  }

  /** Whether a credential found earlier is still live now (open streams and MCP sessions ask on every change). */
  stillValid(credential: Credential): boolean {
    if (credential.kind === 'oauth' && !this.activeLicense()) return false;
    return this.state.credential(credential.kind, credentialRecord(credential).digest, this.now()) !== null;
  }

  /** When an API key was last used since the daemon started. */
  keyLastUsedAt(keyId: string): number | undefined {
    return this.keyLastUse.get(keyId);
  }

  /** Whether `presented` is the CSRF token of the session whose cookie secret is `secret` (constant time). */
  validCsrfToken(secret: string, presented: string): boolean {
    return sameDigest(csrfToken(this.instanceKey, secret), presented);
  }

  /**
   * Signs a member in with their password: a new session (its secret is
   * returned here, never stored), or null when the email is no member's,
   * they have no password, or it does not match (each as slow as the others).
   */
  async signIn(email: string, password: string, client: SessionClient): Promise<StartedSession | null> {
    const user = this.state.userByEmail(email);
    const matches = await this.checkPassword(user?.id ?? '', password);
    // The user may have been removed while the password was checked.
    if (!user || !matches || !this.state.users.has(user.id)) return null;
    return this.startSession(user.id, client);
  }

  /** A new session for a member (sign-in by password, or by an identity provider). */
  async startSession(userId: string, client: SessionClient): Promise<StartedSession> {
    const user = this.member(userId);
    const secret = newSecret('session');
    const sessionId = randomUUID();
    const userAgent = [...client.userAgent].slice(0, USER_AGENT_CHARS).join('');
    await this.commit({ type: 'session.created', sessionId, userId, digest: secretDigest(this.instanceKey, secret), userAgent, address: client.address });
    return { session: this.state.sessions.get(sessionId)!, user, secret, csrfToken: csrfToken(this.instanceKey, secret) };
  }

  /** Ends a session of `userId`'s; false when they have none by that id. */
  async endSession(userId: string, sessionId: string): Promise<boolean> {
    if (this.state.sessions.get(sessionId)?.userId !== userId) return false;
    await this.commit({ type: 'session.ended', sessionId });
    return true;
  }

  /** Ends every session of `userId`'s but `keepId`; returns the ended ones. */
  async endOtherSessions(userId: string, keepId: string | null): Promise<Session[]> {
    const others = this.sessionsOf(userId).filter((session) => session.id !== keepId);
    await Promise.all(others.map((session) => this.commit({ type: 'session.ended', sessionId: session.id })));
    return others;
  }

  /** Whether `password` is the member's (false when they have none). */
  async checkPassword(userId: string, password: string): Promise<boolean> {
    const hash = this.state.passwords.get(userId);
    return (await verifyPassword(password, hash ?? UNUSABLE_HASH)) && hash !== undefined;
  }

  /** The CSRF token of the session whose cookie secret this is. */
  csrfToken(secret: string): string {
    return csrfToken(this.instanceKey, secret);
  }

  /** The live sessions of a user, most recently used first. */
  sessionsOf(userId: string): Session[] {
    const now = this.now();
    return [...this.state.sessions.values()]
      .filter((session) => session.userId === userId && this.state.sessionLive(session, now))
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  }

  /** Sets (or replaces) a member's password; AuthError WEAK_PASSWORD when it is too short or too long. */
  async setPassword(userId: string, password: string): Promise<void> {
    const problem = passwordProblem(password);
    if (problem) throw new AuthError('WEAK_PASSWORD', problem);
    this.member(userId);
    await this.commit({ type: 'user.password', userId, hash: await hashPassword(password) });
  }

  canSee(credential: Credential | null, repo: VisibleRepository): boolean {
    return this.state.canSee(credential, repo);
  }

  /** Whether anonymous callers may read: the administrator's setting, else the config file's. */
  anonymousAccess(configured: boolean): boolean {
    return this.state.anonymousAccess ?? configured;
  }

  /** The installed license while it is active (valid signature, not expired), else null. */
  activeLicense(): License | null {
    const installed = this.installedLicense();
    return licenseActive(installed, this.now()) ? installed : null;
  }

  /** The installed license whether or not it expired (null: none, or its signature no longer verifies). */
  installedLicense(): License | null {
    return this.licenses.of(this.state.licenseKey);
  }

  /** The license as administrators see it: installed or not, active or not, its terms, the seats in use. */
  licenseStatus(): { installed: boolean; active: boolean; seatsUsed: number } & Partial<License> {
    const installed = this.installedLicense();
    return { installed: installed !== null, active: this.activeLicense() !== null, ...(installed ?? {}), seatsUsed: this.state.users.size };
  }

  /** The member `userId`; AuthError USER_NOT_FOUND otherwise. */
  member(userId: string): User {
    const user = this.state.users.get(userId);
    if (!user) throw new AuthError('USER_NOT_FOUND', `user ${JSON.stringify(userId)} is not a member`);
    return user;
  }

  lastActivityAt(userId: string): number | undefined {
    return this.lastActivity.get(userId);
  }

  /** Calls `listener` after every change is applied; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    return this.committer.onChange(listener);
  }

  /** Adds a member (bound to a single sign-on account when `identity` is given); AuthError NO_FREE_SEAT or EMAIL_TAKEN. */
  async addUser(fields: { name: string; email: string; role: Role }, identity?: SingleSignOnIdentity): Promise<User> {
    return this.exclusively(async () => {
      const license = this.activeLicense();
      const seats = license?.seats ?? UNLICENSED_SEATS;
      if (this.state.users.size >= seats) {
        throw new AuthError(
          'NO_FREE_SEAT',
          `every seat is taken (${seats}${license ? ' in the license' : ' without a license'}): remove a user or install a license with more seats`,
        );
      }
      // Compared without case, as sign-in finds a member by email.
      if (this.state.userByEmail(fields.email)) {
        throw new AuthError('EMAIL_TAKEN', `a user with the email ${JSON.stringify(fields.email)} exists`);
      }
      const userId = randomUUID();
      await this.commit({ type: 'user.added', userId, ...fields }, ...(identity ? [{ type: 'user.identity' as const, userId, ...identity }] : []));
      return this.state.users.get(userId)!;
    });
  }

  /** Binds a member to their single sign-on account: from now on only that account signs in as them. */
  async bindIdentity(userId: string, identity: SingleSignOnIdentity): Promise<void> {
    return this.exclusively(async () => {
      this.member(userId);
      if (this.state.identityOf(userId) || this.state.userOfIdentity(identity))
        throw new AuthError('IDENTITY_TAKEN', 'this member or this account of the identity provider is bound already');
      await this.commit({ type: 'user.identity', userId, ...identity });
    });
  }

  /** Ends a membership and revokes every key and token of the user, in one record. */
  async removeUser(userId: string): Promise<void> {
    return this.exclusively(async () => {
      this.refuseLastOwner(this.member(userId));
      await this.commit({ type: 'user.removed', userId });
    });
  }

  /** Changes a member's role; AuthError LAST_OWNER when it would leave no owner. */
  async setRole(userId: string, role: Role): Promise<User> {
    return this.exclusively(async () => {
      const user = this.member(userId);
      if (user.role === role) return user;
      this.refuseLastOwner(user);
      await this.commit({ type: 'user.role', userId, role });
      return this.member(userId);
    });
  }

  /** A new API key for a member; its secret is returned here and never again. */
  async createApiKey(userId: string, name: string): Promise<{ key: ApiKey; secret: string }> {
    this.member(userId);
    const secret = newSecret('apiKey');
    const keyId = randomUUID();
    await this.commit({ type: 'apikey.created', keyId, userId, name, digest: secretDigest(this.instanceKey, secret) });
    return { key: this.state.apiKeys.get(keyId)!, secret };
  }

  /** Deletes a key, when it exists and (given `ownerId`) belongs to that user; false otherwise. */
  async deleteApiKey(keyId: string, ownerId?: string): Promise<boolean> {
    const key = this.state.apiKeys.get(keyId);
    if (!key || (ownerId !== undefined && key.userId !== ownerId)) return false;
    await this.commit({ type: 'apikey.deleted', keyId });
    return true;
  }

  /** A scoped token of `userId` for repository ids; valid for exactly one hour from now. */
  async createToken(userId: string, repoIds: number[]): Promise<{ token: ScopedToken; secret: string }> {
    const secret = newSecret('scopedToken');
    const tokenId = randomUUID();
    await this.commit({ type: 'token.created', tokenId, userId, digest: secretDigest(this.instanceKey, secret), repoIds });
    return { token: this.state.tokens.get(tokenId)!, secret };
  }

  /** Revokes a live token of `userId`; false when there is none by that id (or it is someone else's). */
  /** Revokes a live token of `userId`'s; false when there is none by that id (unknown, another's, already revoked or expired). */
  async revokeToken(userId: string, tokenId: string): Promise<boolean> {
    const token = this.state.tokens.get(tokenId);
    if (!token || token.userId !== userId || token.revokedAt !== undefined || this.now() >= token.expiresAt) return false;
    await this.commit({ type: 'token.revoked', tokenId });
    return true;
  }

  async setGrant(userId: string, repoId: number, granted: boolean): Promise<void> {
    this.member(userId);
    await this.commit({ type: granted ? 'grant.added' : 'grant.removed', userId, repoId });
  }

  async setAnonymousAccess(enabled: boolean): Promise<void> {
    await this.commit({ type: 'settings.anonymousAccess', enabled });
  }

  /** Installs a license key once its signature verifies (LicenseError otherwise); an expired one is installed but not active. */
  async installLicense(key: string): Promise<License> {
    const license = readLicense(key, this.options.trustedLicenseKeys);
    await this.commit({ type: 'license.installed', key: key.trim() });
    return license;
  }

  /** Waits for acknowledged writes and a compaction in progress, then releases the journal. */
  close(): Promise<void> {
    return this.committer.close();
  }

  /** Rewrites the log as a snapshot of the state (dropping expired tokens and everything superseded). */
  compact(): Promise<void> {
    return this.committer.compact();
  }

  /** AuthError LAST_OWNER when `user` is the only owner (removing or demoting them would leave none). */
  private refuseLastOwner(user: User): void {
    if (user.role === 'owner' && this.state.owners().length === 1)
      throw new AuthError('LAST_OWNER', `${user.email} is the last owner: make another user an owner first`);
  }

  private commit(...records: AuthRecord[]): Promise<void> {
    return this.committer.commit(...records);
  }

  private exclusively<T>(run: () => Promise<T>): Promise<T> {
    return this.committer.exclusively(run);
  }
}
