/**
 * The error registry: every errorCode the API answers with, its HTTP status
 * and when it is used. docs/errors.md documents the same table; a test keeps
 * the two identical.
 */

export const ERROR_CODES = {
  INVALID_REQUEST_BODY: { status: 400, when: 'the body is not JSON, not an object, fails the schema, or is over the size limit' },
  INVALID_QUERY_PARAMS: { status: 400, when: 'a query-string parameter fails its schema' },
  MISSING_REQUIRED_QUERY_PARAMETER: { status: 400, when: 'a required query-string parameter is absent' },
  FAILED_TO_PARSE_QUERY: { status: 400, when: 'the search query does not parse; the message quotes the query and says where' },
  INVALID_REQUEST_HEADERS: { status: 400, when: 'a header that may appear once appears twice (`Host`)' },
  INVALID_GIT_REF: {
    status: 400,
    when: 'a ref starts with `-`, contains `..`, `:`, `{/`, `@{`, NUL or control characters, or cannot be resolved (on `/api/commit`: 404)',
  },
  INVALID_REPOSITORY_SCOPE: { status: 400, when: 'a scoped-token request names a repository the caller cannot see' },
  NOT_AUTHENTICATED: { status: 401, when: 'no valid credential and anonymous access is off, or the endpoint never allows anonymous callers' },
  INSUFFICIENT_PERMISSIONS: {
    status: 403,
    when: 'role too low, wrong credential kind, no active license for an EE endpoint, or a `Host` or `Origin` that is not this server’s (DNS rebinding, cross-site requests)',
  },
  LAST_OWNER_CANNOT_BE_REMOVED: { status: 403, when: 'removing the last owner' },
  INVALID_CSRF_TOKEN: { status: 403, when: 'a write authenticated by the session cookie lacks the `Origin` header or the session’s `X-CSRF-Token`' },
  NOT_FOUND: {
    status: 404,
    when: 'repository unknown or not visible to the caller, unknown `/api/*` path, user not found, or an unknown revision on `/api/commit`',
  },
  FILE_NOT_FOUND: { status: 404, when: 'path not in the tree at that revision, or a path with a `..` segment or NUL' },
  SEARCH_CONTEXT_NOT_FOUND: { status: 404, when: 'unknown `context:` name, or a context no configured repository is in (the message names its globs)' },
  SCOPED_ACCESS_TOKEN_NOT_FOUND: { status: 404, when: 'revoking a token that does not exist, belongs to someone else, or is already revoked or expired' },
  METHOD_NOT_ALLOWED: { status: 405, when: 'known path, wrong method (with an `Allow` header)' },
  RATE_LIMITED: { status: 429, when: 'per-credential rate limit exceeded (with `Retry-After`)' },
  UNEXPECTED_ERROR: {
    status: 500,
    when: 'anything unforeseen, or a server fault the message names (a git object missing from a repository, a failed blame, a change not saved because the disk under the data directory is full or read-only); logged with the request id, never leaks internals',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    when: 'shutting down, or the search queue is full (with `Retry-After`); with `cluster.strict`, a search needing a partition no live node serves; a git read (commits, blame, tree, diff, source) ran past the time budget (with `Retry-After`) or its size bound: the message names what to narrow; in a cluster, a credential change etcd did not confirm, or any while its credential log there is damaged (with `Retry-After`)',
  },
} as const satisfies Record<string, { status: number; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The error object every failed request answers with (spec/api.md §1). */
export interface ErrorBody {
  statusCode: number;
  errorCode: ErrorCode;
  message: string;
}

/** An error a route answers with; anything else thrown becomes UNEXPECTED_ERROR. */
export class ApiError extends Error {
  readonly statusCode: number;

  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    /** Extra response headers (Allow, Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_CODES[errorCode].status;
  }

  toBody(): ErrorBody {
    return { statusCode: this.statusCode, errorCode: this.errorCode, message: this.message };
  }
}
