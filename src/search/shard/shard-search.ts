/**
 * Evaluates a parsed query over one shard: picks candidate documents through
 * the trigram indexes, then decides each candidate in its evaluation order
 * (those whose path a bare term matches first, then the rest, each in
 * static-rank order) and collects its match ranges, until the shard's match
 * cap, the deadline or a cancellation stops it, or its task gives its worker
 * up (TaskSlice). The same query over the same shard finds the same files.
 *
 * Semantics (docs/query-syntax.md): terms are ANDed per file; a file
 * satisfying an operand contributes that operand's ranges; negations
 * contribute none. Without a rev: term only the default branch (HEAD, bit 0)
 * is searched.
 *
 * One evaluator holds each node type's candidates and its per-document decision side by side, so
 * that the two cannot disagree; what the patterns compile to is compiled-patterns.ts.
 */
import type { SearchContextConfig } from '../../config/config.js';
import { recycleIdLists } from '../../index/id-lists.js';
import type { Shard } from '../../index/shard-reader.js';
import type { PatternNode, QueryNode } from '../../query/ast.js';
import type { DocumentMatch, StopReason } from '../../worker/search-protocol.js';
import { CompiledPatterns } from './compiled-patterns.js';
import { Evaluator, lowerBound, type Ranges, type ShardSearchStats } from './evaluator.js';

/** Ranges collected per document when documents are counted (their content ranges are not returned): a search holds at most files × this. */
const RANGES_PER_COUNTED_FILE = 16;

export interface ShardSearchLimits {
  /** Stop once this many match ranges are found in this shard (callers ask for `matches + 1` to learn whether more exist). */
  maxMatchRanges: number;
  /** Count a matching document as one, whatever its ranges (type:file and type:repo results are files without chunks). */
  countFiles?: boolean;
  /** performance.now() value after which the search stops. */
  deadline: number;
  /** Checked between documents; true stops the search. */
  isCancelled(): boolean;
  /** Where to start in the shard's evaluation order: the documents before it were an earlier task's (a search resumed). */
  startAt?: number;
  /** When the task gives its worker up: the search stops 'yielded' before the document `resumeAt` names. */
  slice?: TaskSlice;
}

/**
 * A task's turn on its worker: over once it has evaluated documents for `ms` (counted from its first, so that
 * every task gets on) while `contended()` says another caller waits (search/contention.ts), or once it holds
 * `partRanges` (SearchTask.partRanges).
 */
export class TaskSlice {
  private endsAt: number | undefined;
  private held = 0;

  constructor(
    private readonly ms: number,
    private readonly contended: () => boolean,
    private readonly partRanges = Infinity,
  ) {}

  /** The task found `found` more (match ranges, or files when they are counted). */
  took(found: number): void {
    this.held += found;
  }

  /** Whether the task should give its worker up before a document it would evaluate at `now` (performance.now()). */
  over(now: number): boolean {
    if (this.held >= this.partRanges) return true;
    this.endsAt ??= now + this.ms;
    return now > this.endsAt && this.contended();
  }
}

export interface ShardSearchResult {
  matches: DocumentMatch[];
  /** 'yielded': the task's slice is over (ShardSearchLimits.slice); the shard's rest starts at `resumeAt`, a position in its evaluation order. */
  stopReason: StopReason | 'yielded';
  resumeAt?: number;
  /** What this part counted against `maxMatchRanges`: match ranges, or files with `countFiles`. */
  counted: number;
  stats: ShardSearchStats;
}

/** `patterns`: pass the same CompiledPatterns for every shard of a search. */
export function searchShard(
  shard: Shard,
  query: QueryNode,
  contexts: Record<string, SearchContextConfig>,
  limits: ShardSearchLimits,
  patterns = new CompiledPatterns(),
): ShardSearchResult {
  const stats: ShardSearchStats = {
    ngramLookups: 0,
    ngramMatches: 0,
    indexBytesLoaded: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    contentBytesLoaded: 0,
    matchRanges: 0,
    regexpsConsidered: 0,
  };
  recycleIdLists(); // no id list of the shard searched before is used again
  const evaluator = new Evaluator(shard, contexts, stats, patterns);
  const root: QueryNode = mentionsBranches(query) ? query : { type: 'and', operands: [query, DEFAULT_BRANCH] };
  const matches: DocumentMatch[] = [];
  const docs = evaluator.candidatesOf(root);
  // Positions 0 … first.length − 1 are the path matches; the rest are `docs` in order, less those.
  const first = evaluator.nameMatches(root, docs);
  const total = first.length + (docs === 'all' ? shard.documentCount : docs.length);
  let counted = 0;
  for (let i = limits.startAt ?? 0; i < total; i++) {
    if (limits.isCancelled()) return { matches, stopReason: 'cancelled', counted, stats };
    const now = performance.now();
    if (now > limits.deadline) return { matches, stopReason: 'deadline', counted, stats };
    const at = i - first.length;
    const doc = at < 0 ? first[i]! : docs === 'all' ? at : docs[at]!;
    if (at >= 0 && first.length > 0 && first[lowerBound(first, doc)] === doc) continue;
    if (limits.slice?.over(now)) return { matches, stopReason: 'yielded', resumeAt: i, counted, stats };
    stats.filesConsidered++;
    const ranges: Ranges = { content: [], path: [] };
    evaluator.startDocument(doc, limits.countFiles ? RANGES_PER_COUNTED_FILE : limits.maxMatchRanges - counted);
    if (!evaluator.holds(root, ranges)) continue;
    matches.push({ doc, content: ranges.content, path: ranges.path });
    const found = (ranges.content.length + ranges.path.length) / 2;
    stats.matchRanges += found;
    const weight = limits.countFiles ? 1 : found;
    counted += weight;
    limits.slice?.took(weight);
    if (counted >= limits.maxMatchRanges) return { matches, stopReason: 'limit', counted, stats };
  }
  return { matches, stopReason: 'complete', counted, stats };
}

/** Stands for "rev:HEAD" when the query names no branch: the default branch is bit 0 of every shard. */
const DEFAULT_BRANCH: PatternNode = { type: 'pattern', target: 'branch', value: '^HEAD$', regex: true, caseSensitive: true };

function mentionsBranches(node: QueryNode): boolean {
  if (node.type === 'allBranches' || (node.type === 'pattern' && node.target === 'branch')) return true;
  if (node.type === 'and' || node.type === 'or') return node.operands.some(mentionsBranches);
  return node.type === 'not' && mentionsBranches(node.operand);
}
