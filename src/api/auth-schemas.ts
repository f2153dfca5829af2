/** Request and response schemas of the auth endpoints: scoped tokens, users, audit, API keys, grants, settings, license (spec/api.md §5, §6). */
import { AUTH_LIMITS } from '../auth/limits.js';
import type { TSchema } from '@sinclair/typebox';
import { Type } from './typebox.js';
import { isoDate, longPerPage, page } from './schemas.js';

/** Passwords: shorter ones are refused when set; longer ones always (the hash's cost must not grow with what a caller sends). */

const timestamp = Type.String({ description: 'ISO 8601, millisecond precision' });
const identifier = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
const repositoryName = Type.String({ minLength: 1, maxLength: 1024, description: 'host/owner/name' });
const ScopeRepository = Type.Object({ id: Type.Integer(), name: Type.String() });

export const CreateTokenRequest = Type.Object(
  {
    repos: Type.Optional(
      Type.Array(repositoryName, {
        minItems: 1,
        maxItems: AUTH_LIMITS.reposPerToken,
        description: 'Repositories the token reaches, by name (duplicates collapsed)',
      }),
    ),
    repoIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), {
        minItems: 1,
        maxItems: AUTH_LIMITS.reposPerToken,
        description: "The same by id (Sourcebot's form); send exactly one of the two",
      }),
    ),
  },
  { additionalProperties: false },
);
const tokenFields = {
  id: Type.String(),
  createdAt: timestamp,
  expiresAt: timestamp,
  repos: Type.Array(ScopeRepository),
};
export const CreatedToken = Type.Object({
  ...tokenFields,
  repoIds: Type.Array(Type.Integer()),
  token: Type.String({ description: 'trawl_st_…: shown this once' }),
});
export const TokenList = Type.Array(Type.Object({ ...tokenFields, revokedAt: Type.Optional(timestamp) }));

const role = Type.Union(
  ['owner', 'member', 'OWNER', 'MEMBER'].map((value) => Type.Literal(value)),
  { description: 'owner or member, in either case' },
);
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' });
const password = (description: string) =>
  Type.String({
    minLength: AUTH_LIMITS.passwordMinCharacters,
    maxLength: AUTH_LIMITS.passwordMaxBytes,
    description: `${description} (${AUTH_LIMITS.passwordMinCharacters} characters or more)`,
  });
export const UserSchema = Type.Object({
  id: Type.String(),
  name: nullable(Type.String()),
  email: Type.String(),
  role: Type.Union([Type.Literal('OWNER'), Type.Literal('MEMBER')]),
  suspendedAt: nullable(timestamp),
  createdAt: timestamp,
  updatedAt: timestamp,
  lastActivityAt: nullable(timestamp),
});
export const UserList = Type.Array(UserSchema);
export const UserQuery = Type.Object({ userId: identifier('The user id') });
export const AddUserRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    email,
    role,
    password: Type.Optional(password('trawl: lets the member sign in to the web app with their email and this password')),
  },
  { additionalProperties: false },
);
export const SetRoleRequest = Type.Object({ userId: identifier('The user id'), role }, { additionalProperties: false });
export const Success = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const AuditQuery = Type.Object({
  since: isoDate('ISO 8601; records at or after'),
  until: isoDate('ISO 8601; records at or before'),
  page,
  perPage: longPerPage,
});
export const AuditList = Type.Array(
  Type.Object({
    id: Type.String(),
    timestamp,
    action: Type.String(),
    actorId: Type.String({ description: "'' for an anonymous caller" }),
    actorType: Type.String({ description: 'user, anonymous or system' }),
    targetId: Type.String({ description: "'' when the action has no target" }),
    targetType: Type.String(),
    sourcebotVersion: Type.String({ description: "trawl's version (Sourcebot's field name)" }),
    metadata: nullable(Type.Record(Type.String(), Type.Unknown())),
    orgId: Type.Integer({ description: 'Always 1: one organization' }),
  }),
);

export const CreateApiKeyRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256, description: 'What the key is for' }),
    userId: Type.Optional(identifier('Owners only: create the key for this user')),
  },
  { additionalProperties: false },
);
const apiKeyFields = { id: Type.String(), userId: Type.String(), name: Type.String(), createdAt: timestamp };
export const CreatedApiKey = Type.Object({ ...apiKeyFields, key: Type.String({ description: 'trawl_ak_…: shown this once' }) });
export const ApiKeyList = Type.Array(
  Type.Object({ ...apiKeyFields, lastUsedAt: Type.Optional({ ...timestamp, description: 'Its last use since the daemon started' }) }),
);
export const ApiKeysQuery = Type.Object({ userId: Type.Optional(identifier('Owners only: list this user’s keys')) });

const grantFields = { userId: identifier('The user'), repo: repositoryName };
export const GrantRequest = Type.Object(grantFields, { additionalProperties: false });
export const GrantQuery = Type.Object(grantFields);

export const Settings = Type.Object({ anonymousAccess: Type.Boolean() }, { additionalProperties: false });

export const InstallLicenseRequest = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 8192, description: 'trawl_license_…' }) },
  { additionalProperties: false },
);
export const LicenseResponse = Type.Object({
  installed: Type.Boolean(),
  active: Type.Boolean(),
  licensee: Type.Optional(Type.String()),
  seats: Type.Optional(Type.Integer()),
  seatsUsed: Type.Integer(),
  expiresAt: Type.Optional(timestamp),
});

export const SignInRequest = Type.Object(
  { email, password: Type.String({ minLength: 1, maxLength: AUTH_LIMITS.passwordMaxBytes }) },
  { additionalProperties: false },
);
export const SessionState = Type.Object({
  user: Type.Object({ id: Type.String(), name: Type.String(), email: Type.String(), role: Type.Union([Type.Literal('owner'), Type.Literal('member')]) }),
  sessionId: Type.String(),
  csrfToken: Type.String({ description: 'Send as X-CSRF-Token on every write made with the session cookie' }),
  expiresAt: { ...timestamp, description: 'When the session ends at the latest (sooner when unused: auth.sessionIdleHours)' },
});
export const SessionList = Type.Array(
  Type.Object({ id: Type.String(), createdAt: timestamp, lastSeenAt: timestamp, userAgent: Type.String(), address: Type.String(), current: Type.Boolean() }),
);
export const SetPasswordRequest = Type.Object(
  {
    password: password('The new password'),
    currentPassword: Type.Optional(Type.String({ maxLength: AUTH_LIMITS.passwordMaxBytes, description: 'Required when you have a password' })),
  },
  { additionalProperties: false },
);
