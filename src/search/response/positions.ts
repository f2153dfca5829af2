/**
 * Positions in a document as the API reports them: byteOffset 0-based,
 * lineNumber 1-based, column 1-based in Unicode code points (a tab is one
 * column; in a CRLF file the \r is the last column of its line).
 */
import { native } from '../../../native/index.js';
import type { Position } from '../../api/types.js';

/**
 * Line numbers and line bounds of one document, found in its content: the
 * bytes around a match were just read to verify it, and counting newlines
 * there with SIMD costs less than decoding a newline table, so shards store
 * none (docs/index-format.md, format 5). Each lookup starts from the offset the
 * previous one counted to, and a column from the previous position on the
 * same line, so asking in ascending offsets reads each byte about once, even
 * on one line of a megabyte with thousands of matches.
 */
export class LineIndex {
  /** A known point: `newlinesBefore` '\n' bytes precede `offset`. */
  private offset = 0;
  private newlinesBefore = 0;
  /** The last position made: its line (0: none yet), where that line starts, its offset and column. */
  private lastLine = 0;
  private lastLineStart = 0;
  private lastOffset = 0;
  private lastColumn = 1;

  constructor(private readonly content: Buffer) {}

  /** 1-based line containing byteOffset (an offset at a '\n' belongs to the line it ends). */
  lineOf(byteOffset: number): number {
    if (byteOffset >= this.offset) {
      this.newlinesBefore += this.newlinesIn(this.offset, byteOffset);
    } else if (byteOffset >= this.offset - byteOffset) {
      this.newlinesBefore -= this.newlinesIn(byteOffset, this.offset);
    } else {
      this.newlinesBefore = this.newlinesIn(0, byteOffset);
    }
    this.offset = byteOffset;
    return this.newlinesBefore + 1;
  }

  /** Byte offset where 1-based `line` starts (the content's length past the last line). */
  lineStart(line: number): number {
    return this.afterNewline(line - 1);
  }

  /** Byte offset just past 1-based `line`, its '\n' included when it has one. */
  lineEnd(line: number): number {
    return this.afterNewline(line);
  }

  position(byteOffset: number): Position {
    const words: number[] = [];
    this.pushPosition(byteOffset, words);
    return { byteOffset, lineNumber: words[1]!, column: words[2]! };
  }

  /** Appends byteOffset's position to `out` as POSITION_WORDS numbers (byteOffset, lineNumber, column); returns its line. */
  pushPosition(byteOffset: number, out: number[]): number {
    const lineNumber = this.lineOf(byteOffset);
    if (lineNumber === this.lastLine && byteOffset >= this.lastOffset) {
      this.lastColumn += codePointsBetween(this.content, this.lastOffset, byteOffset);
    } else {
      // lineOf left the known point at byteOffset, so finding the line's start is one step back to the previous '\n'.
      if (lineNumber !== this.lastLine) this.lastLineStart = this.lineStart(lineNumber);
      this.lastLine = lineNumber;
      this.lastColumn = 1 + codePointsBetween(this.content, this.lastLineStart, byteOffset);
    }
    this.lastOffset = byteOffset;
    out.push(byteOffset, lineNumber, this.lastColumn);
    return lineNumber;
  }

  /** '\n' bytes in content[from, to). Over a few dozen bytes a loop here costs less than a call into the addon. */
  private newlinesIn(from: number, to: number): number {
    if (to - from > SHORT_COUNT) return native.countNewlines(this.content, from, to);
    let count = 0;
    for (let i = from; i < to; i++) if (this.content[i] === NEWLINE) count++;
    return count;
  }

  /** The offset after the n-th '\n' (1-based; 0 for n = 0), or the content's length when there are fewer. */
  private afterNewline(n: number): number {
    if (n <= 0) return 0;
    let at: number;
    if (n <= this.newlinesBefore) {
      // Back from the known point, the newlines are number newlinesBefore, newlinesBefore − 1, …
      at = this.offset;
      for (let k = this.newlinesBefore; k >= n; k--) at = this.content.lastIndexOf(NEWLINE, at - 1);
    } else {
      // Forward from it, the first is number newlinesBefore + 1.
      at = this.offset - 1;
      for (let k = this.newlinesBefore; k < n; k++) {
        at = this.content.indexOf(NEWLINE, at + 1);
        if (at < 0) return this.content.length;
      }
    }
    return at + 1;
  }
}

export const NEWLINE = 0x0a;
/** Numbers per position in a flat array (pushPosition): byteOffset, lineNumber, column. */
export const POSITION_WORDS = 3;
/** Numbers per range in a flat array: its start's position, then its end's. */
export const RANGE_WORDS = 2 * POSITION_WORDS;
/** Up to this many bytes, newlines are counted in JavaScript (measured: the addon's call costs ≈ 100 bytes of the loop). */
const SHORT_COUNT = 64;

/** Code points in content[from, to): bytes that do not continue a UTF-8 sequence. */
export function codePointsBetween(content: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if ((content[i]! & 0xc0) !== 0x80) count++;
  return count;
}
