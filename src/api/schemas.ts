/**
 * The request and response schemas of the HTTP API (spec/api.md). One
 * definition gives three things: request validation (src/api/validate.ts),
 * the TypeScript types (Static<…>) and the OpenAPI document
 * (src/api/openapi.ts). Request objects ignore unknown fields, as the spec asks.
 *
 * Over 300 lines: the API's schemas in one table, referenced by one another by $id.
 */
import type { Static, TLiteral, TSchema } from '@sinclair/typebox';
import { Type } from './typebox.js';
import { CODE_HOST_TYPES, CONNECTION_TYPES } from '../index/code-host.js';

/** spec/api.md §9 defaults. */
export const LIMITS = {
  queryBytes: 4096,
  matches: 100_000,
  contextLines: 100,
  treePaths: 1000,
  perPage: 100,
} as const;

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A repository's (or another thing's) name, as every request takes it. */
export const name = (description: string) => Type.String({ minLength: 1, maxLength: 1024, description });

export const Position = Type.Object(
  {
    byteOffset: Type.Integer({ minimum: 0 }),
    lineNumber: Type.Integer({ minimum: 1 }),
    column: Type.Integer({ minimum: 1 }),
  },
  { $id: 'Position' },
);
export const Range = Type.Object({ start: Type.Ref(Position), end: Type.Ref(Position) }, { $id: 'Range' });

export const SearchRequest = Type.Object(
  {
    query: Type.String({ maxLength: LIMITS.queryBytes, description: 'The query (query-syntax.md)' }),
    matches: Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: `Cap on returned match ranges: at most ${LIMITS.matches.toLocaleString('en')} unless \`exhaustive\``,
    }),
    contextLines: Type.Optional(Type.Integer({ minimum: 0, maximum: LIMITS.contextLines, default: 0 })),
    whole: Type.Optional(Type.Boolean({ description: "Include each file's full content" })),
    isRegexEnabled: Type.Optional(Type.Boolean({ default: false })),
    isCaseSensitivityEnabled: Type.Optional(Type.Boolean({ default: false })),
    exhaustive: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Every match up to `matches` (any number), files in the order they are found (not ranked), written as the client reads them, with no bound on the content of the answer (trawl only)',
      }),
    ),
    ranked: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Each file carries its `score`; on /api/stream_search each part holds its own best `matches` instead of what the parts before it left, so a client that orders the files by `score` (higher first), then repository and path, and keeps them within `matches` holds the same files whatever order the parts came in (trawl only)',
      }),
    ),
  },
  { $id: 'PublicSearchRequest' },
);

export const SymbolInfo = Type.Object({
  symbol: Type.String(),
  kind: Type.String(),
  parent: Type.Optional(Type.Object({ symbol: Type.String(), kind: Type.String() })),
});

export const Chunk = Type.Object({
  content: Type.String(),
  matchRanges: Type.Array(Type.Ref(Range)),
  contentStart: Type.Ref(Position),
  symbols: Type.Optional(Type.Array(SymbolInfo)),
});

/** A union of the literals of `values`, typed as such (Static gives the union of the strings). */
export const literals = <const T extends readonly string[]>(values: T) =>
  Type.Union(values.map((value) => Type.Literal(value)) as unknown as { -readonly [K in keyof T]: TLiteral<T[K]> });

const CodeHostType = literals(CODE_HOST_TYPES);

export const RepositoryInfo = Type.Object({
  id: Type.Integer(),
  codeHostType: CodeHostType,
  name: Type.String(),
  displayName: Type.Optional(Type.String()),
  webUrl: Type.Optional(Type.String()),
});

export const FileResult = Type.Object({
  fileName: Type.Object({ text: Type.String(), matchRanges: Type.Array(Type.Ref(Range)) }),
  webUrl: Type.String(),
  externalWebUrl: Type.Optional(Type.String()),
  repository: Type.String(),
  repositoryId: Type.Integer(),
  language: Type.String(),
  chunks: Type.Array(Chunk),
  branches: Type.Optional(Type.Array(Type.String())),
  content: Type.Optional(Type.String()),
  score: Type.Optional(Type.Number({ description: 'Where the file ranks, higher first; present when the request is `ranked` (trawl only)' })),
});

