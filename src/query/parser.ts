/**
 * Parses a query string (docs/query-syntax.md) into a QueryNode tree.
 *
 * A recursive-descent parser over characters: a token is a run of
 * non-space characters in which "…" sections may hold spaces. `(` at the
 * start of a token opens a group only if the group closes at a token
 * boundary; otherwise the parser backtracks and the `(` is part of a word
 * (`test(`, `(foo`). Every failure is a QueryParseError naming the token.
 *
 * The grammar of docs/query-syntax.md in one recursive-descent parser: its lexing decides on the
 * parser's backtracking, so they stay together. A query's regexes are checked by regex-checks.ts.
 */
import { resolveLanguage } from '../language/languages.js';
import type { PatternNode, PatternTarget, QueryNode } from './ast.js';
import { MATCH_NOTHING } from './ast.js';
import { QueryParseError } from './errors.js';
import { firstInvalidRegex, invalidRegexError, type RegexTerm } from './regex-checks.js';
import { simplify } from './simplify.js';

export interface ParseOptions {
  /** isRegexEnabled: bare terms and content: values are RE2 regexes. */
  regex: boolean;
  /** isCaseSensitivityEnabled: the case of patterns no `case:` directive governs. */
  caseSensitive: boolean;
}

type CaseMode = 'yes' | 'no' | 'auto';

const PREFIXES = {
  content: 'content',
  c: 'content',
  file: 'file',
  f: 'file',
  repo: 'repo',
  r: 'repo',
  rev: 'rev',
  branch: 'rev',
  b: 'rev',
  lang: 'lang',
  sym: 'sym',
  case: 'case',
  context: 'context',
  reposet: 'reposet',
  archived: 'archived',
  fork: 'fork',
  visibility: 'visibility',
  type: 'type',
  t: 'type',
} as const;

const MAX_GROUP_DEPTH = 64;

/** A term, or a `case:` directive that governs the patterns of its group. */
type Term = { node: QueryNode } | { caseMode: CaseMode };

interface GroupResult {
  node: QueryNode;
  /** Patterns whose case no directive has decided yet: the enclosing group's directive (or the request) will. */
  undecided: PatternNode[];
}

/** Thrown inside a group attempt that cannot be a group, so the `(` is read as part of a word instead. */
class NotAGroup {}

export function parseQuery(query: string, options: ParseOptions): QueryNode {
  const parsed = parseQueryTerms(query, options);
  const failure = firstInvalidRegex(parsed.regexTerms.map((term) => term.value));
  if (failure) throw invalidRegexError(query, parsed.regexTerms[failure.index]!, failure.message);
  return parsed.node;
}

/**
 * The query parsed with its regexes not yet compiled (compiling one can take 100 ms, so the front end
 * has a worker do it: firstInvalidRegex, then invalidRegexError for the one that failed).
 */
export function parseQueryTerms(query: string, options: ParseOptions): { node: QueryNode; regexTerms: RegexTerm[] } {
  const parser = new Parser(query, options);
  return { node: parser.parse(), regexTerms: parser.regexTerms };
}

class Parser {
  private position = 0;
  readonly regexTerms: RegexTerm[] = [];

  constructor(
    private readonly query: string,
    private readonly options: ParseOptions,
  ) {}

  /** The query's `type:`, once one was read. */
  private resultType: 'file' | 'repo' | undefined;

  parse(): QueryNode {
    const { node, undecided } = this.parseGroupBody(0);
    for (const pattern of undecided) pattern.caseSensitive = this.options.caseSensitive;
    if (this.position < this.query.length) throw this.error('unexpected text', this.position); // unreachable: top-level words absorb ')'
    return simplify(node);
  }

