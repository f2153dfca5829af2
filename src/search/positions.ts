/**
 * Positions in a document as the API reports them: byteOffset 0-based,
 * lineNumber 1-based, column 1-based in Unicode code points (a tab is one
 * column; in a CRLF file the \r is the last column of its line).
 */

export interface Position {
  byteOffset: number;
  lineNumber: number;
  column: number;
}

export class LineIndex {
  /**
   * @param content the document's bytes
   * @param newlines ascending offsets of every '\n' (the shard's LINE table), or a
   *   prefix of them that includes every '\n' of the lines the caller asks about and
   *   the one after them (lineCount is then a lower bound)
   */
  constructor(
    private readonly content: Buffer,
    private readonly newlines: Uint32Array,
  ) {}

  get lineCount(): number {
    const last = this.newlines[this.newlines.length - 1];
    // A final '\n' ends the last line rather than starting an empty one.
    return this.newlines.length + (last === this.content.length - 1 ? 0 : 1);
  }

  /** 1-based line containing byteOffset (an offset at a '\n' belongs to the line it ends). */
  lineOf(byteOffset: number): number {
    let low = 0;
    let high = this.newlines.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.newlines[mid]! < byteOffset) low = mid + 1;
      else high = mid;
    }
    return low + 1;
  }

  /** Byte offset where 1-based `line` starts. */
  lineStart(line: number): number {
    return line === 1 ? 0 : this.newlines[line - 2]! + 1;
  }

  /** Byte offset just past 1-based `line`, its '\n' included when it has one. */
  lineEnd(line: number): number {
    return line - 1 < this.newlines.length ? this.newlines[line - 1]! + 1 : this.content.length;
  }

  position(byteOffset: number): Position {
    const lineNumber = this.lineOf(byteOffset);
    return { byteOffset, lineNumber, column: 1 + codePointsBetween(this.content, this.lineStart(lineNumber), byteOffset) };
  }
}

/** Code points in content[from, to): bytes that do not continue a UTF-8 sequence. */
export function codePointsBetween(content: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if ((content[i]! & 0xc0) !== 0x80) count++;
  return count;
}
