/**
 * The types of the public search API (docs/api.md), derived from their schemas
 * (schemas.ts): one definition gives validation, the OpenAPI document and these. The search
 * produces exactly these, so the daemon only serialises. Type-only: the web app imports it.
 */
import type { Static } from '@sinclair/typebox';
import type * as authSchemas from './auth-schemas.js';
import type * as gitSchemas from './git-schemas.js';
import type * as schemas from './schemas.js';

/** byteOffset 0-based from the start of the file; lineNumber and column (code points) 1-based. */
export type Position = Static<typeof schemas.Position>;
/** start inclusive, end exclusive. */
export type Range = Static<typeof schemas.Range>;
export type SymbolInfo = Static<typeof schemas.SymbolInfo>;
/** `content`: whole lines covering the matches plus context, each ending in '\n' except possibly the file's last. */
export type Chunk = Static<typeof schemas.Chunk>;
export type FileResult = Static<typeof schemas.FileResult>;
export type RepositoryInfo = Static<typeof schemas.RepositoryInfo>;
/** All 21 fields, always present. Times are nanoseconds. */
export type SearchStats = Static<typeof schemas.SearchStats>;
export type FlushReason = SearchStats['flushReason'];
export type SearchRequest = Static<typeof schemas.SearchRequest>;
export type SearchResponse = Static<typeof schemas.SearchResponse>;
/** The data of one /api/stream_search event. */
export type StreamSearchEvent = Static<typeof schemas.StreamSearchEvent>;
/** A repository of GET /api/repos, and a connection of GET /api/connections. */
export type RepositoryListing = Static<typeof schemas.Repository>;
export type ConnectionListing = Static<typeof schemas.ConnectionList>[number];
/** A node of POST /api/tree's answer: a directory (`tree`), a file (`blob`) or a submodule (`commit`). */
export type TreeNode = Static<typeof schemas.TreeNode>;

/** A commit of GET /api/commits and GET /api/commit (which adds `parents`); a file's blame; a diff. */
export type Commit = Static<typeof gitSchemas.Commit>;
export type BlameResponse = Static<typeof gitSchemas.BlameResponse>;
export type DiffResponse = Static<typeof gitSchemas.DiffResponse>;

/** The auth endpoints' shapes the web app's Settings area shows (auth-schemas.ts). */
export type SessionState = Static<typeof authSchemas.SessionState>;
export type SessionInfo = Static<typeof authSchemas.SessionList>[number];
export type ApiKeyInfo = Static<typeof authSchemas.ApiKeyList>[number];
export type CreatedApiKey = Static<typeof authSchemas.CreatedApiKey>;
export type ScopedTokenInfo = Static<typeof authSchemas.TokenList>[number];
export type Member = Static<typeof authSchemas.UserSchema>;
export type AuditRecord = Static<typeof authSchemas.AuditList>[number];
export type LicenseInfo = Static<typeof authSchemas.LicenseResponse>;
export type InstanceSettings = Static<typeof authSchemas.Settings>;