  /** Alternatives separated by `or`, each a sequence of terms, up to the end or the group's `)`. */
  private parseGroupBody(depth: number): GroupResult {
    const alternatives: QueryNode[][] = [[]];
    const undecided: PatternNode[] = [];
    let caseMode: CaseMode | undefined;
    let lastOr = -1;
    for (;;) {
      this.skipSpace();
      if (this.atEnd() || (depth > 0 && this.peek() === ')')) break;
      if (this.atOr(depth)) {
        if (alternatives[alternatives.length - 1]!.length === 0) {
          throw this.error(`'or' needs an expression before it`, this.position);
        }
        lastOr = this.position;
        this.position += 2;
        alternatives.push([]);
        continue;
      }
      const term = this.parseTerm(depth, undecided);
      if ('caseMode' in term) caseMode = term.caseMode;
      else alternatives[alternatives.length - 1]!.push(term.node);
    }
    if (alternatives.length > 1 && alternatives[alternatives.length - 1]!.length === 0) {
      throw this.error(`'or' needs an expression after it`, lastOr);
    }
    if (caseMode !== undefined) {
      for (const pattern of undecided.splice(0)) pattern.caseSensitive = decideCase(caseMode, pattern);
    }
    const sequences = alternatives.map((operands): QueryNode => ({ type: 'and', operands }));
    const isEmpty = alternatives.length === 1 && alternatives[0]!.length === 0 && caseMode === undefined;
    return { node: isEmpty ? MATCH_NOTHING : sequences.length === 1 ? sequences[0]! : { type: 'or', operands: sequences }, undecided };
  }

  private parseTerm(depth: number, undecided: PatternNode[]): Term {
    const start = this.position;
    if (this.peek() === '-') {
      const next = this.query[start + 1];
      if (next === undefined || isSpace(next) || (depth > 0 && next === ')')) {
        throw this.error(`'-' must be followed by a prefix expression or a group`, start);
      }
      if (next === '(') {
        const group = this.tryGroup(start + 1, depth);
        if (group) {
          undecided.push(...group.undecided);
          return { node: { type: 'not', operand: group.node } };
        }
      } else if (this.prefixAt(start + 1)) {
        this.position = start + 1;
        const term = this.parsePrefixed(depth, undecided, start);
        if ('caseMode' in term) throw this.error(`case: cannot be negated`, start);
        if (term.node.type === 'resultType') throw this.error(`type: cannot be negated`, start);
        return { node: { type: 'not', operand: term.node } };
      }
      this.position = start;
      return { node: this.bareTerm(depth, undecided) }; // -foo, --verbose, -1: literal terms
    }
    if (this.peek() === '(') {
      const group = this.tryGroup(start, depth);
      if (group) {
        undecided.push(...group.undecided);
        return { node: group.node };
      }
      this.position = start;
      return { node: this.bareTerm(depth, undecided) };
    }
    if (this.prefixAt(start)) return this.parsePrefixed(depth, undecided, start);
    return { node: this.bareTerm(depth, undecided) };
  }

  /**
   * Parses a group opening at `open`, or returns null (position restored)
   * when the `(` cannot open one: no `)` closes it at a token boundary, it
   * encloses nothing, or — in regex mode — it closes within its own token and
   * does not begin with a query expression (`(foo|bar)` and `(a|b)c` are
   * regexes; `(repo:x)`, `(lang:Go)` and `("a b")` are groups, as Sourcebot's
   * clients send them).
   */
  private tryGroup(open: number, depth: number): GroupResult | null {
    if (this.options.regex && closesWithinToken(this.query.slice(open, this.tokenEnd(open))) && !this.opensQueryExpression(open + 1)) return null;
    if (depth + 1 > MAX_GROUP_DEPTH) throw this.error(`groups are nested deeper than ${MAX_GROUP_DEPTH}`, open);
    this.position = open + 1;
    const regexTermsBefore = this.regexTerms.length;
    const resultTypeBefore = this.resultType;
    try {
      const body = this.parseGroupBody(depth + 1);
      this.skipSpace();
      // A group closes at the end of a token, or right before another group: `(a)(b)` is two groups.
      const closesHere = this.peek() === ')' && (this.isBoundary(this.position + 1, depth) || this.query[this.position + 1] === '(');
      if (!closesHere || body.node === MATCH_NOTHING) throw new NotAGroup();
      this.position++;
      return body;
    } catch (error) {
      if (!(error instanceof NotAGroup)) throw error;
      this.position = open;
      this.regexTerms.length = regexTermsBefore;
      this.resultType = resultTypeBefore;
      return null;
    }
  }

