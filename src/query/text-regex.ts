/**
 * Texts tested against an RE2 regex given as source and flags (/api/commits' `query` and `author`).
 * Run in a search worker: RE2 can take 100 ms and more to compile some 1 KiB patterns, or to refuse
 * them, time the front end's thread must not spend. The last few patterns stay compiled, refusals too.
 */
import RE2 from 're2';

/** 1 per text that matches, 0 per text that does not; or why RE2 refuses the pattern. */
export type TextsMatched = { matched: Uint8Array } | { invalid: string };

/**
 * Compiled patterns (or refusals) kept per thread, the least recently used dropped first: a request's batches
 * reuse its pattern; few, because a costly pattern RE2 accepts holds ≈ 7 MiB (`[\p{L}\p{N}]{300}`).
 */
const KEPT_PATTERNS = 4;
const compiled = new Map<string, RE2 | string>();

/** Which of `texts` match `pattern` compiled with `flags` (not `g` or `y`: a test must not move `lastIndex`). */
export function textsMatching(pattern: string, flags: string, texts: readonly string[]): TextsMatched {
  const regex = compiledPattern(pattern, flags);
  if (typeof regex === 'string') return { invalid: regex };
  const matched = new Uint8Array(texts.length);
  for (const [i, text] of texts.entries()) matched[i] = regex.test(text) ? 1 : 0;
  return { matched };
}

function compiledPattern(pattern: string, flags: string): RE2 | string {
  const key = `${flags}/${pattern}`;
  let regex = compiled.get(key);
  if (regex === undefined) {
    try {
      regex = new RE2(pattern, flags);
    } catch (error) {
      regex = (error as Error).message;
    }
    if (compiled.size >= KEPT_PATTERNS) compiled.delete(compiled.keys().next().value!);
  } else {
    compiled.delete(key); // set again below: the most recently used last
  }
  compiled.set(key, regex);
  return regex;
}
