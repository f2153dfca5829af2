/** A query's regexes, checked together: where each stands in the query, the first RE2 refuses, and the error that names it. */
import { checkedPattern, type PatternCheck } from './compiled-regex.js';
import { QueryParseError } from './errors.js';

/** A regex of a query, where it stands and what its error would say. */
export interface RegexTerm {
  value: string;
  /** Offset of the term in the query. */
  start: number;
  /** How an error about it begins ("invalid regex", "file: has an invalid regex"). */
  problem: string;
}

/**
 * RE2 instructions the regexes of one query may compile to together: what one request can make a worker
 * compile (≈ 0.5 µs each) and hold (≈ 17 bytes each). One pattern as costly as RE2 takes is ≈ 400,000.
 */
export const QUERY_REGEX_INSTRUCTIONS = 1_000_000;

/**
 * The first of `values` that RE2 refuses, with its reason, or the first past QUERY_REGEX_INSTRUCTIONS
 * with the others before it; null when it takes them all. `check` tells each one's outcome, in order,
 * up to the one that decides.
 */
export function firstInvalidRegex(
  values: readonly string[],
  check: (value: string, index: number) => PatternCheck = checkedPattern,
): { index: number; message: string } | null {
  let instructions = 0;
  for (let index = 0; index < values.length; index++) {
    const checked = check(values[index]!, index);
    if ('refused' in checked) return { index, message: checked.refused };
    instructions += checked.instructions;
    if (instructions > QUERY_REGEX_INSTRUCTIONS) {
      return { index, message: `the query's regexes compile to more than ${QUERY_REGEX_INSTRUCTIONS.toLocaleString('en-US')} RE2 instructions together` };
    }
  }
  return null;
}

/** The parse error for `term` of `query`, which RE2 refused with `message`. */
export function invalidRegexError(query: string, term: RegexTerm, message: string): QueryParseError {
  return new QueryParseError(`${term.problem} ${JSON.stringify(term.value)} (${message})`, query, term.start);
}
