/**
 * How many tasks a search runs as (docs/design.md, "Workers"): its share of the workers, or one task when its
 * candidates are few. A task's round trip costs the front end and a worker a fixed amount that a split search
 * pays once per task, which verifying a handful of documents in parallel does not win back.
 */
import type { PatternNode, QueryNode } from '../query/ast.js';
import { requiredLiterals, type LiteralTree } from '../query/literals.js';
import type { ShardFile } from './catalog.js';
import { candidatePostingBytes, type LookupBudget, type TrigramKeys } from './shard/candidates.js';
import { cached } from './shard/memo.js';
import type { ShardCache } from './shard-cache.js';

/**
 * Candidates encoded in fewer posting bytes than this, summed over a search's shards, are verified faster by one
 * worker than split (docs/benchmarks.md, "Peers").
 */
export const FEW_CANDIDATES_BYTES = 1024;

/**
 * The trigram lookups one estimate may make on the front end's thread (≈ 0.1–0.4 µs each): a search over more
 * shards, or with more literals or casings, than they cover is split.
 */
export const ESTIMATE_LOOKUPS = 512;

/** A longer pattern is not analysed on the front end's thread for an estimate (a regex's parse grows with it): the search is split. */
const MAX_ESTIMATED_PATTERN_LENGTH = 256;

/**
 * The number of tasks to split a search of `query` over `shards` into: `share` (its share of the workers), or one
 * when its candidates come from fewer than `fewBytes` posting bytes. `mapped`: this thread's shards.
 */
export function taskCount(query: QueryNode, shards: readonly ShardFile[], share: number, mapped: ShardCache, fewBytes: number): number {
  if (share <= 1 || shards.length <= 1) return share;
  return candidatesUnder(query, shards, mapped, fewBytes) ? 1 : share;
}

/**
 * Whether the posting bytes `query`'s candidates come from (shard/candidates.ts `candidatePostingBytes`) sum to
 * less than `limit` over `shards`, read from the trigram tables this thread has mapped. Stops at the first shard
 * that reaches the limit; a shard this thread has not mapped yet reaches it (a search never waits for the mapping,
 * and one that cannot be opened counts the failure).
 */
function candidatesUnder(query: QueryNode, shards: readonly ShardFile[], mapped: ShardCache, limit: number): boolean {
  const keys: TrigramKeys = new Map();
  const budget: LookupBudget = { lookups: ESTIMATE_LOOKUPS };
  const plans = new Map<PatternNode, LiteralTree>();
  let total = 0;
  for (const file of shards) {
    const shard = mapped.mapped(file.path);
    if (shard === undefined) return false;
    total += postingBytes(query, (node, path) => {
      if (node.value.length > MAX_ESTIMATED_PATTERN_LENGTH) return Infinity;
      const plan = cached(plans, node, () => requiredLiterals(node.value, node));
      return candidatePostingBytes(plan, path ? shard.pathTrigrams : shard.contentTrigrams, keys, budget);
    });
    if (total >= limit) return false;
  }
  return true;
}

/**
 * An upper bound on the posting bytes of `node`'s candidates in one shard, as shard/evaluator.ts `candidatesOf` finds
 * them (a pattern's in the content or path index: `lookup`); Infinity for what the trigram indexes do not narrow (a
 * negation, a repository or branch pattern, a language) and for a regex over content, whose verification costs
 * too much per candidate for one worker to do alone.
 */
function postingBytes(node: QueryNode, lookup: (pattern: PatternNode, path: boolean) => number): number {
  switch (node.type) {
    case 'pattern':
      if (node.target === 'symbol') return lookup(node, false);
      if (node.target === 'path') return lookup(node, true);
      if (node.regex) return Infinity;
      if (node.target === 'content') return lookup(node, false);
      if (node.target === 'contentOrPath') return lookup(node, false) + lookup(node, true);
      return Infinity;
    case 'and':
      return Math.min(...node.operands.map((operand) => postingBytes(operand, lookup)));
    case 'or':
      return node.operands.reduce((sum, operand) => sum + postingBytes(operand, lookup), 0);
    default:
      return Infinity;
  }
}