const count = Type.Integer({ minimum: 0 });
const optionalDate = (description: string) => Type.Optional(Type.String({ description }));
export const SearchStats = Type.Object(
  {
    actualMatchCount: count,
    totalMatchCount: count,
    duration: Type.Integer({ minimum: 0, description: 'nanoseconds' }),
    fileCount: count,
    filesSkipped: count,
    contentBytesLoaded: count,
    indexBytesLoaded: count,
    crashes: count,
    shardFilesConsidered: count,
    filesConsidered: count,
    filesLoaded: count,
    shardsScanned: count,
    shardsSkipped: count,
    shardsSkippedFilter: count,
    ngramMatches: count,
    ngramLookups: count,
    wait: Type.Integer({ minimum: 0, description: 'nanoseconds' }),
    matchTreeConstruction: Type.Integer({ minimum: 0, description: 'nanoseconds' }),
    matchTreeSearch: Type.Integer({ minimum: 0, description: 'nanoseconds' }),
    regexpsConsidered: count,
    flushReason: Type.Union([Type.Literal('FLUSH_REASON_FINAL_FLUSH'), Type.Literal('FLUSH_REASON_MAX_SIZE'), Type.Literal('FLUSH_REASON_TIMER_EXPIRED')], {
      description: "Zoekt's names, as Sourcebot answers: all found, cut at the match cap, cut by the time budget",
    }),
  },
  { $id: 'SearchStats' },
);

export const SearchResponse = Type.Object(
  {
    stats: Type.Ref(SearchStats),
    files: Type.Array(FileResult),
    repositoryInfo: Type.Array(RepositoryInfo),
    isSearchExhaustive: Type.Boolean(),
  },
  { $id: 'PublicSearchResponse' },
);

export const FindSymbolRequest = Type.Object(
  {
    symbolName: Type.String({ minLength: 1, maxLength: 1024 }),
    language: Type.Optional(Type.String({ maxLength: 100, description: 'Linguist name; C/C++ and JavaScript/TypeScript/JSX/TSX are families' })),
    revisionName: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, default: 'HEAD' })),
    repoName: Type.Optional(name('Exact repository name')),
  },
  { $id: 'FindSymbolRequest' },
);

export const FindSymbolResponse = Type.Object(
  {
    stats: Type.Object({ matchCount: count }),
    files: Type.Array(
      Type.Object({
        fileName: Type.String(),
        repository: Type.String(),
        repositoryId: Type.Integer(),
        webUrl: Type.String(),
        language: Type.String(),
        matches: Type.Array(Type.Object({ lineContent: Type.String(), range: Type.Ref(Range) })),
      }),
    ),
    repositoryInfo: Type.Array(
      Type.Object({ id: Type.Integer(), codeHostType: CodeHostType, name: Type.String(), displayName: Type.String(), webUrl: Type.String() }),
    ),
  },
  { $id: 'FindSymbolResponse' },
);

export const TreeRequest = Type.Object(
  {
    repoName: name('Repository name'),
    revisionName: Type.String({ minLength: 1, maxLength: 1024 }),
    paths: Type.Array(Type.String({ maxLength: 4096 }), { maxItems: LIMITS.treePaths }),
  },
  { $id: 'TreeRequest' },
);

export const TreeNode = Type.Recursive(
  (self) =>
    Type.Object({
      type: Type.Union([Type.Literal('tree'), Type.Literal('blob'), Type.Literal('commit')]),
      path: Type.String(),
      name: Type.String(),
      children: Type.Array(self),
    }),
  { $id: 'FileTreeNode' },
);
export const TreeResponse = Type.Object({ tree: Type.Ref(TreeNode) }, { $id: 'TreeResponse' });

export const SourceQuery = Type.Object({
  repo: name('Repository name'),
  path: Type.String({ minLength: 1, maxLength: 4096 }),
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
});
export const SourceResponse = Type.Object(
  {
    source: Type.String(),
    encoding: Type.Union([Type.Literal('utf-8'), Type.Literal('base64')]),
    language: Type.String(),
    path: Type.String(),
    repo: Type.String(),
    repoCodeHostType: CodeHostType,
    repoDisplayName: Type.Optional(Type.String()),
    webUrl: Type.String(),
    externalWebUrl: Type.Optional(Type.String()),
    blobSha: Type.String(),
  },
  { $id: 'SourceResponse' },
);

export const page = Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }));
const perPageOf = (fallback: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.perPage, default: fallback }));
export const perPage = perPageOf(30);
/** Commits, commit authors and audit records come 50 to a page by default (Sourcebot's document). */
export const longPerPage = perPageOf(50);

