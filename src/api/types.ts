/**
 * The types of the public search API (spec: shared/spec/api.md §3), derived from their schemas
 * (schemas.ts): one definition gives validation, the OpenAPI document and these. The search
 * produces exactly these, so the daemon only serialises. Type-only: the web app imports it.
 */
import type { Static } from '@sinclair/typebox';
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
/** A node of POST /api/tree's answer: a directory (`tree`), a file (`blob`) or a submodule (`commit`). */
export type TreeNode = Static<typeof schemas.TreeNode>;
