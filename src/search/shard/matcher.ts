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
   * matches in text that start at or after `from` (default 0) and end at or
   * before `to` (default the text's end; for a regex, the text after it is
   * context for `$` and `\b`, as the text before `from` is for `^` and `\b`),
   * at most `limit` of them, flattened: [s0, e0, s1, e1, …].
   */
  ranges(text: Buffer, limit: number, from?: number, to?: number): number[];
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
    ranges(whole, limit, from = 0, to = whole.length) {
      const ranges: number[] = [];
      if (needle.length === 0) return ranges;
      const text = to === whole.length ? whole : whole.subarray(0, to);
      const start = from;
      while (ranges.length < 2 * limit) {
        const wanted = Math.min(FIND_BATCH, limit - ranges.length / 2);
        const count = find(text, needle, from, found.subarray(0, wanted));
        if (count < 0) return unicode!().ranges(whole, limit, start, to);
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
    ranges(text, limit, from = 0, to = text.length) {
      const ranges: number[] = [];
      while (ranges.length < 2 * limit) {
        const wanted = Math.min(FIND_BATCH / 2, limit - ranges.length / 2);
        const count = native.findRegex(regex, text, from, found.subarray(0, 2 * wanted), to);
        for (let i = 0; i < 2 * count; i++) ranges.push(found[i]!);
        if (count < wanted) break;
        from = found[2 * count - 1]!;
      }
      return ranges;
    },
  };
}

/** Runs holding the anchor this close to a window's end are searched in that window: a call costs about as much as scanning this far. */
const WINDOW_GAP = 1024;

/**
 * The matches of `regex` in the runs of `text` between `separator` bytes where `anchor` finds an occurrence at
 * or after `from` in text[0, `scanEnd`), appended to `out` until it holds `limit` ranges: no match of `regex`
 * holds the separator, and each holds an occurrence of `anchor`. Text before `searched` (a run's end) was
 * searched already. Returns how far the text is searched.
 *
 * Each match lies in such a run, and a run's matches do not depend on the runs before it: runs close together
 * are searched in one window, the text around it staying the regex's context for `^`, `$` and `\b`.
 * Why: docs/design.md, "Per-file work is linear".
 */
export function searchAnchorRuns(
  anchor: Matcher,
  regex: Matcher,
  text: Buffer,
  separator: number,
  scanEnd: number,
  from: number,
  searched: number,
  out: number[],
  limit: number,
): number {
  let at = Math.max(from, searched);
  while (out.length < 2 * limit && at < scanEnd) {
    const occurrences = anchor.ranges(text, FIND_BATCH, at, scanEnd);
    for (let i = 0; i < occurrences.length && out.length < 2 * limit;) {
      const start = Math.max(searched, runStart(text, separator, occurrences[i]!));
      let end = runEnd(text, separator, occurrences[i + 1]!);
      for (i += 2; i < occurrences.length && occurrences[i]! < end + WINDOW_GAP; i += 2) end = Math.max(end, runEnd(text, separator, occurrences[i + 1]!));
      for (const offset of regex.ranges(text, limit - out.length / 2, start, end)) out.push(offset);
      searched = end;
    }
    if (occurrences.length < 2 * FIND_BATCH) break;
    at = searched;
  }
  return searched;
}

function runStart(text: Buffer, separator: number, offset: number): number {
  return offset === 0 ? 0 : text.lastIndexOf(separator, offset - 1) + 1;
}

function runEnd(text: Buffer, separator: number, offset: number): number {
  const at = text.indexOf(separator, offset);
  return at === -1 ? text.length : at;
}
