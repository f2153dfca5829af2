/**
 * Finding a pattern's matches in bytes: Buffer.indexOf for case-sensitive
 * literals (memmem speed), RE2 on the Buffer for everything else (linear
 * time, so no pattern can hang a search). Ranges are byte offsets.
 *
 * Regexes run in RE2's multi-line mode, as grep users expect: `^` and `$`
 * match at line boundaries. `.` does not match a newline; `\s` does, so a
 * regex may span lines. `\w`, `\d` and `\b` are ASCII (RE2's definition).
 */
import RE2 from 're2';
import type { PatternNode } from '../query/ast.js';

export interface Matcher {
  /**
   * Start and end byte offsets of successive non-overlapping, non-empty
   * matches in text, at most `limit` of them, flattened: [s0, e0, s1, e1, …].
   */
  ranges(text: Buffer, limit: number): number[];
}

export function compileMatcher(pattern: Pick<PatternNode, 'value' | 'regex' | 'caseSensitive'>): Matcher {
  if (!pattern.regex && pattern.caseSensitive) return literalMatcher(Buffer.from(pattern.value, 'utf8'));
  const source = pattern.regex ? pattern.value : escapeRegExp(pattern.value);
  return regexMatcher(new RE2(source, pattern.caseSensitive ? 'gmu' : 'gimu'));
}

function literalMatcher(needle: Buffer): Matcher {
  return {
    ranges(text, limit) {
      const ranges: number[] = [];
      if (needle.length === 0) return ranges;
      for (let at = text.indexOf(needle); at !== -1 && ranges.length < 2 * limit; at = text.indexOf(needle, at + needle.length)) {
        ranges.push(at, at + needle.length);
      }
      return ranges;
    },
  };
}

function regexMatcher(regex: RE2): Matcher {
  return {
    ranges(text, limit) {
      const ranges: number[] = [];
      regex.lastIndex = 0;
      while (ranges.length < 2 * limit) {
        const match = regex.exec(text);
        if (match === null) break;
        const length = (match[0] as unknown as Buffer).length;
        if (length === 0) {
          // An empty match marks no text: resume at the next character, not inside a UTF-8 sequence.
          let next = match.index + 1;
          while (next < text.length && (text[next]! & 0xc0) === 0x80) next++;
          if (next > text.length) break;
          regex.lastIndex = next;
          continue;
        }
        ranges.push(match.index, match.index + length);
      }
      return ranges;
    },
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
