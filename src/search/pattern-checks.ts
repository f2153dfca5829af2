/**
 * The checks of regex patterns the workers have made (query/compiled-regex.ts `checkedPattern`), remembered
 * on the front end: RE2 gives a pattern the same outcome in every thread, so a query whose patterns are all
 * known is planned without a round trip to a worker, which under load waits behind the searches queued.
 */
import type { PatternCheck } from '../query/compiled-regex.js';

/** Patterns remembered, the least recently used forgotten first. A query is at most 4 KiB: ≤ 2 MiB of strings. */
export const REMEMBERED_PATTERNS = 256;

export class PatternChecks {
  private readonly checks = new Map<string, PatternCheck>();

  /** The checks of `patterns` in order, or undefined when one of them is not known. */
  recall(patterns: readonly string[]): PatternCheck[] | undefined {
    const recalled: PatternCheck[] = [];
    for (const pattern of patterns) {
      const check = this.checks.get(pattern);
      if (check === undefined) return undefined;
      recalled.push(check);
    }
    for (const [index, pattern] of patterns.entries()) this.remember(pattern, recalled[index]!); // the most recently used last
    return recalled;
  }

  /** Remembers the checks of the first `checks.length` of `patterns`. */
  rememberAll(patterns: readonly string[], checks: readonly PatternCheck[]): void {
    for (const [index, check] of checks.entries()) this.remember(patterns[index]!, check);
  }

  private remember(pattern: string, check: PatternCheck): void {
    this.checks.delete(pattern);
    if (this.checks.size >= REMEMBERED_PATTERNS) this.checks.delete(this.checks.keys().next().value!);
    this.checks.set(pattern, check);
  }
}
