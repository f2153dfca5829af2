/**
 * Text for a search response on a command line, in three forms:
 * - `grep`: `repo path:line:column: text` for each line with a match, `repo path-line- text` for context lines,
 *   `repo path` for a file that matched by name only; matches in bold red when `highlight` is set;
 * - `vimgrep`: `file:line:column:text` (ripgrep's --vimgrep, one line per match), the file as a path on disk and the
 *   column in bytes, which editors' quickfix and link parsers read;
 * - `json`: ripgrep's JSON Lines (`begin`, `match`, `context`, `end` per file, then `summary`), for the tools that
 *   read `rg --json`.
 * Columns of the API are code points; ripgrep's are bytes.
 */
import type { Chunk, FileResult, SearchResponse } from '../../api/types.js';

const HIGHLIGHT_ON = '\x1b[1;31m';
const HIGHLIGHT_OFF = '\x1b[0m';

/** A line of a chunk, with the spans of its matches as code point columns [from, to). */
interface ChunkLine {
  lineNumber: number;
  /** Without its newline; `text` without a carriage return before it too, `raw` with it (as ripgrep prints it). */
  text: string;
  raw: string;
  /** Byte offset of the line in its file. */
  byteOffset: number;
  spans: (readonly [number, number])[];
}

/** Where a response's file is on disk, for forms that editors open (null: it has no file on disk). */
export type FileLocator = (repository: string, path: string) => string | null;

/** The file as the editors' forms name it: its path on disk, else `repo/path`. */
const located = (locate: FileLocator, file: FileResult) => locate(file.repository, file.fileName.text) ?? `${file.repository}/${file.fileName.text}`;

export function formatGrepLines(response: SearchResponse, highlight: boolean): string[] {
  const out: string[] = [];
  for (const file of response.files) {
    const where = `${file.repository} ${file.fileName.text}`;
    if (file.chunks.length === 0) out.push(where);
    for (const line of file.chunks.flatMap(chunkLines)) {
      if (line.spans.length === 0) out.push(`${where}-${line.lineNumber}- ${line.text}`);
      else out.push(`${where}:${line.lineNumber}:${line.spans[0]![0]}: ${highlight ? highlightSpans(line.text, line.spans) : line.text}`);
    }
  }
  return out;
}

export function formatVimgrepLines(response: SearchResponse, locate: FileLocator): string[] {
  const out: string[] = [];
  for (const file of response.files) {
    const where = located(locate, file);
    if (file.chunks.length === 0) out.push(`${where}:1:1:`);
    for (const line of file.chunks.flatMap(chunkLines)) {
      for (const [from] of line.spans) out.push(`${where}:${line.lineNumber}:${byteColumn(line.raw, from)}:${line.raw}`);
    }
  }
  return out;
}

/** ripgrep's JSON Lines of `response`'s files (begin, match, context, end), what they count added to `totals`. */
export function formatJsonLines(response: SearchResponse, locate: FileLocator, totals: JsonTotals): string[] {
  const out: string[] = [];
  for (const file of response.files) {
    const path = { text: located(locate, file) };
    out.push(JSON.stringify({ type: 'begin', data: { path } }));
    let fileMatchedLines = 0;
    let fileMatches = 0;
    for (const line of file.chunks.flatMap(chunkLines)) {
      const lines = { text: `${line.raw}\n` };
      const submatches = line.spans.map(([from, to]) => {
        const start = byteColumn(line.raw, from) - 1;
        const end = to === Infinity ? Buffer.byteLength(line.text) : byteColumn(line.raw, to) - 1;
        return { match: { text: Buffer.from(line.raw).subarray(start, end).toString() }, start, end };
      });
      out.push(
        JSON.stringify({
          type: submatches.length > 0 ? 'match' : 'context',
          data: { path, lines, line_number: line.lineNumber, absolute_offset: line.byteOffset, submatches },
        }),
      );
      if (submatches.length > 0) fileMatchedLines++;
      fileMatches += submatches.length;
    }
    totals.matchedLines += fileMatchedLines;
    totals.matches += fileMatches;
    totals.filesWithMatch++;
    out.push(JSON.stringify({ type: 'end', data: { path, binary_offset: null, stats: { matched_lines: fileMatchedLines, matches: fileMatches } } }));
  }
  totals.searches += response.stats.filesConsidered;
  return out;
}

/** What ripgrep's JSON summary counts, summed over the responses formatJsonLines wrote. */
export interface JsonTotals {
  searches: number;
  filesWithMatch: number;
  matchedLines: number;
  matches: number;
}

export const noJsonTotals = (): JsonTotals => ({ searches: 0, filesWithMatch: 0, matchedLines: 0, matches: 0 });

/** ripgrep's closing `summary` line of JSON Lines. */
export function jsonSummaryLine(totals: JsonTotals, elapsedNanos: number): string {
  const elapsed = { secs: Math.floor(elapsedNanos / 1e9), nanos: elapsedNanos % 1e9, human: `${(elapsedNanos / 1e9).toFixed(6)}s` };
  const { searches, filesWithMatch, matchedLines, matches } = totals;
  return JSON.stringify({
    type: 'summary',
    data: { elapsed_total: elapsed, stats: { elapsed, searches, searches_with_match: filesWithMatch, matched_lines: matchedLines, matches } },
  });
}

function chunkLines(chunk: Chunk): ChunkLine[] {
  const lines = chunk.content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let byteOffset = chunk.contentStart.byteOffset;
  return lines.map((raw, i) => {
    const lineNumber = chunk.contentStart.lineNumber + i;
    const line = { lineNumber, text: raw.replace(/\r$/, ''), raw, byteOffset, spans: spansOn(chunk, lineNumber) };
    byteOffset += Buffer.byteLength(raw) + 1;
    return line;
  });
}

/** Column spans of the chunk's matches on `lineNumber`, in code points (matches may continue past the line). */
function spansOn(chunk: Chunk, lineNumber: number): (readonly [number, number])[] {
  return chunk.matchRanges
    .filter((range) => range.start.lineNumber <= lineNumber && lineNumber <= range.end.lineNumber)
    .map(
      (range) => [range.start.lineNumber === lineNumber ? range.start.column : 1, range.end.lineNumber === lineNumber ? range.end.column : Infinity] as const,
    );
}

/** The 1-based byte column of code point column `column` of `text`. */
function byteColumn(text: string, column: number): number {
  return Buffer.byteLength([...text].slice(0, column - 1).join('')) + 1;
}

function highlightSpans(text: string, spans: readonly (readonly [number, number])[]): string {
  const codePoints = [...text];
  let result = '';
  codePoints.forEach((char, index) => {
    const column = index + 1;
    const inside = spans.some(([from, to]) => column >= from && column < to);
    const wasInside = index > 0 && spans.some(([from, to]) => column - 1 >= from && column - 1 < to);
    if (inside && !wasInside) result += HIGHLIGHT_ON;
    if (!inside && wasInside) result += HIGHLIGHT_OFF;
    result += char;
  });
  if (spans.some(([from, to]) => codePoints.length >= from && codePoints.length < to)) result += HIGHLIGHT_OFF;
  return result;
}
