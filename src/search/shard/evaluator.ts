/**
 * The per-document half of a shard search (shard-search.ts drives it): each query node's candidates from the
 * trigram indexes, and whether a document satisfies the node, with the ranges it contributes, side by side so
 * that the two cannot disagree (docs/query-syntax.md).
 */
import { native } from '../../../native/index.js';
import { inContext, type SearchContextConfig } from '../../config/config.js';
import type { DocumentSymbol } from '../../index/model.js';
import type { Shard } from '../../index/shard-reader.js';
import type { TrigramTable } from '../../index/trigram-table.js';
import type { PatternNode, QueryNode } from '../../query/ast.js';
import type { LiteralTree } from '../../query/literals.js';
import { UnknownSearchContextError } from '../../query/plan.js';
import { attributeHolds } from '../../query/repository-scope.js';
import { candidates, intersectAll, uniteAll, type CandidateStats, type Candidates } from './candidates.js';
import type { CompiledPatterns, Literal } from './compiled-patterns.js';
import { searchAnchorRuns, type Matcher } from './matcher.js';

/** What a shard search counts. */
export interface ShardSearchStats extends CandidateStats {
  filesConsidered: number;
  filesLoaded: number;
  contentBytesLoaded: number;
  matchRanges: number;
  regexpsConsidered: number;
}

/** The ranges a document contributes: flattened [start, end, …] byte ranges of its content and of its path. */
export interface Ranges {
  content: number[];
  path: number[];
}

/** The bare terms of `node` that hold for a document (none under a negation): those a path can satisfy. */
function bareTerms(node: QueryNode, found: PatternNode[] = []): PatternNode[] {
  if (node.type === 'pattern' && node.target === 'contentOrPath') found.push(node);
  if (node.type === 'and' || node.type === 'or') for (const operand of node.operands) bareTerms(operand, found);
  return found;
}

const NO_DOCUMENTS = new Uint32Array(0);

interface BranchMask {
  bits: bigint;
  low: number;
  high: number;
}

export class Evaluator {
  private readonly regexesConsidered = new Set<PatternNode>();
  private readonly branchMasks = new Map<PatternNode, BranchMask>();
  private readonly blockCandidates = new Map<PatternNode, Candidates>();
  private doc = 0;
  private rangeBudget = 0;
  private content: Buffer | null = null;

  constructor(
    private readonly shard: Shard,
    private readonly contexts: Record<string, SearchContextConfig>,
    private readonly stats: ShardSearchStats,
    private readonly patterns: CompiledPatterns,
  ) {}

  /** Documents that can satisfy `node`, from the trigram indexes. */
  candidatesOf(node: QueryNode): Candidates {
    switch (node.type) {
      case 'pattern': {
        const fromIndex = (table: TrigramTable) => candidates(this.patterns.literalPlan(node), table, this.stats, this.patterns.trigramKeys);
        if (node.target === 'content' || node.target === 'symbol') return fromIndex(this.shard.contentTrigrams);
        if (node.target === 'path') return fromIndex(this.shard.pathTrigrams);
        if (node.target === 'contentOrPath') {
          const inContent = fromIndex(this.shard.contentTrigrams);
          const inPath = fromIndex(this.shard.pathTrigrams);
          return uniteAll([inContent, inPath], (found) => found);
        }
        return this.shardLevel(node) ? 'all' : new Uint32Array(0); // repository and branch patterns
      }
      case 'and':
        return intersectAll(node.operands, (operand) => this.candidatesOf(operand));
      case 'or':
        return uniteAll(node.operands, (operand) => this.candidatesOf(operand));
      default:
        return 'all';
    }
  }

  /**
   * The documents of `docs` whose path a bare term of `root` matches, in static-rank order: they are decided
   * first. A file-name match outranks every content match (rank.ts), so the match cap must not cut such a file
   * for the content matches static rank puts before it. Found through the path index: a term with no literal
   * to look up there (`\w{5}`) would cost a match against every path, and puts nothing first.
   */
  nameMatches(root: QueryNode, docs: Candidates): Uint32Array {
    const terms = bareTerms(root);
    const inPaths =
      terms.length === 0
        ? NO_DOCUMENTS
        : uniteAll(terms, (term) => candidates(this.patterns.literalPlan(term), this.shard.pathTrigrams, this.stats, this.patterns.trigramKeys));
    if (inPaths === 'all' || inPaths.length === 0) return NO_DOCUMENTS;
    const hinted = intersectAll<Candidates>([docs, inPaths], (found) => found);
    if (hinted === 'all') return NO_DOCUMENTS;
    return hinted.filter((doc) => {
      const path = this.shard.pathBytes(doc);
      return terms.some((term) => this.matcher(term).ranges(path, 1).length > 0);
    });
  }

