/**
 * The authentication and visibility decision, in one place: every route gets
 * its Caller from `authorize`, and asks the Caller what it may see. Until
 * credentials exist (the auth issue), callers are anonymous: allowed on read
 * endpoints when the instance enables anonymous access, seeing public
 * repositories only.
 */
import type { Config, RepositoryConfig } from '../config/config.js';
import { ApiError } from '../api/errors.js';
import type { Operation } from '../api/openapi.js';
import type { Request } from './http.js';

/** Who may call a route: anyone (health, version, OpenAPI), or readers (search, git, repos). */
export type Access = Operation['access'];

export interface Caller {
  kind: 'anonymous';
  canSee(repo: RepositoryConfig): boolean;
}

const anonymous: Caller = { kind: 'anonymous', canSee: (repo) => repo.public };

/** The caller of `request`, or NOT_AUTHENTICATED when the route needs a credential it does not have. */
export function authorize(config: Config, access: Access, _request: Request): Caller {
  if (access === 'public' || config.auth.anonymousAccess) return anonymous;
  throw new ApiError('NOT_AUTHENTICATED', 'this endpoint needs a credential (Authorization: Bearer <API key>) and anonymous access is off');
}
