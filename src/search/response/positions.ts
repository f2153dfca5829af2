/**
 * Positions in a document as the API reports them: byteOffset 0-based,
 * lineNumber 1-based (a '\n' belongs to the line it ends), column 1-based in
 * Unicode code points, counted as the bytes that do not continue a UTF-8
 * sequence (a tab is one column; in a CRLF file the \r is the last column of
 * its line). The addon finds a file's (native/src/response.cc, layChunks).
 */

/** Words per position in a flat array (the addon's layChunks writes them): byteOffset, lineNumber, column. */
export const POSITION_WORDS = 3;
/** Words per range in a flat array: its start's position, then its end's (as native/src/response.cc writes and reads them). */
export const RANGE_WORDS = 2 * POSITION_WORDS;

/** Code points in content[from, to): bytes that do not continue a UTF-8 sequence. */
export function codePointsBetween(content: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if ((content[i]! & 0xc0) !== 0x80) count++;
  return count;
}
