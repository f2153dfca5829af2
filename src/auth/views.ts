/** Users and API keys as the API and `trawl admin` show them: ISO 8601 times, never a digest. */
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

export function apiKeyView(key: ApiKey) {
  return { id: key.id, userId: key.userId, name: key.name, createdAt: iso(key.createdAt) };
}
