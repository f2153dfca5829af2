/**
 * The auth state the state log's records build: users and their roles, API
 * keys, scoped access tokens, repository grants, the anonymous-access
 * setting and the license key; and the decisions made from it — which credential a secret's
 * digest is, and which repositories a caller can see. Records of unknown
 * types are skipped, so a log written by a newer trawl still replays.
 */
import type { StateRecord } from './state-record.js';
import { sameDigest } from './secrets.js';

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
  | { type: 'apikey.created'; keyId: string; userId: string; name: string; digest: string }
  | { type: 'apikey.deleted'; keyId: string }
  | { type: 'token.created'; tokenId: string; userId: string; digest: string; repoIds: number[] }
  | { type: 'token.revoked'; tokenId: string }
  | { type: 'grant.added' | 'grant.removed'; userId: string; repoId: number }
  | { type: 'settings.anonymousAccess'; enabled: boolean }
  | { type: 'license.installed'; key: string };

/** A state-log record of an auth record, stamped `at`. */
export function authRecord(record: AuthRecord, at: number): StateRecord {
  return { v: 1, at, ...record };
}

export type Credential = { kind: 'apiKey'; key: ApiKey; user: User } | { kind: 'scopedToken'; token: ScopedToken; user: User };

export class AuthState {
  readonly users = new Map<string, User>();
  readonly apiKeys = new Map<string, ApiKey>();
  readonly tokens = new Map<string, ScopedToken>();
  /** userId → repository ids granted. */
  readonly grants = new Map<string, Set<number>>();
  /** Set by an administrator; until then (undefined) the config file's `auth.anonymousAccess` decides. */
  anonymousAccess: boolean | undefined;
  /** The license key installed last (verified by its reader, not here). */
  licenseKey: string | undefined;
  private readonly keyByDigest = new Map<string, string>();
  private readonly tokenByDigest = new Map<string, string>();

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
        this.grants.delete(r.userId);
        for (const key of this.apiKeys.values()) if (key.userId === r.userId) this.deleteKey(key.id);
        for (const token of this.tokens.values()) if (token.userId === r.userId && token.revokedAt === undefined) token.revokedAt = record.at;
        break;
      case 'apikey.created':
        this.apiKeys.set(r.keyId, { id: r.keyId, userId: r.userId, name: r.name, digest: r.digest, createdAt: record.at });
        this.keyByDigest.set(r.digest, r.keyId);
        break;
      case 'apikey.deleted':
        this.deleteKey(r.keyId);
        break;
      case 'token.created':
        this.tokens.set(r.tokenId, { id: r.tokenId, userId: r.userId, digest: r.digest, repoIds: [...r.repoIds], createdAt: record.at, expiresAt: record.at + SCOPED_TOKEN_LIFETIME_MS });
        this.tokenByDigest.set(r.digest, r.tokenId);
        break;
      case 'token.revoked':
        if (this.tokens.has(r.tokenId)) this.tokens.get(r.tokenId)!.revokedAt = record.at;
        break;
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
    return caller.kind === 'apiKey' ? userSees : userSees && caller.token.repoIds.includes(repo.id);
  }

  private userCanSee(user: User, repo: VisibleRepository): boolean {
    return user.role === 'owner' || repo.public || (this.grants.get(user.id)?.has(repo.id) ?? false);
  }

  /** The owners left. */
  owners(): User[] {
    return [...this.users.values()].filter((user) => user.role === 'owner');
  }

  /** Records that rebuild this state (for compaction); expired tokens are dropped (revoked ones stay listed until they would have expired). */
  snapshot(now: number): StateRecord[] {
    const records: StateRecord[] = [];
    if (this.anonymousAccess !== undefined) records.push(authRecord({ type: 'settings.anonymousAccess', enabled: this.anonymousAccess }, now));
    if (this.licenseKey !== undefined) records.push(authRecord({ type: 'license.installed', key: this.licenseKey }, now));
    for (const user of this.users.values()) {
      records.push(authRecord({ type: 'user.added', userId: user.id, name: user.name, email: user.email, role: user.role }, user.createdAt));
      if (user.updatedAt !== user.createdAt) records.push(authRecord({ type: 'user.role', userId: user.id, role: user.role }, user.updatedAt));
    }
    for (const [userId, repoIds] of this.grants) for (const repoId of repoIds) records.push(authRecord({ type: 'grant.added', userId, repoId }, now));
    for (const key of this.apiKeys.values()) records.push(authRecord({ type: 'apikey.created', keyId: key.id, userId: key.userId, name: key.name, digest: key.digest }, key.createdAt));
    for (const token of this.tokens.values()) {
      if (now >= token.expiresAt) continue;
      records.push(authRecord({ type: 'token.created', tokenId: token.id, userId: token.userId, digest: token.digest, repoIds: token.repoIds }, token.createdAt));
      if (token.revokedAt !== undefined) records.push(authRecord({ type: 'token.revoked', tokenId: token.id }, token.revokedAt));
    }
    return records;
  }
}