  startDocument(doc: number, rangeBudget: number): void {
    this.doc = doc;
    this.rangeBudget = rangeBudget;
    this.content = null;
  }

  /** Whether the current document satisfies `node`; its ranges are added to `out` when it does. */
  holds(node: QueryNode, out: Ranges): boolean {
    switch (node.type) {
      case 'and': {
        const collected: Ranges = { content: [], path: [] };
        for (const operand of node.operands) if (!this.holds(operand, collected)) return false;
        append(out.content, collected.content);
        append(out.path, collected.path);
        return true;
      }
      case 'or': {
        let any = false;
        for (const operand of node.operands) if (this.holds(operand, out)) any = true;
        return any;
      }
      case 'not':
        return !this.holds(node.operand, { content: [], path: [] });
      case 'pattern':
        return this.patternHolds(node, out);
      case 'allBranches':
      case 'resultType':
        return true;
      case 'language':
        return this.shard.language(this.doc) === node.language;
      default:
        return this.shardLevel(node);
    }
  }

  private patternHolds(node: PatternNode, out: Ranges): boolean {
    switch (node.target) {
      case 'content':
        return this.collect(out.content, this.contentRanges(node));
      case 'path':
        return this.collect(out.path, this.matcher(node).ranges(this.shard.pathBytes(this.doc), this.budget()));
      case 'contentOrPath': {
        const inContent = this.collect(out.content, this.contentRanges(node));
        const inPath = this.collect(out.path, this.matcher(node).ranges(this.shard.pathBytes(this.doc), this.budget()));
        return inContent || inPath;
      }
      case 'symbol': {
        const content = this.loadContent();
        this.stats.contentBytesLoaded += content.length;
        const found: number[] = [];
        for (const symbol of this.symbolCandidates(node, content)) {
          const ranges = this.matcher(node).ranges(content.subarray(symbol.start, symbol.end), this.budget());
          for (const offset of ranges) found.push(symbol.start + offset);
        }
        return this.collect(out.content, found);
      }
      case 'branch': {
        const { low, high } = this.branchMask(node);
        return this.shard.isOnBranches(this.doc, low, high);
      }
      case 'repository':
        return this.shardLevel(node);
    }
  }

  /**
   * The definitions of the current document whose names can match a symbol
   * pattern. With a literal every match holds (an anchor), only those whose
   * names overlap one of its occurrences are decoded: a name holding the
   * literal overlaps the occurrence a left-to-right scan found there or just
   * before. Otherwise all, once the pattern's literals are known present.
   */
  private symbolCandidates(node: PatternNode, content: Buffer): DocumentSymbol[] {
    const anchor = this.patterns.anchor(node);
    if (anchor === null) return literalsPresent(this.patterns.literalPlan(node), content) ? this.shard.symbols(this.doc) : [];
    const occurrences = anchor.ranges(content, Number.MAX_SAFE_INTEGER);
    return occurrences.length === 0 ? [] : this.shard.symbolsOverlapping(this.doc, occurrences);
  }

  /** Conditions on the repository, the same for every document of the shard. */
  private shardLevel(node: QueryNode): boolean {
    const repository = this.shard.meta.repository;
    switch (node.type) {
      case 'pattern':
        if (node.target === 'branch') return this.branchMask(node).bits !== 0n;
        return this.matcher(node).ranges(Buffer.from(repository.name), 1).length > 0;
      case 'context': {
        const context = this.contexts[node.name];
        if (!context) throw new UnknownSearchContextError(node.name);
        return inContext(context, repository.name);
      }
      case 'repoSet':
      case 'archived':
      case 'fork':
      case 'visibility':
        return attributeHolds(node, repository);
      default:
        return true;
    }
  }

  /** The shard's branches a `rev:` pattern names, as a mask and as its two 32-bit words. */
  private branchMask(node: PatternNode): BranchMask {
    let mask = this.branchMasks.get(node);
    if (mask === undefined) {
      const regex = this.patterns.branchRegex(node);
      const bits = this.shard.meta.branches.reduce(
        (bits, branch, bit) => (native.testRegex(regex, Buffer.from(branch.name)) ? bits | (1n << BigInt(bit)) : bits),
        0n,
      );
      mask = { bits, low: Number(bits & 0xffffffffn), high: Number(bits >> 32n) };
      this.branchMasks.set(node, mask);
    }
    return mask;
  }

  private matcher(node: PatternNode): Matcher {
    if (node.regex && !this.regexesConsidered.has(node)) {
      this.regexesConsidered.add(node);
      this.stats.regexpsConsidered++;
    }
    return this.patterns.matcher(node);
  }

