/**
 * The auth store's OAuth grants (docs/oauth.md): an access token and its refresh token recorded by their
 * digests, found by a refresh token, and revoked one by one, by token, or by the authorization they descend from.
 */
import { randomUUID } from 'node:crypto';
import type { AuthState } from './auth-state.js';
import type { AuthRecord, OAuthGrant, User } from './model.js';
import { secretKind } from './secrets.js';

/** What the store lends its grants: its state, clock and digests, and its commit (one record on disk, then applied). */
export interface GrantStore {
  readonly state: AuthState;
  now(): number;
  /** The digest of `secret` under the instance key. */
  digest(secret: string): string;
  /** The member `userId`; AuthError USER_NOT_FOUND otherwise. */
  member(userId: string): User;
  commit(record: AuthRecord): Promise<void>;
  /** `run` alone: no other exclusive change in between. */
  exclusively<T>(run: () => Promise<T>): Promise<T>;
}

export class OAuthGrants {
  constructor(private readonly store: GrantStore) {}

  /**
   * Records an access token (one hour) and its refresh token, made by the OAuth server, for a member and a client:
   * only their digests. `familyId` names the authorization (one code) the grant descends from; a refresh carries it on.
   */
  async save(userId: string, clientId: string, scope: string, accessToken: string, refreshToken: string, familyId: string): Promise<OAuthGrant> {
    this.store.member(userId);
    const grantId = randomUUID();
    await this.store.commit({
      type: 'oauth.grant.issued',
      grantId,
      userId,
      clientId,
      accessDigest: this.store.digest(accessToken),
      refreshDigest: this.store.digest(refreshToken),
      scope,
      familyId,
    });
    return this.store.state.oauthGrants.get(grantId)!;
  }

  /** Revokes a grant unless it already was: true for the one call that revoked it (two refreshes racing with one refresh token: one wins). */
  async revoke(grantId: string): Promise<boolean> {
    return this.store.exclusively(async () => {
      const grant = this.store.state.oauthGrants.get(grantId);
      if (!grant || grant.revokedAt !== undefined) return false;
      await this.store.commit({ type: 'oauth.grant.revoked', grantId });
      return true;
    });
  }

  /** The live grant a refresh token belongs to, or null. */
  ofRefreshToken(refreshToken: string): OAuthGrant | null {
    return secretKind(refreshToken) === 'oauthRefresh' ? this.store.state.grantByRefreshDigest(this.store.digest(refreshToken), this.store.now()) : null;
  }

  /** The revoked grant a refresh token belonged to (it was rotated out or revoked), or null: presenting it is reuse. */
  revokedOfRefreshToken(refreshToken: string): OAuthGrant | null {
    const grant = secretKind(refreshToken) === 'oauthRefresh' ? this.store.state.grantOfRefreshDigest(this.store.digest(refreshToken)) : null;
    return grant?.revokedAt !== undefined ? grant : null;
  }

  /** Revokes every live grant of an authorization (`familyId`): what reuse of one of its tokens or its code ends. */
  async revokeFamily(familyId: string): Promise<void> {
    return this.store.exclusively(async () => {
      for (const grant of [...this.store.state.oauthGrants.values()]) {
        if (grant.familyId === familyId && grant.revokedAt === undefined) await this.store.commit({ type: 'oauth.grant.revoked', grantId: grant.id });
      }
    });
  }

  /** Revokes the grant an access or refresh token belongs to (RFC 7009: unknown tokens are no error); true when one was revoked. */
  async revokeToken(token: string): Promise<boolean> {
    const kind = secretKind(token);
    const grant = kind === 'oauthAccess' || kind === 'oauthRefresh' ? this.store.state.grantOfTokenDigest(this.store.digest(token)) : null;
    return grant ? this.revoke(grant.id) : false;
  }
}
