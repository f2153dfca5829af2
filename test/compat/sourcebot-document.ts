/**
 * What Sourcebot's published OpenAPI document (docs/api-reference/
 * sourcebot-public.openapi.json, v5.1.x) requires of each response, written
 * here from its facts — field names, types, required lists, enums, nullability —
 * as TypeBox schemas, so that trawl's answers can be checked against them.
 * Extra fields are allowed where the document allows them. Where trawl
 * deliberately differs (docs/errors.md, "Deliberate differences"), the
 * schema says so in a comment.
 */
import { FormatRegistry, Type, type TSchema } from '@sinclair/typebox';

/** The document's `date-time` fields are RFC 3339 timestamps. */
FormatRegistry.Set('date-time', (value) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));

const nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);
const positive = Type.Integer({ minimum: 1 });

const CODE_HOST_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucketServer', 'bitbucketCloud', 'genericGitHost', 'azuredevops'];
const CodeHostType = Type.Union(CODE_HOST_TYPES.map((value) => Type.Literal(value)));
const CONNECTION_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucket', 'azuredevops', 'git'];

const Location = Type.Object({ byteOffset: Type.Number(), lineNumber: Type.Number(), column: Type.Number() });
const Range = Type.Object({ start: Location, end: Location });

export const ServiceError = Type.Object({ statusCode: Type.Number(), errorCode: Type.String(), message: Type.String() });

const RepositoryInfo = Type.Object({
  id: Type.Number(),
  codeHostType: CodeHostType,
  name: Type.String(),
  displayName: Type.Optional(Type.String()),
  webUrl: Type.Optional(Type.String()),
});

const STAT_FIELDS = [
  'actualMatchCount',
  'totalMatchCount',
  'duration',
  'fileCount',
  'filesSkipped',
  'contentBytesLoaded',
  'indexBytesLoaded',
  'crashes',
  'shardFilesConsidered',
  'filesConsidered',
  'filesLoaded',
  'shardsScanned',
  'shardsSkipped',
  'shardsSkippedFilter',
  'ngramMatches',
  'ngramLookups',
  'wait',
  'matchTreeConstruction',
  'matchTreeSearch',
  'regexpsConsidered',
];
/** The document types flushReason as a string; Sourcebot's values are Zoekt's FlushReason names. */
export const FLUSH_REASONS = ['FLUSH_REASON_UNKNOWN_UNSPECIFIED', 'FLUSH_REASON_TIMER_EXPIRED', 'FLUSH_REASON_FINAL_FLUSH', 'FLUSH_REASON_MAX_SIZE'];
const Stats = Type.Object({
  ...Object.fromEntries(STAT_FIELDS.map((field) => [field, Type.Number()])),
  flushReason: Type.Union(FLUSH_REASONS.map((value) => Type.Literal(value))),
});

const SymbolRef = Type.Object({ symbol: Type.String(), kind: Type.String() });

export const SearchResponse = Type.Object({
  stats: Stats,
  files: Type.Array(
    Type.Object({
      fileName: Type.Object({ text: Type.String(), matchRanges: Type.Array(Range) }),
      webUrl: Type.String(),
      externalWebUrl: Type.Optional(Type.String()),
      repository: Type.String(),
      repositoryId: Type.Number(),
      language: Type.String(),
      chunks: Type.Array(
        Type.Object({
          content: Type.String(),
          matchRanges: Type.Array(Range),
          contentStart: Location,
          symbols: Type.Optional(Type.Array(Type.Object({ symbol: Type.String(), kind: Type.String(), parent: Type.Optional(SymbolRef) }))),
        }),
      ),
      branches: Type.Optional(Type.Array(Type.String())),
      content: Type.Optional(Type.String()),
    }),
  ),
  repositoryInfo: Type.Array(RepositoryInfo),
  isSearchExhaustive: Type.Boolean(),
});

export const ListReposResponse = Type.Array(
  Type.Object({
    codeHostType: CodeHostType,
    repoId: Type.Number(),
    repoName: Type.String(),
    webUrl: Type.String(),
    repoDisplayName: Type.Optional(Type.String()),
    externalWebUrl: Type.Optional(Type.String()),
    imageUrl: Type.Optional(Type.String()),
    indexedAt: Type.Optional(nullable(Type.String())),
    pushedAt: Type.Optional(nullable(Type.String())),
    defaultBranch: Type.Optional(Type.String()),
    isFork: Type.Boolean(),
    isArchived: Type.Boolean(),
  }),
);

