/**
 * The schemas of what the nodes of a cluster send each other (docs/cluster.md, "Search"): a search of some
 * partitions, its query already planned (query/ast.ts's shape, checked node by node).
 */
import { Type } from './typebox.js';
import { literals, RepositoryInfo, SearchRequest, SearchStats } from './schemas.js';

const PATTERN_TARGETS = ['contentOrPath', 'content', 'path', 'symbol', 'repository', 'branch'] as const;
const text = Type.String({ maxLength: 1 << 16 });
const oneOf = (values: readonly string[]) => Type.Union(values.map((value) => Type.Literal(value)));

/** A planned query: what the parser and planner made of a query's text. */
export const PlannedQuery = Type.Recursive(
  (node) =>
    Type.Union([
      Type.Object({ type: Type.Literal('pattern'), target: oneOf(PATTERN_TARGETS), value: text, regex: Type.Boolean(), caseSensitive: Type.Boolean() }),
      Type.Object({ type: Type.Literal('allBranches') }),
      Type.Object({ type: Type.Literal('language'), language: text }),
      Type.Object({ type: Type.Literal('context'), name: text }),
      Type.Object({ type: Type.Literal('repoSet'), names: Type.Array(text, { maxItems: 100_000 }) }),
      Type.Object({ type: oneOf(['archived', 'fork']), value: oneOf(['yes', 'no', 'only']) }),
      Type.Object({ type: Type.Literal('visibility'), value: oneOf(['public', 'private', 'any']) }),
      Type.Object({ type: Type.Literal('resultType'), value: oneOf(['file', 'repo']) }),
      Type.Object({ type: oneOf(['and', 'or']), operands: Type.Array(node, { maxItems: 4096 }) }),
      Type.Object({ type: Type.Literal('not'), operand: node }),
    ]),
  { $id: 'PlannedQuery' },
);

/** POST /api/cluster/search: the planned query, the request it was planned from, the partitions to answer, the repositories of them the caller may see (absent: all). */
export const PeerSearchRequest = Type.Object(
  {
    query: Type.Ref(PlannedQuery),
    request: SearchRequest,
    partitions: Type.Array(Type.Integer({ minimum: 0, maximum: 4095 }), { maxItems: 4096, description: 'The partitions the peer is to answer' }),
    repositories: Type.Optional(
      Type.Array(Type.String({ maxLength: 1024 }), {
        maxItems: 1_000_000,
        description: 'The repositories of them the caller may see; absent: every one (the query still rules out those it does not match)',
      }),
    ),
    files: Type.Optional(Type.Boolean({ description: 'Answer with the files and their ranks for the asking node to merge (`application/x-trawl-files`)' })),
  },
  { additionalProperties: false, $id: 'PeerSearchRequest' },
);

/** How a part's search ended (worker/search-protocol.ts StopReason). */
const STOP_REASONS = ['complete', 'limit', 'deadline', 'cancelled'] as const;
const counts = Type.Array(Type.Integer({ minimum: 0 }));

/** A part of a node's files (search/response/rendered-files.ts FilesPart) as cluster/peer-files.ts sends it: `bytes` of files' JSON follow. */
export const PeerFilesPart = Type.Object({
  stats: SearchStats,
  repositoryInfo: Type.Array(RepositoryInfo),
  outcome: Type.Object({ stop: literals(STOP_REASONS) }),
  keys: Type.Array(Type.Object({ score: Type.Number(), repository: Type.String(), path: Type.String() })),
  repositoryIds: counts,
  ranges: counts,
  foundRanges: counts,
  contentBytes: counts,
  ends: counts,
  cutByContent: Type.Boolean(),
  bytes: Type.Integer({ minimum: 0 }),
});

/** The line that opens a node's files: their parts. */
export const PeerFilesHead = Type.Object({ trawlFiles: Type.Literal(1), parts: Type.Array(PeerFilesPart) });

/** POST /api/cluster/applied: a node asks whether this one has applied the credential log through `revision`. */
export const PeerAppliedRequest = Type.Object(
  { revision: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "A revision of the cluster's credential log" }) },
  { additionalProperties: false },
);

export const PeerApplied = Type.Object({ revision: Type.Integer({ description: 'The revision asked, applied here' }) });

/** POST /api/cluster/audit: a node's newest audit records in a window (ms since the epoch), for a trail across the cluster. */
export const PeerAuditRequest = Type.Object(
  {
    since: Type.Optional(Type.Integer({ minimum: 0 })),
    until: Type.Optional(Type.Integer({ minimum: 0 })),
    limit: Type.Integer({ minimum: 1, maximum: 10_000 }),
  },
  { additionalProperties: false },
);

export const PeerAuditPage = Type.Object({
  total: Type.Integer(),
  entries: Type.Array(
    Type.Object({
      id: Type.String(),
      timestamp: Type.String(),
      action: Type.String(),
      actorId: Type.Union([Type.String(), Type.Null()]),
      actorType: Type.String(),
      targetId: Type.Union([Type.String(), Type.Null()]),
      targetType: Type.Union([Type.String(), Type.Null()]),
      metadata: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});

/** A shard file's name as the indexer gives it (indexer/run-index.ts): never a path. */
const SHARD_FILE = Type.String({ pattern: '^[A-Za-z0-9._-]{1,200}\\.trawl$' });

/** POST /api/cluster/shards: a node asks for the shards this one built of `repository`, to copy them (docs/cluster.md, "Indexing"). */
export const PeerShardsRequest = Type.Object({ repository: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

/** The shards of a repository a node offers: what they were built from, and each file's length and sha256. */
export const PeerShardOffer = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  fingerprint: Type.String({ maxLength: 64, description: 'What in the config and the format shaped the shards, without where the repository is' }),
  branches: Type.Array(Type.Object({ name: Type.String({ maxLength: 1024 }), commit: Type.String({ maxLength: 64 }) }), { maxItems: 1024 }),
  shards: Type.Array(
    Type.Object({ file: SHARD_FILE, bytes: Type.Integer({ minimum: 1, maximum: 0xffffffff }), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    { minItems: 1, maxItems: 100_000 },
  ),
  documents: Type.Integer({ minimum: 0 }),
  contentBytes: Type.Integer({ minimum: 0 }),
  warnings: Type.Array(Type.String({ maxLength: 1 << 16 }), { maxItems: 1000 }),
});

/** POST /api/cluster/shard: one of the files of an offer, its bytes. */
export const PeerShardRequest = Type.Object({ file: SHARD_FILE }, { additionalProperties: false });