  /** True when a prefix expression, a quoted string, a negated one of those, or a group of them starts at `at` (after spaces). */
  private opensQueryExpression(at: number): boolean {
    while (at < this.query.length && isSpace(this.query[at]!)) at++;
    if (this.query[at] === '-') at++;
    const char = this.query[at];
    if (char === '"') return true;
    if (char === '(') return this.opensQueryExpression(at + 1);
    return this.prefixAt(at) !== undefined;
  }

  private parsePrefixed(depth: number, undecided: PatternNode[], termStart: number): Term {
    const name = this.prefixAt(this.position)!;
    const prefix = PREFIXES[name as keyof typeof PREFIXES];
    this.position += name.length + 1;
    const value = this.readValue(depth);
    if (value === '') throw this.error(`${name}: needs a value`, termStart);
    const pattern = (target: PatternTarget, regex: boolean): { node: QueryNode } => {
      const node = this.pattern(target, value, regex, termStart, `${name}: has an invalid regex`);
      undecided.push(node);
      return { node };
    };
    switch (prefix) {
      case 'content':
        return pattern('content', this.options.regex);
      case 'file':
        return pattern('path', true);
      case 'repo':
        return pattern('repository', true);
      case 'sym':
        return pattern('symbol', true);
      case 'rev':
        return value === '*' ? { node: { type: 'allBranches' } } : pattern('branch', true);
      case 'lang': {
        const language = resolveLanguage(value);
        if (!language) throw this.error(`unknown language ${JSON.stringify(value)} in lang:`, termStart);
        return { node: { type: 'language', language } };
      }
      case 'case':
        return { caseMode: this.oneOf(name, value, ['yes', 'no', 'auto'] as const, termStart) };
      case 'context':
        return { node: { type: 'context', name: value } };
      case 'reposet': {
        const names = value.split(',').map((part) => part.trim());
        if (names.some((part) => part === '')) throw this.error(`reposet: has an empty repository name`, termStart);
        return { node: { type: 'repoSet', names } };
      }
      case 'archived':
      case 'fork':
        return { node: { type: prefix, value: this.oneOf(name, value, ['yes', 'no', 'only'] as const, termStart) } };
      case 'visibility':
        return { node: { type: 'visibility', value: this.oneOf(name, value, ['public', 'private', 'any'] as const, termStart) } };
      case 'type': {
        // It applies to the whole query wherever it stands (as in Zoekt), so a query has one.
        const resultType = this.oneOf(name, value, ['file', 'repo'] as const, termStart);
        if (this.resultType !== undefined && this.resultType !== resultType)
          throw this.error(`type:${resultType} after type:${this.resultType}: type: applies to the whole query, so it may have one value`, termStart);
        this.resultType = resultType;
        return { node: { type: 'resultType', value: resultType } };
      }
    }
  }

  private bareTerm(depth: number, undecided: PatternNode[]): QueryNode {
    const start = this.position;
    const node = this.pattern('contentOrPath', this.readValue(depth), this.options.regex, start, 'invalid regex');
    undecided.push(node);
    return node;
  }

  private pattern(target: PatternTarget, value: string, regex: boolean, start: number, invalid: string): PatternNode {
    if (regex) this.regexTerms.push({ value, start, problem: invalid });
    return { type: 'pattern', target, value, regex, caseSensitive: false };
  }

  /**
   * A term's value: a quoted string (escapes \" and \\), or the rest of the
   * token; inside groups, up to the first `)` that no `(` of the value opened
   * and that closes the enclosing groups at the token's end or right before
   * another group (`(a)(b)`, `(x foo(bar))`, `(x bar))`).
   */
  private readValue(depth: number): string {
    const start = this.position;
    if (this.peek() === '"') {
      const { value, end } = this.readQuoted(start);
      if (!this.isBoundary(end, depth)) throw this.error('unexpected text after a quoted value', end);
      this.position = end;
      return value;
    }
    let end = this.tokenEnd(start);
    if (depth > 0) {
      const closer = groupCloser(this.query.slice(start, end), depth);
      if (closer > 0) end = start + closer;
    }
    this.position = end;
    return this.query.slice(start, end);
  }

