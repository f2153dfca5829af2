/**
 * What text every match of a pattern must contain: an AND/OR tree of
 * literals, from which the index picks candidate documents (via trigrams)
 * before RE2 verifies them. After Russ Cox, "Regular Expression
 * Matching with a Trigram Index", as Zoekt does it, simplified: each
 * sub-expression yields either the finite set of strings it can match, or a
 * requirement tree; sequences multiply exact sets while they stay small.
 *
 * The tree must be sound — every real match satisfies it — and may be weak:
 * `any` (no constraint) is always a correct answer, and is the answer for
 * whatever cannot be analysed (RE2 syntax that ECMAScript lacks, such as
 * `(?i)` or `\Q…\E`). Regexes are parsed with @eslint-community/regexpp in
 * Unicode mode, whose strictness makes most RE2-only syntax fail to parse
 * rather than parse differently.
 */
import { RegExpParser, type AST } from '@eslint-community/regexpp';

export type LiteralTree =
  | { type: 'any' }
  /** `text` must occur as is, or (caseSensitive false) in any ASCII casing. */
  | { type: 'literal'; text: string; caseSensitive: boolean }
  | { type: 'and'; operands: LiteralTree[] }
  | { type: 'or'; operands: LiteralTree[] };

export const ANY: LiteralTree = { type: 'any' };

/** Exact sets larger than this become requirement trees. */
const MAX_EXACT_STRINGS = 16;
/** Character classes with more members than this constrain nothing. */
const MAX_CLASS_EXPANSION = 8;

