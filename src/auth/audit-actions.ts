/**
 * Every action the audit trail records, with what records it. The type of `AuditEvent.action` is this table's
 * keys, so no other string can be recorded; docs/state-log.md lists the same actions (a test holds the two equal).
 */
export const AUDIT_ACTIONS = {
  search: 'POST /api/search and /api/stream_search (the query; the match count or `stream`)',
  'file.read': 'GET /api/source (repository and path)',
  'tree.read': 'POST /api/tree (repository and paths)',
  'file.blamed': 'GET /api/blame (repository and path)',
  'commits.authors.read': 'GET /api/commits/authors (repository)',
  'token.created': 'a scoped access token created',
  'token.revoked': 'a scoped access token revoked',
  'apikey.created': 'an API key created (by its user, an owner or `trawl admin`)',
  'apikey.deleted': 'an API key deleted',
  'user.added': 'a user added',
  'user.removed': 'a user removed',
  'user.role': "a user's role changed",
  'user.password': 'a password set or changed',
  'grant.added': 'a repository granted to a member',
  'grant.removed': "a member's grant removed",
  'settings.changed': 'instance settings changed (anonymous access)',
  'license.installed': 'a license installed',
  'auth.failed': 'a bad credential, a failed sign-in (with its email) or a failed single sign-on',
  'auth.signed_in': 'a sign-in',
  'auth.signed_out': 'a sign-out (or the end of other sessions)',
  'oauth.client.registered': 'an OAuth client registered (MCP)',
  'oauth.approved': 'an OAuth authorization approved',
  'oauth.denied': 'an OAuth authorization denied',
  'oauth.revoked': 'an OAuth grant revoked',
  'connection.sync': 'an owner asked for a sync of a connection',
} as const;

export type AuditAction = keyof typeof AUDIT_ACTIONS;

/** The read endpoints whose every call is audited (the other reads are not: listings, history, diffs, symbols). */
export const AUDITED_READS: readonly AuditAction[] = ['search', 'file.read', 'tree.read', 'file.blamed', 'commits.authors.read'];
