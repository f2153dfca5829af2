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

/** Lines holding the anchor this close to a window's end are searched in that window: a call costs about as much as scanning this far. */
const WINDOW_GAP = 1024;
const NEWLINE = 0x0a;

/**
 * The matches of `regex` (which never hold a newline, and each hold an occurrence of `anchor`) in the lines of
 * `text` where `anchor` finds one at or after `from` in text[0, `scanEnd`), appended to `out` until it holds
 * `limit` ranges; text before `searched` (a line's end) was searched already. Returns how far the text is searched.
 *
 * Each match lies in such a line, and a line's matches do not depend on the lines before it; lines close together
 * are searched in one window. A window ends at a line's end, where `$` and `\b` read what they read in the whole
 * text, and the text before it stays the regex's context. Why: docs/design.md, "Per-file work is linear".
 */
export function searchAnchorLines(anchor: Matcher, regex: Matcher, text: Buffer, scanEnd: number, from: number, searched: number, out: number[], limit: number): number {
  const scanned = scanEnd === text.length ? text : text.subarray(0, scanEnd);
  let at = Math.max(from, searched);
  while (out.length < 2 * limit && at < scanEnd) {
    const occurrences = anchor.ranges(scanned, FIND_BATCH, at);
    for (let i = 0; i < occurrences.length && out.length < 2 * limit; ) {
      const start = Math.max(searched, lineStart(text, occurrences[i]!));
      let end = lineEnd(text, occurrences[i + 1]!);
      for (i += 2; i < occurrences.length && occurrences[i]! < end + WINDOW_GAP; i += 2) end = Math.max(end, lineEnd(text, occurrences[i + 1]!));
      for (const offset of regex.ranges(end === text.length ? text : text.subarray(0, end), limit - out.length / 2, start)) out.push(offset);
      searched = end;
    }
    if (occurrences.length < 2 * FIND_BATCH) break;
    at = searched;
  }
  return searched;
}

function lineStart(text: Buffer, offset: number): number {
  return offset === 0 ? 0 : text.lastIndexOf(NEWLINE, offset - 1) + 1;
}

function lineEnd(text: Buffer, offset: number): number {
  const newline = text.indexOf(NEWLINE, offset);
  return newline === -1 ? text.length : newline;
}