  private readQuoted(open: number): { value: string; end: number } {
    let value = '';
    for (let i = open + 1; i < this.query.length; i++) {
      const char = this.query[i]!;
      if (char === '"') return { value, end: i + 1 };
      if (char === '\\' && (this.query[i + 1] === '"' || this.query[i + 1] === '\\')) {
        value += this.query[++i];
      } else {
        value += char;
      }
    }
    throw this.error('unbalanced quote', open);
  }

  /** End of the token at `from`: the next space outside a quoted section. */
  private tokenEnd(from: number): number {
    let i = from;
    while (i < this.query.length && !isSpace(this.query[i]!)) {
      if (this.query[i] === '"') i = this.readQuoted(i).end;
      else i++;
    }
    return i;
  }

  private atOr(depth: number): boolean {
    if (!this.query.startsWith('or', this.position)) return false;
    return this.isBoundary(this.position + 2, depth);
  }

  /** True when a token may end at `at`: end of query, a space, or a `)` closing an enclosing group. */
  private isBoundary(at: number, depth: number): boolean {
    const char = this.query[at];
    return char === undefined || isSpace(char) || (depth > 0 && char === ')');
  }

  /** The prefix name (without ':') that starts at `at`, if any. */
  private prefixAt(at: number): string | undefined {
    const match = /^([a-z]+):/.exec(this.query.slice(at, at + 12));
    return match && Object.hasOwn(PREFIXES, match[1]!) ? match[1] : undefined;
  }

  private oneOf<T extends string>(name: string, value: string, allowed: readonly T[], start: number): T {
    if ((allowed as readonly string[]).includes(value)) return value as T;
    throw this.error(`${name}: must be ${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}, not ${JSON.stringify(value)}`, start);
  }

  private skipSpace(): void {
    while (this.position < this.query.length && isSpace(this.query[this.position]!)) this.position++;
  }

  private peek(): string | undefined {
    return this.query[this.position];
  }

  private atEnd(): boolean {
    return this.position >= this.query.length;
  }

  private error(problem: string, position: number): QueryParseError {
    return new QueryParseError(problem, this.query, position);
  }
}

function isSpace(char: string): boolean {
  return char === ' ' || char === '\t' || char === '\n' || char === '\r' || char === '\f' || char === '\v';
}

/** `(` and `)` of a token with their offsets, ignoring backslash-escaped ones and those inside [character classes]. */
function* parens(token: string): Generator<['(' | ')', number]> {
  let inClass = false;
  for (let i = 0; i < token.length; i++) {
    const char = token[i];
    if (char === '\\') i++;
    else if (inClass) inClass = char !== ']';
    else if (char === '[') inClass = true;
    else if (char === '(' || char === ')') yield [char, i];
  }
}

/**
 * Where a word of the token ends inside `depth` groups: at the first `)` that no earlier `(` of the token
 * opened and after which come at most `depth` `)`s, then the token's end or a `(`; -1 when none does.
 */
function groupCloser(token: string, depth: number): number {
  const closesGroups = new RegExp(`^\\){1,${depth}}(?:\\(|$)`);
  let open = 0;
  for (const [paren, at] of parens(token)) {
    if (paren === '(') open++;
    else if (open > 0) open--;
    else if (closesGroups.test(token.slice(at))) return at;
  }
  return -1;
}

/** True when the token's first `(` is closed inside the token itself, as in `(foo|bar)` or `(a|b)c`. */
function closesWithinToken(token: string): boolean {
  let depth = 0;
  for (const [paren] of parens(token)) {
    depth += paren === '(' ? 1 : -1;
    if (depth <= 0) return depth === 0;
  }
  return false;
}

/** `case:auto` is case-sensitive exactly when the pattern has an upper-case letter (outside regex escapes). */
function decideCase(mode: CaseMode, pattern: PatternNode): boolean {
  if (mode !== 'auto') return mode === 'yes';
  const letters = pattern.regex ? pattern.value.replace(/\\./g, '') : pattern.value;
  return /\p{Lu}/u.test(letters);
}
