/**
 * How ranked answers merge (docs/api.md, "Ranked streams"): files ordered by score (higher first), then repository,
 * then path, each kept while fewer than `matches` ranges come before it, the last one cut to what is left. The web
 * app merges a ranked stream's parts so, and a cluster's front end the answers of its nodes.
 */
import type { FileResult } from './types.js';

/** The daemon's ranking: higher score first, then repository, then path. */
export function compareFiles(a: FileResult, b: FileResult): number {
  return (b.score ?? 0) - (a.score ?? 0) || a.repository.localeCompare(b.repository) || a.fileName.text.localeCompare(b.fileName.text);
}

/** The match ranges `file` holds: its name's and its chunks'. */
export function matchRangesOf(file: FileResult): number {
  return file.fileName.matchRanges.length + file.chunks.reduce((sum, chunk) => sum + chunk.matchRanges.length, 0);
}

/** `file` with its first `budget` ranges: the file name's first, then the chunks' in order; chunks left without one go. */
export function withinRanges(file: FileResult, budget: number): FileResult {
  const nameRanges = file.fileName.matchRanges.slice(0, budget);
  let left = budget - nameRanges.length;
  const chunks = [];
  for (const chunk of file.chunks) {
    if (left === 0) break;
    const matchRanges = chunk.matchRanges.slice(0, left);
    left -= matchRanges.length;
    chunks.push({ ...chunk, matchRanges });
  }
  return { ...file, fileName: { ...file.fileName, matchRanges: nameRanges }, chunks };
}
