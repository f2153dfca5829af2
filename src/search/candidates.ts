/**
 * Candidate documents of a shard for a literal requirement tree: documents
 * that contain every trigram of a required literal (in any casing, for a
 * case-insensitive literal), combined per the tree.
 * A superset of the documents that match; verification narrows it.
 */
import type { TrigramTable } from '../index/shard-reader.js';
import { caseVariants, trigramAt } from '../index/trigrams.js';
import type { LiteralTree } from '../query/literals.js';
import { intersect, union } from './sorted-sets.js';

/** Every document (no index constraint), or an ascending id list. */
export type Candidates = 'all' | Uint32Array;

export interface CandidateStats {
  /** Posting lists looked up. */
  ngramLookups: number;
  /** Posting entries read. */
  ngramMatches: number;
  /** Encoded posting bytes read. */
  indexBytesLoaded: number;
}

export function candidates(tree: LiteralTree, table: TrigramTable, stats: CandidateStats): Candidates {
  switch (tree.type) {
    case 'any':
      return 'all';
    case 'literal':
      return literalCandidates(tree.text, tree.caseSensitive, table, stats);
    case 'and':
      return intersectAll(tree.operands, (operand) => candidates(operand, table, stats));
    case 'or':
      return uniteAll(tree.operands, (operand) => candidates(operand, table, stats));
  }
}

/** Documents in every operand's candidates ('all' is neutral); stops early once empty. */
export function intersectAll<T>(operands: readonly T[], candidatesOf: (operand: T) => Candidates): Candidates {
  let result: Candidates = 'all';
  for (const operand of operands) {
    const next = candidatesOf(operand);
    result = result === 'all' ? next : next === 'all' ? result : intersect(result, next);
    if (result !== 'all' && result.length === 0) break;
  }
  return result;
}

/** Documents in any operand's candidates ('all' absorbs). */
export function uniteAll<T>(operands: readonly T[], candidatesOf: (operand: T) => Candidates): Candidates {
  let result: Uint32Array = new Uint32Array(0);
  for (const operand of operands) {
    const next = candidatesOf(operand);
    if (next === 'all') return 'all';
    result = union(result, next);
  }
  return result;
}

function literalCandidates(text: string, caseSensitive: boolean, table: TrigramTable, stats: CandidateStats): Candidates {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length < 3) return 'all';
  const trigrams = new Set<number>();
  for (let i = 0; i + 3 <= bytes.length; i++) trigrams.add(trigramAt(bytes, i));
  const lists: Uint32Array[] = [];
  for (const trigram of trigrams) {
    // Case-insensitive: documents holding any casing of the trigram.
    let documents: Uint32Array | null = null;
    for (const variant of caseSensitive ? [trigram] : caseVariants(trigram)) {
      stats.ngramLookups++;
      const loaded = { bytes: 0 };
      const postings = table.postingsOf(variant, loaded);
      stats.indexBytesLoaded += loaded.bytes;
      if (postings === null) continue;
      stats.ngramMatches += postings.length;
      documents = documents === null ? postings : union(documents, postings);
    }
    if (documents === null) return new Uint32Array(0);
    lists.push(documents);
  }
  lists.sort((a, b) => a.length - b.length); // the rarest trigram first keeps every intersection small
  let result = lists[0]!;
  for (let i = 1; i < lists.length && result.length > 0; i++) result = intersect(result, lists[i]!);
  return result;
}
