/** Users and API keys as the API and `trawl admin` show them: ISO 8601 times, never a digest. */
import type { AuditEntry } from './audit.js';
import type { ApiKey, User } from './model.js';

/** Milliseconds since the epoch as ISO 8601 with millisecond precision. */
export const iso = (ms: number) => new Date(ms).toISOString();

export function userView(user: User, lastActivityAt?: number) {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    role: user.role,
    createdAt: iso(user.createdAt),
    ...(lastActivityAt !== undefined ? { lastActivityAt: iso(lastActivityAt) } : {}),
  };
}

/** A member as the EE endpoints answer (Sourcebot's PublicEeUser): upper-case roles, null where there is nothing. */
export function memberView(user: User, lastActivityAt: number | undefined) {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    role: user.role === 'owner' ? ('OWNER' as const) : ('MEMBER' as const),
    suspendedAt: null,
    createdAt: iso(user.createdAt),
    updatedAt: iso(user.updatedAt),
    lastActivityAt: lastActivityAt === undefined ? null : iso(lastActivityAt),
  };
}

export function apiKeyView(key: ApiKey, lastUsedAt?: number) {
  return {
    id: key.id,
    userId: key.userId,
    name: key.name,
    createdAt: iso(key.createdAt),
    ...(lastUsedAt !== undefined ? { lastUsedAt: iso(lastUsedAt) } : {}),
  };
}

/** trawl serves one organization; Sourcebot's audit records name theirs. */
const ORGANIZATION_ID = 1;

/** An audit record as GET /api/ee/audit answers (Sourcebot's PublicEeAuditRecord): '' where there is no actor or target id. */
export function auditRecordView(entry: AuditEntry, version: string) {
  return {
    id: entry.id,
    timestamp: entry.timestamp,
    action: entry.action,
    actorId: entry.actorId ?? '',
    actorType: entry.actorType,
    targetId: entry.targetId ?? '',
    targetType: entry.targetType ?? '',
    sourcebotVersion: version,
    metadata: entry.metadata,
    orgId: ORGANIZATION_ID,
  };
}
