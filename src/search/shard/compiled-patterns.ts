/** What a search's patterns compile to, once per search (`CompiledPatterns`), for every shard it runs over. */
import type { NativeRegex } from '../../../native/index.js';
import { checkedRegex, freeRetiredRegexes } from '../../query/compiled-regex.js';
import type { PatternNode } from '../../query/ast.js';
import { requiredLiterals, separatorOf, type LiteralTree } from '../../query/literals.js';
import type { TrigramKeys } from './candidates.js';
import { cached } from './memo.js';
import { compileMatcher, type Matcher } from './matcher.js';

/**
 * What a search's patterns compile to, made once and shared by every shard
 * it runs over. Owned by the search, not kept in WeakMaps keyed by its nodes
 * (docs/design.md, "The hot path's memory").
 */
export class CompiledPatterns {
  private readonly matchers = new Map<PatternNode, Matcher>();
  private readonly literalPlans = new Map<PatternNode, LiteralTree>();
  private readonly anchors = new Map<PatternNode, Matcher | null>();
  private readonly runAnchors = new Map<PatternNode, RunAnchor | null>();
  private readonly branchRegexes = new Map<PatternNode, NativeRegex>();
  readonly trigramKeys: TrigramKeys = new Map();

  /** One per search: no matcher of an earlier search is used once a new one starts. */
  constructor() {
    freeRetiredRegexes();
  }

  matcher(node: PatternNode): Matcher {
    return cached(this.matchers, node, () => compileMatcher(node));
  }

  literalPlan(node: PatternNode): LiteralTree {
    return cached(this.literalPlans, node, () => requiredLiterals(node.value, node));
  }

  /** A matcher of the longest literal every match of the pattern holds, if it has one. */
  anchor(node: PatternNode): Matcher | null {
    return cached(this.anchors, node, () => {
      const literal = longestRequiredLiteral(this.literalPlan(node));
      return literal ? compileMatcher({ value: literal.text, regex: false, caseSensitive: literal.caseSensitive }) : null;
    });
  }

  /**
   * The anchor of a regex whose matches stay within runs between separator bytes (query/literals.ts
   * `separatorOf`), searched in a document's content in its place (matcher.ts `searchAnchorRuns`): the
   * addon finds a literal several times faster than RE2 scans for it.
   */
  runAnchor(node: PatternNode): RunAnchor | null {
    return cached(this.runAnchors, node, () => {
      const literal = node.regex ? longestRequiredLiteral(this.literalPlan(node)) : undefined;
      const separator = literal && Buffer.byteLength(literal.text) >= MIN_ANCHOR_BYTES ? separatorOf(node.value) : undefined;
      return separator === undefined ? null : { literal: literal!, matcher: this.anchor(node)!, separator };
    });
  }

  /** A `rev:` pattern (always a regex) as it is tested against a branch's name. */
  branchRegex(node: PatternNode): NativeRegex {
    return cached(this.branchRegexes, node, () => checkedRegex(node.value, { caseSensitive: node.caseSensitive, multiline: false }));
  }
}

/** A shorter literal (`;`, `->`) is so frequent that searching its runs costs more than RE2's one scan. */
const MIN_ANCHOR_BYTES = 3;

export interface RunAnchor {
  literal: Literal;
  matcher: Matcher;
  separator: number;
}

export type Literal = Extract<LiteralTree, { type: 'literal' }>;

/** The longest literal a tree requires whatever else it holds: itself, or the longest of an 'and's. */
function longestRequiredLiteral(tree: LiteralTree): Literal | undefined {
  if (tree.type === 'literal') return tree.text.length > 0 ? tree : undefined;
  if (tree.type !== 'and') return undefined;
  let longest: Literal | undefined;
  for (const operand of tree.operands) {
    const literal = longestRequiredLiteral(operand);
    if (literal && (!longest || Buffer.byteLength(literal.text) > Buffer.byteLength(longest.text))) longest = literal;
  }
  return longest;
}