export const ReposQuery = Type.Object({
  page,
  perPage,
  sort: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('pushed')], { default: 'name' })),
  direction: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
  query: Type.Optional(Type.String({ maxLength: 1024, description: 'Substring of the repository name (case-insensitive)' })),
  connectionId: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'Only the repositories of this connection (GET /api/connections)' }),
  ),
});
export const Repository = Type.Object(
  {
    codeHostType: CodeHostType,
    repoId: Type.Integer(),
    repoName: Type.String(),
    repoDisplayName: Type.Optional(Type.String()),
    webUrl: Type.String(),
    externalWebUrl: Type.Optional(Type.String()),
    defaultBranch: Type.String(),
    branches: Type.Array(Type.String()),
    indexedAt: Type.Optional(Type.String()),
    pushedAt: Type.Optional(Type.String()),
    isFork: Type.Boolean(),
    isArchived: Type.Boolean(),
    isPublic: Type.Boolean(),
    indexState: Type.Union([Type.Literal('pending'), Type.Literal('indexing'), Type.Literal('ready'), Type.Literal('error')]),
    connectionId: Type.Optional(Type.Integer({ description: 'Its connection (GET /api/connections)' })),
    syncState: Type.Optional(
      Type.Object(
        {
          connectionName: Type.String(),
          fetchedAt: optionalDate("When its mirror's last fetch completed"),
          error: Type.Optional(Type.String({ description: 'Why its last fetch failed (the last good fetch is what is indexed)' })),
          goneSince: optionalDate('When its host stopped listing it; it is dropped `sync.removeAfterHours` later'),
        },
        { description: 'Repositories of a configured connection only' },
      ),
    ),
  },
  { $id: 'Repository' },
);
export const RepositoryList = Type.Array(Type.Ref('Repository'));

export const isoDate = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

export const ConnectionList = Type.Array(
  Type.Object({
    id: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    connectionType: literals(CONNECTION_TYPES),
    syncState: Type.Optional(
      Type.Object(
        {
          status: Type.Union(['pending', 'syncing', 'synced', 'failed'].map((value) => Type.Literal(value))),
          lastSyncedAt: optionalDate('When the last sync ended'),
          nextSyncAt: optionalDate('When the next one is due'),
          error: Type.Optional(Type.String({ description: "Why the last listing of the host's repositories failed (they were kept as they were)" })),
          warnings: Type.Array(Type.String(), { description: 'Repositories left out, and why' }),
          repoCount: Type.Integer({ description: 'Repositories mirrored (fetched at least once)' }),
          failedRepoCount: Type.Integer({ description: 'Repositories whose last fetch failed' }),
          failedRepos: Type.Optional(
            Type.Array(Type.Object({ repo: Type.String(), error: Type.String() }), { description: 'Owners only: the first 20 of them, and why' }),
          ),
        },
        { description: 'Configured connections only (absent for the code host type of configuration-file repositories)' },
      ),
    ),
  }),
);
export const ConnectionSyncAccepted = Type.Object({ id: Type.Integer(), name: Type.String(), status: Type.Literal('queued') });

export const HealthResponse = Type.Object(
  { status: Type.Union([Type.Literal('ok'), Type.Literal('starting'), Type.Literal('stopping')]) },
  { $id: 'HealthResponse' },
);
export const VersionResponse = Type.Object({ version: Type.String() }, { $id: 'VersionResponse' });
export const ErrorResponse = Type.Object({ statusCode: Type.Integer(), errorCode: Type.String(), message: Type.String() }, { $id: 'PublicApiServiceError' });

/**
 * The `data` of one server-sent event of POST /api/stream_search: a chunk per shard group as it completes, then the
 * final summary (or an error), then the literal `[DONE]`.
 */
export const StreamSearchEvent = Type.Union(
  [
    Type.Object(
      { type: Type.Literal('chunk'), files: Type.Array(FileResult), repositoryInfo: Type.Array(RepositoryInfo), stats: Type.Ref(SearchStats) },
      { title: 'StreamSearchChunk' },
    ),
    Type.Object({ type: Type.Literal('final'), accumulatedStats: Type.Ref(SearchStats), isSearchExhaustive: Type.Boolean() }, { title: 'StreamSearchFinal' }),
    Type.Object({ type: Type.Literal('error'), error: ErrorResponse }, { title: 'StreamSearchError' }),
    Type.Literal('[DONE]', { title: 'StreamSearchDone' }),
  ],
  { $id: 'StreamSearchEvent', description: 'The data of one event (`data: …` then a blank line); a line starting with `:` is a comment, to be skipped' },
);

/** Schemas that others reference by $id: they become components.schemas and are passed to the validators. */

export type FindSymbolRequestBody = Static<typeof FindSymbolRequest>;
