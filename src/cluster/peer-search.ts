/**
 * What one node asks another in a search across the cluster (POST /api/cluster/search): the planned query, the
 * request it was planned from, the partitions the peer is to answer, and the repositories of them the caller may
 * see. The query travels planned, so the peer neither parses it again nor needs the text it came from (a symbol
 * route's query has none).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SearchRequest } from '../api/schemas.js';
import type { QueryNode } from '../query/ast.js';

const PATTERN_TARGETS = ['contentOrPath', 'content', 'path', 'symbol', 'repository', 'branch'] as const;
const text = Type.String({ maxLength: 1 << 16 });
const oneOf = (values: readonly string[]) => Type.Union(values.map((value) => Type.Literal(value)));

/** A planned query (query/ast.ts), checked node by node. */
const PlannedQuery = Type.Recursive((node: TSchema) =>
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
);

export const PeerSearch = Type.Object(
  {
    query: PlannedQuery,
    request: SearchRequest,
    partitions: Type.Array(Type.Integer({ minimum: 0, maximum: 4095 }), { maxItems: 4096, description: 'The partitions the peer is to answer' }),
    repositories: Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 1_000_000, description: 'The repositories of them the caller may see' }),
  },
  { additionalProperties: false },
);

export type PeerSearch = Omit<Static<typeof PeerSearch>, 'query'> & { query: QueryNode };