export const ListConnectionsResponse = Type.Array(
  Type.Object({ id: Type.Integer(), name: Type.String(), connectionType: Type.Union(CONNECTION_TYPES.map((value) => Type.Literal(value))) }),
);
export const VersionResponse = Type.Object({ version: Type.String() });
export const HealthResponse = Type.Object({ status: Type.Literal('ok') });

export const FileSourceResponse = Type.Object({
  source: Type.String(),
  language: Type.String(),
  path: Type.String(),
  repo: Type.String(),
  repoCodeHostType: CodeHostType,
  repoDisplayName: Type.Optional(Type.String()),
  repoExternalWebUrl: Type.Optional(Type.String()),
  webUrl: Type.String(),
  externalWebUrl: Type.Optional(Type.String()),
  blobSha: Type.Optional(Type.String()),
});

export const FileBlameResponse = Type.Object({
  ranges: Type.Array(Type.Object({ hash: Type.String(), path: Type.String(), startLine: positive, lineCount: positive })),
  commits: Type.Record(
    Type.String(),
    Type.Object({
      hash: Type.String(),
      date: Type.String(),
      message: Type.String(),
      authorName: Type.String(),
      authorEmail: Type.String(),
      previous: Type.Optional(Type.Object({ hash: Type.String(), path: Type.String() })),
    }),
  ),
});

/** The document forbids other properties on tree nodes and on the tree response. */
export const FileTreeNode = Type.Recursive((self) =>
  Type.Object({ type: Type.String(), path: Type.String(), name: Type.String(), children: Type.Array(self) }, { additionalProperties: false }),
);
export const TreeResponse = Type.Object({ tree: FileTreeNode }, { additionalProperties: false });

const LineRange = Type.Object({ start: Type.Integer(), lines: Type.Integer() });
export const DiffResponse = Type.Object({
  files: Type.Array(
    Type.Object({
      oldPath: nullable(Type.String()),
      newPath: nullable(Type.String()),
      hunks: Type.Array(Type.Object({ oldRange: LineRange, newRange: LineRange, heading: Type.Optional(Type.String()), body: Type.String() })),
    }),
  ),
});

export const FindSymbolsResponse = Type.Object({
  stats: Type.Object({ matchCount: Type.Number() }),
  files: Type.Array(
    Type.Object({
      fileName: Type.String(),
      repository: Type.String(),
      repositoryId: Type.Number(),
      webUrl: Type.String(),
      language: Type.String(),
      matches: Type.Array(Type.Object({ lineContent: Type.String(), range: Range })),
    }),
  ),
  repositoryInfo: Type.Array(RepositoryInfo),
});

const commitFields = {
  hash: Type.String(),
  date: Type.String(),
  message: Type.String(),
  refs: Type.String(),
  body: Type.String(),
  authorName: Type.String(),
  authorEmail: Type.String(),
};
export const ListCommitsResponse = Type.Array(Type.Object(commitFields));
export const CommitDetail = Type.Object({ ...commitFields, parents: Type.Array(Type.String()) });
export const ListCommitAuthorsResponse = Type.Array(Type.Object({ name: Type.String(), email: Type.String(), commitCount: Type.Integer({ minimum: 0 }) }));

/** The document's token pattern is `^sbst_`; trawl's tokens are `trawl_st_…` (a deliberate difference), so only the type is checked. */
export const CreateScopedAccessTokenResponse = Type.Object({
  id: Type.String(),
  token: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
  repoIds: Type.Array(positive, { minItems: 1 }),
});

export const EeUser = Type.Object({
  id: Type.String(),
  name: nullable(Type.String()),
  email: Type.String(),
  role: Type.Union([Type.Literal('OWNER'), Type.Literal('MEMBER')]),
  suspendedAt: nullable(Type.String({ format: 'date-time' })),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  lastActivityAt: nullable(Type.String({ format: 'date-time' })),
});
export const EeUsersResponse = Type.Array(EeUser);
export const EeDeleteUserResponse = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const EeAuditResponse = Type.Array(
  Type.Object({
    id: Type.String(),
    timestamp: Type.String({ format: 'date-time' }),
    action: Type.String(),
    actorId: Type.String(),
    actorType: Type.String(),
    targetId: Type.String(),
    targetType: Type.String(),
    sourcebotVersion: Type.String(),
    metadata: nullable(Type.Record(Type.String(), Type.Unknown())),
    orgId: Type.Number(),
  }),
);
