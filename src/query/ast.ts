/**
 * The parsed form of a query (docs/query-syntax.md). Case sensitivity and
 * regex-ness are resolved at parse time, so evaluation never looks back at
 * request flags or `case:` directives.
 */

/** What a pattern is matched against. */
export type PatternTarget =
  | 'contentOrPath' // bare terms
  | 'content' // content:
  | 'path' // file:
  | 'symbol' // sym:
  | 'repository' // repo:
  | 'branch'; // rev:

export interface PatternNode {
  type: 'pattern';
  target: PatternTarget;
  /** The value as typed, quotes and their escapes removed. */
  value: string;
  /** An RE2 regular expression when true, a literal substring when false. */
  regex: boolean;
  caseSensitive: boolean;
}

export interface AllBranchesNode {
  type: 'allBranches';
}

export interface LanguageNode {
  type: 'language';
  /** The linguist name the user's name or alias resolved to. */
  language: string;
}

export interface ContextNode {
  type: 'context';
  name: string;
}

export interface RepoSetNode {
  type: 'repoSet';
  names: string[];
}

export interface RepositoryFlagNode {
  type: 'archived' | 'fork';
  value: 'yes' | 'no' | 'only';
}

export interface VisibilityNode {
  type: 'visibility';
  value: 'public' | 'private' | 'any';
}

export interface ResultTypeNode {
  type: 'resultType';
  value: 'file' | 'repo';
}

/** All operands hold for the same file; an empty `and` is true. */
export interface AndNode {
  type: 'and';
  operands: QueryNode[];
}

/** Any operand holds; an empty `or` is false (the empty query). */
export interface OrNode {
  type: 'or';
  operands: QueryNode[];
}

export interface NotNode {
  type: 'not';
  operand: QueryNode;
}

export type QueryNode =
  PatternNode | AllBranchesNode | LanguageNode | ContextNode | RepoSetNode | RepositoryFlagNode | VisibilityNode | ResultTypeNode | AndNode | OrNode | NotNode;

/** The query that matches nothing. */
export const MATCH_NOTHING: OrNode = { type: 'or', operands: [] };
