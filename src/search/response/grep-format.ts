/**
 * grep-like text for a search response: `repo path:line:column: text` for
 * each line with a match, `repo path-line- text` for context lines, and
 * `repo path` for a file that matched by name only. Matches are shown in
 * bold red when `highlight` is set (a terminal).
 */
import type { Chunk, SearchResponse } from '../../api/types.js';

const HIGHLIGHT_ON = '\x1b[1;31m';
const HIGHLIGHT_OFF = '\x1b[0m';

export function formatGrepLines(response: SearchResponse, highlight: boolean): string[] {
  const out: string[] = [];
  for (const file of response.files) {
    const where = `${file.repository} ${file.fileName.text}`;
    if (file.chunks.length === 0) out.push(where);
    for (const chunk of file.chunks) out.push(...chunkLines(where, chunk, highlight));
  }
  return out;
}

function chunkLines(where: string, chunk: Chunk, highlight: boolean): string[] {
  const lines = chunk.content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((text, i) => {
    const lineNumber = chunk.contentStart.lineNumber + i;
    const clean = text.replace(/\r$/, '');
    // Column spans of the matches on this line, in code points (matches may continue past the line).
    const spans = chunk.matchRanges
      .filter((range) => range.start.lineNumber <= lineNumber && lineNumber <= range.end.lineNumber)
      .map((range) => [range.start.lineNumber === lineNumber ? range.start.column : 1, range.end.lineNumber === lineNumber ? range.end.column : Infinity] as const);
    if (spans.length === 0) return `${where}-${lineNumber}- ${clean}`;
    return `${where}:${lineNumber}:${spans[0]![0]}: ${highlight ? highlightSpans(clean, spans) : clean}`;
  });
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