  /** The current document's content (a view of the mapping); the bytes searched are counted where they are searched. */
  private loadContent(): Buffer {
    if (this.content === null) {
      this.content = this.shard.content(this.doc);
      this.stats.filesLoaded++;
    }
    return this.content;
  }

  /**
   * The matches of a content pattern in the current document. In a document
   * with blocks (docs/index-format.md, BLKS), a literal, or the anchor of a
   * regex searched by its runs (CompiledPatterns.runAnchor), is searched
   * only in the runs of blocks whose trigrams can hold it: an occurrence that
   * starts in a block has all its trigrams in that block's postings.
   */
  private contentRanges(node: PatternNode): number[] {
    const content = this.loadContent();
    const matcher = this.matcher(node);
    const anchor = node.regex ? this.patterns.runAnchor(node) : null;
    const { first, end } = this.shard.blocksOf(this.doc);
    const literal = first === end || (node.regex && !anchor) ? undefined : (anchor?.literal ?? this.patterns.literalPlan(node));
    const blocks = literal?.type === 'literal' ? this.candidateBlocks(node, literal) : 'all';
    if (blocks === 'all' || literal?.type !== 'literal') {
      this.stats.contentBytesLoaded += content.length;
      if (!anchor) return matcher.ranges(content, this.budget());
      const found: number[] = [];
      searchAnchorRuns(anchor.matcher, matcher, content, anchor.separator, content.length, 0, 0, found, this.budget());
      return found;
    }
    const found: number[] = [];
    // A case-insensitive match can be up to 3 bytes per byte of the literal (a 1-byte letter matching a 3-byte one).
    const longestMatch = 3 * Buffer.byteLength(literal.text, 'utf8');
    const blockBytes = this.shard.blockBytes;
    let searched = 0;
    for (let i = lowerBound(blocks, first); i < blocks.length && blocks[i]! < end;) {
      let runEnd = i + 1;
      while (runEnd < blocks.length && blocks[runEnd]! < end && blocks[runEnd] === blocks[runEnd - 1]! + 1) runEnd++;
      const from = (blocks[i]! - first) * blockBytes;
      const to = Math.min(content.length, (blocks[runEnd - 1]! - first + 1) * blockBytes); // occurrences start before `to`
      const scanEnd = Math.min(content.length, to + longestMatch - 1);
      this.stats.contentBytesLoaded += scanEnd - from;
      if (anchor) {
        searched = searchAnchorRuns(anchor.matcher, matcher, content, anchor.separator, scanEnd, from, searched, found, this.budget());
      } else {
        const ranges = matcher.ranges(content.subarray(0, scanEnd), Math.max(1, this.budget() - found.length / 2), from);
        for (let r = 0; r < ranges.length && ranges[r]! < to; r += 2) found.push(ranges[r]!, ranges[r + 1]!);
      }
      if (found.length / 2 >= this.budget()) break;
      i = runEnd;
    }
    return found;
  }

  /** Blocks of this shard that can hold `literal`'s occurrences, the pattern's or its anchor's ('all' when the block index cannot tell). */
  private candidateBlocks(node: PatternNode, literal: Literal): Candidates {
    let blocks = this.blockCandidates.get(node);
    if (blocks === undefined) {
      const usable = Buffer.byteLength(literal.text, 'utf8') <= this.shard.blockReach + 1;
      blocks = usable ? candidates(literal, this.shard.blockTrigrams, this.stats, this.patterns.trigramKeys) : 'all';
      this.blockCandidates.set(node, blocks);
    }
    return blocks;
  }

  /** At least one range is always asked for, so a file is decided even when the budget is spent. */
  private budget(): number {
    return Math.max(1, this.rangeBudget);
  }

  private collect(into: number[], ranges: number[]): boolean {
    append(into, ranges);
    return ranges.length > 0;
  }
}

/** Appends `values` to `into` one by one: a spread of a document's ranges (`\w+` finds 100,000s) can overflow the stack. */
function append(into: number[], values: readonly number[]): void {
  for (const value of values) into.push(value);
}

/** Index of the first value ≥ `value` in an ascending array. */
export function lowerBound(values: Uint32Array, value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Whether content can satisfy a literal tree, checking case-sensitive
 * literals with indexOf; case-insensitive ones are assumed present (the
 * trigram lookup already required some casing of them).
 */
function literalsPresent(tree: LiteralTree, content: Buffer): boolean {
  switch (tree.type) {
    case 'any':
      return true;
    case 'literal':
      return !tree.caseSensitive || content.indexOf(tree.text, 0, 'utf8') !== -1;
    case 'and':
      return tree.operands.every((operand) => literalsPresent(operand, content));
    case 'or':
      return tree.operands.some((operand) => literalsPresent(operand, content));
  }
}
