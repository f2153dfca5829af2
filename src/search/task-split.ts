/**
 * How many tasks a search runs as (docs/design.md, "Workers"): its share of the workers, or one task when its
 * candidates are few. A task's round trip costs the front end and a worker a fixed amount that a split search
 * pays once per task, which verifying a handful of documents in parallel does not win back.
 */
import type { PatternNode, QueryNode } from '../query/ast.js';
import { regexSize, requiredLiterals, type LiteralTree } from '../query/literals.js';
import type { ShardFile } from './catalog.js';
import { candidatePostingBytes, trigramLookups, type LookupBudget, type TrigramKeys } from './shard/candidates.js';
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
 * Trigram lookups the evaluator may make on the front end's thread for a search it runs there (≈ 0.1–0.4 µs each):
 * while the search is alone, and while others are in flight (then only one with no candidates: it verifies nothing).
 */
export const FRONT_END_LOOKUPS = { alone: 2048, busy: 256 };

/** The largest regex (query/literals.ts `regexSize`) the front end compiles for a search it runs, alone in flight. */
export const CHEAP_REGEX_SIZE = 64;

/** How a search runs: as `tasks` tasks, and whether the front end starts its one task itself (`startsHere`). */
export interface TaskSplit {
  tasks: number;
  startsHere: boolean;
}

export interface SplitBounds {
  /** The search's share of the workers. */
  share: number;
  /** Whether it is the only search in flight. */
  alone: boolean;
  /** Candidates from fewer posting bytes than this make one task. */
  fewBytes: number;
  /** Whether the front end may run a search itself. */
  frontEnd: boolean;
}

/**
 * How to run `query` over `shards` (their trigram tables read where `mapped`, this thread's, holds them): as its share of the
 * workers, or as one task when its candidates come from fewer than `fewBytes` posting bytes. That task is started on
 * this thread when its lookups are few and it compiles no costly regex (`compilesCheaply`): while it is alone in flight
 * (the thread would otherwise idle meanwhile), and while others are only when it has no candidates and compiles none.
 */
export function taskSplit(query: QueryNode, shards: readonly ShardFile[], mapped: ShardCache, bounds: SplitBounds): TaskSplit {
  const { share, alone, fewBytes, frontEnd } = bounds;
  const splits = share > 1 && shards.length > 1;
  // Busy, a regex rules the front end out without a parse; alone, its size is parsed last, for a search that may run here.
  const mayRunHere = frontEnd && shards.length > 0 && (alone || compilesCheaply(query, false));
  if (!splits && !mayRunHere) return { tasks: share, startsHere: false };
  const estimate = candidatesUnder(query, shards, mapped, splits || alone ? fewBytes : 1);
  const few = estimate.bytes < fewBytes;
  const fewLookups = alone ? estimate.lookups <= FRONT_END_LOOKUPS.alone : estimate.bytes === 0 && estimate.lookups <= FRONT_END_LOOKUPS.busy;
  return { tasks: few ? 1 : share, startsHere: mayRunHere && few && fewLookups && (!alone || compilesCheaply(query, true)) };
}

/**
 * The posting bytes `query`'s candidates come from (shard/candidates.ts `candidatePostingBytes`) summed over `shards`,
 * Infinity from `limit` on, and the trigram lookups the evaluator makes for them; read from the trigram tables this
 * thread has mapped. Stops at the first shard that reaches the limit; a shard this thread has not mapped yet reaches it
 * (a search never waits for the mapping, and one that cannot be opened counts the failure).
 */
function candidatesUnder(query: QueryNode, shards: readonly ShardFile[], mapped: ShardCache, limit: number): { bytes: number; lookups: number } {
  const keys: TrigramKeys = new Map();
  const budget: LookupBudget = { lookups: ESTIMATE_LOOKUPS };
  const plans = new Map<PatternNode, LiteralTree>();
  const lookupsOfPlan = new Map<LiteralTree, number>();
  let bytes = 0;
  let lookups = 0;
  for (const file of shards) {
    const shard = mapped.mapped(file.path);
    if (shard === undefined) return { bytes: Infinity, lookups };
    bytes += postingBytes(query, (node, path) => {
      if (node.value.length > MAX_ESTIMATED_PATTERN_LENGTH) return Infinity;
      const plan = cached(plans, node, () => requiredLiterals(node.value, node));
      const found = candidatePostingBytes(plan, path ? shard.pathTrigrams : shard.contentTrigrams, keys, budget);
      lookups += cached(lookupsOfPlan, plan, () => trigramLookups(plan, keys));
      return found;
    });
    if (bytes >= limit) return { bytes: Infinity, lookups };
  }
  return { bytes, lookups };
}

/**
 * Whether evaluating `node` compiles nothing but regexes of at most CHEAP_REGEX_SIZE (query/literals.ts `regexSize`),
 * and those only when `regexes` allows: RE2 takes 10–250 µs over one, and 160 ms over `[\p{L}\p{N}]{200}`. A pattern
 * longer than the estimate analyses is not parsed here either.
 */
function compilesCheaply(node: QueryNode, regexes: boolean): boolean {
  switch (node.type) {
    case 'pattern':
      return !node.regex || (regexes && node.value.length <= MAX_ESTIMATED_PATTERN_LENGTH && regexSize(node.value) <= CHEAP_REGEX_SIZE);
    case 'and':
    case 'or':
      return node.operands.every((operand) => compilesCheaply(operand, regexes));
    case 'not':
      return compilesCheaply(node.operand, regexes);
    case 'context':
      return false; // its repositories' patterns
    default:
      return true;
  }
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
