/**
 * Finding a pattern's matches in bytes: the addon's SIMD substring search
 * for literals (case-insensitive ones too when they are ASCII: RE2's search
 * was a third of such a search's time, at 3.4 GB/s against the addon's 7–10),
 * RE2 for everything else (linear time, so no pattern can hang a search),
 * run by the addon over a batch of matches per call: node-re2's exec loop
 * made a call and a result array per match (docs/design.md, "Per-file work
 * is linear").
 * Ranges are byte offsets.
 *
 * Regexes run in RE2's multi-line mode, as grep users expect: `^` and `$`
 * match at line boundaries. `.` does not match a newline; `\s` does, so a
 * regex may span lines. `\w`, `\d` and `\b` are ASCII (RE2's definition).
 */
import { native, type NativeRegex } from '../../../native/index.js';
import type { PatternNode } from '../../query/ast.js';
import { checkedRegex } from '../../query/compiled-regex.js';
import { escapeRegExp } from '../../query/escape.js';

export interface Matcher {
  /**
   * Start and end byte offsets of successive non-overlapping, non-empty
   * matches in text that start at or after `from` (default 0), at most
   * `limit` of them, flattened: [s0, e0, s1, e1, …].
   */
  ranges(text: Buffer, limit: number, from?: number): number[];
}

export function compileMatcher(pattern: Pick<PatternNode, 'value' | 'regex' | 'caseSensitive'>): Matcher {
  if (!pattern.regex && pattern.caseSensitive) return literalMatcher(Buffer.from(pattern.value, 'utf8'), native.findLiteral);
  const source = pattern.regex ? pattern.value : escapeRegExp(pattern.value);
  const regex = () => regexMatcher(checkedRegex(source, { caseSensitive: pattern.caseSensitive, multiline: true }));
  // RE2 stays the authority: the addon hands a text back to it where U+212A or U+017F could match a k or s.
  if (!pattern.regex && ASCII.test(pattern.value)) return literalMatcher(Buffer.from(pattern.value, 'utf8'), native.findLiteralIgnoringCase, regex);
  return regex();
}

const ASCII = /^[\x00-\x7f]*$/;

/** Offsets found per native call (occurrence starts, or match [start, end] pairs); more calls continue from the last one. */
const FIND_BATCH = 1024;
/**
 * The native call's output, one per thread (docs/design.md, "The hot path's memory"): `ranges` reads it
 * before it returns and runs nothing that could use it meanwhile.
 */
const found = new Uint32Array(FIND_BATCH);

/** `find` is findLiteral or findLiteralIgnoringCase; `unicode` makes the matcher that answers when the latter declines (-1). */
function literalMatcher(needle: Buffer, find: typeof native.findLiteral, unicode?: () => Matcher): Matcher {
  return {
    ranges(text, limit, from = 0) {
      const ranges: number[] = [];
      if (needle.length === 0) return ranges;
      const start = from;
      while (ranges.length < 2 * limit) {
        const wanted = Math.min(FIND_BATCH, limit - ranges.length / 2);
        const count = find(text, needle, from, found.subarray(0, wanted));
        if (count < 0) return unicode!().ranges(text, limit, start);
        for (let i = 0; i < count; i++) ranges.push(found[i]!, found[i]! + needle.length);
        if (count < wanted) break;
        from = found[count - 1]! + needle.length;
      }
      return ranges;
    },
  };
}

function regexMatcher(regex: NativeRegex): Matcher {
  return {
    ranges(text, limit, from = 0) {
      const ranges: number[] = [];
      while (ranges.length < 2 * limit) {
        const wanted = Math.min(FIND_BATCH / 2, limit - ranges.length / 2);
        const count = native.findRegex(regex, text, from, found.subarray(0, 2 * wanted));
        for (let i = 0; i < 2 * count; i++) ranges.push(found[i]!);
        if (count < wanted) break;
        from = found[2 * count - 1]!;
      }
      return ranges;
    },
  };
}