interface Info {
  /** Every string the sub-expression can match, when that set is small and known. */
  exact: Set<string> | null;
  /** What every match contains, when `exact` is null. */
  match: LiteralTree;
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/**
 * The literals every match of `pattern` contains. When matching ignores case
 * (`caseSensitive: false`, or an `(?i…)` group in a regex) the literals are
 * case-insensitive and only their ASCII runs are kept: the index knows the
 * case variants of ASCII letters only.
 */
export function requiredLiterals(pattern: string, options: { regex: boolean; caseSensitive: boolean }): LiteralTree {
  let tree: LiteralTree;
  if (!options.regex) {
    tree = literal(pattern);
  } else {
    const ast = parsedRegex(pattern);
    if (ast === undefined) return ANY; // RE2 syntax ECMAScript lacks: scan rather than guess
    tree = requirement(disjunction(ast.alternatives));
  }
  const foldsCase = !options.caseSensitive || (options.regex && /\(\?[a-zA-Z]*i[a-zA-Z-]*:/.test(pattern));
  return normalize(foldsCase ? asciiRuns(tree) : tree);
}

/**
 * Bytes that split text into runs, in the order they are tried: a newline (so runs are lines), then
 * punctuation frequent in code. None is a letter, and none occurs inside a multi-byte UTF-8 character.
 */
const SEPARATORS = [...'\n;}{),"'].map((character) => character.charCodeAt(0));

/**
 * A byte (of SEPARATORS) that no match of the regex `pattern` can hold, so that each match lies within a run
 * of text between two of them; undefined when there is none, or when that cannot be told (what
 * requiredLiterals cannot analyse either).
 */
export function separatorOf(pattern: string): number | undefined {
  const ast = parsedRegex(pattern);
  return ast && SEPARATORS.find((byte) => !ast.alternatives.some((alternative) => mayHold(alternative, byte)));
}

/**
 * An upper bound on the size of what RE2 compiles `pattern` to, in characters (a class of ASCII members, `.`, `\w`
 * and the like count one; a quantifier multiplies its element by its bound); Infinity for what cannot be told
 * cheaply: syntax ECMAScript's Unicode mode refuses, Unicode properties, and classes reaching past ASCII, whose case
 * folding costs RE2 most (docs/design.md, "Workers").
 */
export function regexSize(pattern: string): number {
  const ast = parsedRegex(pattern);
  return ast ? sizeOf(ast.alternatives) : Infinity;
}

function sizeOf(nodes: readonly (AST.Alternative | AST.Element)[]): number {
  let size = 0;
  for (const node of nodes) {
    switch (node.type) {
      case 'Alternative':
        size += sizeOf(node.elements);
        break;
      case 'Group':
      case 'CapturingGroup':
        size += sizeOf(node.alternatives);
        break;
      case 'Quantifier':
        size += sizeOf([node.element]) * Math.max(1, Number.isFinite(node.max) ? node.max : node.min + 1);
        break;
      case 'CharacterSet':
        size += node.kind === 'property' ? Infinity : 1;
        break;
      case 'CharacterClass':
        size += node.elements.every(isAsciiMember) ? 1 : Infinity;
        break;
      default: // a character, an assertion
        size += 1;
    }
  }
  return size;
}

function isAsciiMember(element: AST.CharacterClassElement): boolean {
  switch (element.type) {
    case 'Character':
      return element.value < 0x80;
    case 'CharacterClassRange':
      return element.max.value < 0x80;
    case 'CharacterSet':
      return element.kind !== 'property';
    default:
      return false;
  }
}

/** The regex's syntax tree, or undefined for syntax ECMAScript's Unicode mode refuses (RE2's own, such as `(?i)` or `[[:alpha:]]`). */
function parsedRegex(pattern: string): AST.Pattern | undefined {
  try {
    return parser.parsePattern(pattern.replaceAll('(?P<', '(?<'), undefined, undefined, { unicode: true });
  } catch {
    return undefined;
  }
}

const NEWLINE = 0x0a;
/** RE2's `\s` ([\t\n\f\r ]); `\v` is one only in ECMAScript, so it is left out of what surely is one and kept in what may be. */
const SURELY_SPACE = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x20]);
const MAYBE_SPACE = new Set([...SURELY_SPACE, 0x0b]);
const isWordByte = (byte: number) => (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x5f;
const isDigit = (byte: number) => byte >= 0x30 && byte <= 0x39;

/** Whether a match of `node` can hold the ASCII non-letter `byte`; true when unsure. `.` does not match a newline (RE2 without `s`). */
function mayHold(node: AST.Alternative | AST.Element | AST.CharacterClassElement, byte: number): boolean {
  switch (node.type) {
    case 'Alternative':
      return node.elements.some((element) => mayHold(element, byte));
    case 'Group':
      return (byte === NEWLINE && node.modifiers?.add.dotAll === true) || node.alternatives.some((alternative) => mayHold(alternative, byte));
    case 'CapturingGroup':
      return node.alternatives.some((alternative) => mayHold(alternative, byte));
    case 'Quantifier':
      return mayHold(node.element, byte);
    case 'Character':
      return node.value === byte;
    case 'CharacterClassRange':
      return node.min.value <= byte && byte <= node.max.value;
    case 'CharacterSet':
      switch (node.kind) {
        case 'any':
          return byte !== NEWLINE;
        case 'space':
          return node.negate ? !SURELY_SPACE.has(byte) : MAYBE_SPACE.has(byte);
        case 'word':
          return node.negate !== isWordByte(byte);
        case 'digit':
          return node.negate !== isDigit(byte);
        default:
          return true; // \p{…}
      }
    case 'CharacterClass':
      // A negated class matches the byte unless it surely names it.
      return node.negate ? !node.elements.some((element) => names(element, byte)) : node.elements.some((element) => mayHold(element, byte));
    case 'Assertion':
      return node.kind === 'lookahead' || node.kind === 'lookbehind';
    default:
      return true;
  }
}

/** Whether a class element surely matches `byte`. */
function names(element: AST.CharacterClassElement, byte: number): boolean {
  switch (element.type) {
    case 'Character':
    case 'CharacterClassRange':
      return mayHold(element, byte);
    case 'CharacterSet':
      if (element.kind === 'space') return element.negate ? !MAYBE_SPACE.has(byte) : SURELY_SPACE.has(byte);
      return element.kind !== 'property' && mayHold(element, byte);
    default:
      return false;
  }
}

function literal(text: string, caseSensitive = true): LiteralTree {
  return text === '' ? ANY : { type: 'literal', text, caseSensitive };
}

function exactInfo(strings: Iterable<string>): Info {
  return { exact: new Set(strings), match: ANY };
}

function requirement(info: Info): LiteralTree {
  return info.exact ? { type: 'or', operands: [...info.exact].map((text) => literal(text)) } : info.match;
}

function disjunction(alternatives: readonly AST.Alternative[]): Info {
  const infos = alternatives.map((alternative) => sequence(alternative.elements));
  if (infos.every((info) => info.exact)) {
    const union = new Set(infos.flatMap((info) => [...info.exact!]));
    if (union.size <= MAX_EXACT_STRINGS) return { exact: union, match: ANY };
  }
  return { exact: null, match: { type: 'or', operands: infos.map(requirement) } };
}

function sequence(elements: readonly AST.Element[]): Info {
  let exact: Set<string> | null = new Set(['']);
  const parts: LiteralTree[] = [];
  for (const element of elements) {
    const info = analyse(element);
    if (exact && info.exact && exact.size * info.exact.size <= MAX_EXACT_STRINGS) {
      const product = new Set<string>();
      for (const left of exact) for (const right of info.exact) product.add(left + right);
      exact = product;
      continue;
    }
    // The run of exact text ends here: what it held is required, and so is this element's requirement.
    if (exact) parts.push(requirement({ exact, match: ANY }));
    exact = info.exact;
    if (!info.exact) {
      parts.push(info.match);
      exact = new Set(['']);
    }
  }
  if (parts.length === 0) return { exact, match: ANY };
  if (exact) parts.push(requirement({ exact, match: ANY }));
  return { exact: null, match: { type: 'and', operands: parts } };
}

function analyse(element: AST.Element | AST.CharacterClassElement): Info {
  switch (element.type) {
    case 'Character':
      return exactInfo([String.fromCodePoint(element.value)]);
    case 'CharacterClass': {
      const members = element.negate || element.unicodeSets ? null : classMembers(element.elements);
      return members ? exactInfo(members) : { exact: null, match: ANY };
    }
    case 'Group':
    case 'CapturingGroup':
      return disjunction(element.alternatives);
    case 'Quantifier': {
      const inner = analyse(element.element);
      if (element.max === 1 && inner.exact) {
        return element.min === 1 ? inner : exactInfo(['', ...inner.exact]);
      }
      // One or more repetitions contain at least one; zero or more constrain nothing.
      return element.min >= 1 ? { exact: null, match: requirement(inner) } : { exact: null, match: ANY };
    }
    case 'Assertion':
      return exactInfo(['']); // zero-width: neighbours stay adjacent
    default:
      return { exact: null, match: ANY }; // character sets (\d, ., \p{…}), backreferences
  }
}

/** The characters of a small, plain character class, or null. */
function classMembers(elements: readonly AST.CharacterClassElement[]): string[] | null {
  const members: string[] = [];
  for (const element of elements) {
    if (element.type === 'Character') members.push(String.fromCodePoint(element.value));
    else if (element.type === 'CharacterClassRange' && element.max.value - element.min.value < MAX_CLASS_EXPANSION) {
      for (let code = element.min.value; code <= element.max.value; code++) members.push(String.fromCodePoint(code));
    } else return null;
    if (members.length > MAX_CLASS_EXPANSION) return null;
  }
  return members.length > 0 ? members : null;
}

/** Case-insensitive literals, split at non-ASCII characters (whose case variants the index cannot enumerate). */
function asciiRuns(tree: LiteralTree): LiteralTree {
  switch (tree.type) {
    case 'literal':
      return { type: 'and', operands: tree.text.split(/[^\x00-\x7f]+/u).map((run) => literal(run, false)) };
    case 'and':
    case 'or':
      return { type: tree.type, operands: tree.operands.map(asciiRuns) };
    case 'any':
      return tree;
  }
}

/** Flattens, drops `any` from ands, lets `any` absorb ors, and removes duplicate literals. */
export function normalize(tree: LiteralTree): LiteralTree {
  if (tree.type === 'any' || tree.type === 'literal') return tree;
  const operands: LiteralTree[] = [];
  const seen = new Set<string>();
  for (const child of tree.operands.map(normalize)) {
    for (const operand of child.type === tree.type ? child.operands : [child]) {
      if (operand.type === 'any') {
        if (tree.type === 'or') return ANY;
        continue;
      }
      const key = JSON.stringify(operand);
      if (!seen.has(key)) {
        seen.add(key);
        operands.push(operand);
      }
    }
  }
  if (operands.length === 0) return ANY;
  return operands.length === 1 ? operands[0]! : { type: tree.type, operands };
}
