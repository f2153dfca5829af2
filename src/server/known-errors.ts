/** The typed errors of the lower layers, as the API's error objects; anything else stays unexpected. */
import { ApiError, type ErrorCode } from '../api/errors.js';
import { AuthError, type AuthErrorCode } from '../auth/errors.js';
import { LicenseError } from '../auth/license.js';
import { StateLogWriteError } from '../auth/state-log.js';
import { ClusterStateCorruptError, ClusterStateUnavailableError } from '../auth/cluster-errors.js';
import { BlameError } from '../git/blame.js';
import { GitObjectMissingError, GitReadStoppedError, InvalidRefError, missingObjectError, PathNotFoundError } from '../git/errors.js';
import { GitProcessesBusyError } from '../git/process-slots.js';
import { QueryParseError } from '../query/errors.js';
import { SearchQueueFullError } from '../search/search-errors.js';
import { SearchPoolClosingError } from '../search/workers.js';
import { UnknownSearchContextError } from '../query/plan.js';

/** The API error of each refusal of the auth store. */
export const AUTH_ERRORS: Record<AuthErrorCode, ErrorCode> = {
  USER_NOT_FOUND: 'NOT_FOUND',
  NO_FREE_SEAT: 'INSUFFICIENT_PERMISSIONS',
  EMAIL_TAKEN: 'INVALID_REQUEST_BODY',
  LAST_OWNER: 'LAST_OWNER_CANNOT_BE_REMOVED',
  WEAK_PASSWORD: 'INVALID_REQUEST_BODY',
  IDENTITY_TAKEN: 'INVALID_REQUEST_BODY',
};

/**
 * The error classes of src/ that are not domain errors a request meets, each with where it is handled instead.
 * The known-errors test finds every error class under src/ and requires it either mapped by `asApiError` or
 * named here, so a new typed error cannot reach a request as UNEXPECTED_ERROR unnoticed.
 */
export const HANDLED_ELSEWHERE: Record<string, string> = {
  ApiError: 'is the API error itself',
  BodyTooLargeError: 'an ApiError (server/http.ts)',
  OAuthApiError: 'an ApiError in the OAuth error shape (server/routes/oauth.ts)',
  OAuthFailure: 'becomes an OAuthApiError in server/routes/oauth.ts',
  OidcError: 'ends a sign-in with a redirect and an audit record (server/routes/oidc.ts)',
  ApiFailure: "the web app's, in the browser",
  AdminError: '`trawl admin`: printed, exit status 1',
  UsageError: '`trawl admin`: printed with the usage, exit status 2',
  ConfigError: 'refused at start (exit 2) and on SIGHUP (logged, the running configuration kept)',
  DataDirectoryLockedError: '`trawl index` beside a daemon: printed, exit status 1',
  StateLogLockedError: 'refused at start and by an offline `trawl admin`',
  StateLogCorruptError: 'refused at start, with the offset: `trawl admin state repair` (docs/state-log.md)',
  RepairRefusedError: '`trawl admin state repair`: printed with the flags that would proceed',
  ShardFormatError: 'a shard a search cannot read is counted (stats.crashes, trawl_shard_failures_total), never thrown at a request',
  ConnectionError: "a sync's failure, recorded on its connection or repository (GET /api/connections)",
  RateLimitedError: "a ConnectionError: the host's rate limit, recorded on its connection",
  RepositoryElsewhere: 'a read forwarded to a node serving the repository (server/peer-forward.ts, from server/app.ts)',
  IndexStoppedError: 'ends an index pass the daemon abandons as it stops (worker/index-protocol.ts); never at a request',
  StaleDecisionError: 'a checked change decided again on the latest state (auth/committer.ts)',
  ForeignStateError: 'refused at start: the state directory is not the cluster’s (auth/etcd-journal.ts)',
  StaleConnectionError: 'a kept-alive connection to a peer closed under a request: sent again once (cluster/peer-client.ts)',
  PeerFilesError: "a peer's answer that is not its files: its partitions asked of another node, or counted missing (cluster/fan-out.ts)",
  ShardDamagedError: "a replica's shard refused as it is copied: the repository built instead (indexer/shard-copy.ts); never at a request",
  PeerPartsError: "a peer's exhaustive answer cut short or failed: its partitions asked of another node, or counted missing (cluster/fan-out.ts)",
};

export function asApiError(thrown: unknown): unknown {
  const error = missingObjectError(thrown);
  if (error instanceof AuthError) return new ApiError(AUTH_ERRORS[error.code], error.message);
  // A license key reaches the store only as the body's `key` (POST /api/admin/license).
  if (error instanceof LicenseError) return new ApiError('INVALID_REQUEST_BODY', `request body field \`key\`: ${error.message}`);
  if (error instanceof QueryParseError) return new ApiError('FAILED_TO_PARSE_QUERY', error.message);
  if (error instanceof UnknownSearchContextError) return new ApiError('SEARCH_CONTEXT_NOT_FOUND', error.message);
  if (error instanceof GitProcessesBusyError) return new ApiError('SERVICE_UNAVAILABLE', error.message, { 'Retry-After': '1' });
  if (error instanceof SearchQueueFullError) return new ApiError('SERVICE_UNAVAILABLE', error.message, { 'Retry-After': '1' });
  if (error instanceof SearchPoolClosingError) return new ApiError('SERVICE_UNAVAILABLE', error.message, { 'Retry-After': '5' });
  if (error instanceof InvalidRefError) return new ApiError('INVALID_GIT_REF', error.message);
  if (error instanceof GitReadStoppedError) return new ApiError('SERVICE_UNAVAILABLE', error.message, error.bound === 'time' ? { 'Retry-After': '1' } : {});
  if (error instanceof BlameError || error instanceof GitObjectMissingError || error instanceof StateLogWriteError)
    return new ApiError('UNEXPECTED_ERROR', error.message);
  if (error instanceof ClusterStateUnavailableError || error instanceof ClusterStateCorruptError)
    return new ApiError('SERVICE_UNAVAILABLE', error.message, { 'Retry-After': '5' });
  if (error instanceof PathNotFoundError) return new ApiError('FILE_NOT_FOUND', `file not found: ${error.message}`);
  return error;
}
