/**
 * Candidate documents of a shard for a literal requirement tree: documents
 * that contain every trigram of a required literal (in any casing, for a
 * case-insensitive literal), combined per the tree.
 * A superset of the documents that match; verification narrows it.
 */
import { copyIdList } from '../../index/id-lists.js';
import type { TrigramTable } from '../../index/trigram-table.js';
import { caseVariants, nextByteBit, trigramAt } from '../../index/trigrams.js';
import type { LiteralTree } from '../../query/literals.js';
import { cached } from './memo.js';
import { intersect, union } from './sorted-sets.js';

/** Every document (no index constraint), or an ascending id list. */
export type Candidates = 'all' | Uint32Array;

export interface CandidateStats {
  /** Posting lists looked up. */
  ngramLookups: number;
  /** Posting entries yielded: a list's documents, or those it kept of the candidates it was intersected with. */
  ngramMatches: number;
  /** Encoded posting bytes read. */
  indexBytesLoaded: number;
}

/**
 * `keys` holds the trigram keys of the tree's literals: pass the same map for
 * every shard of a search, so they are computed once per search.
 */
export function candidates(tree: LiteralTree, table: TrigramTable, stats: CandidateStats, keys: TrigramKeys = new Map()): Candidates {
  switch (tree.type) {
    case 'any':
      return 'all';
    case 'literal':
      return literalCandidates(tree, table, stats, keys);
    case 'and':
      return intersectAll(tree.operands, (operand) => candidates(operand, table, stats, keys));
    case 'or':
      return uniteAll(tree.operands, (operand) => candidates(operand, table, stats, keys));
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

/** The trigram lookups an estimate (`candidatePostingBytes`) may still make: it is Infinity once they are spent. */
export interface LookupBudget {
  lookups: number;
}

/**
 * An upper bound on the encoded bytes of the posting lists `tree`'s candidates in `table` come from (a literal's
 * rarest trigram, an 'and''s rarest operand, the sum of an 'or''s), found without decoding one: a measure of how
 * many documents a shard search verifies. Infinity when the tree requires nothing or `budget` is spent. Each
 * literal's rarest trigram is sought in the first table asked and only it looked up in the rest (a corpus's rare
 * trigrams are rare in each of its shards), so `keys` must be the same map for every table of one estimate.
 */
export function candidatePostingBytes(tree: LiteralTree, table: TrigramTable, keys: TrigramKeys, budget: LookupBudget): number {
  switch (tree.type) {
    case 'any':
      return Infinity;
    case 'literal': {
      const literalKeys = keysOf(tree, keys);
      if (literalKeys === null) return Infinity;
      literalKeys.estimatedBy ??= rarestKey(literalKeys.keys, table, budget);
      return postingBytes(literalKeys.estimatedBy, table, budget);
    }
    case 'and':
      return Math.min(...tree.operands.map((operand) => candidatePostingBytes(operand, table, keys, budget)));
    case 'or':
      return tree.operands.reduce((sum, operand) => sum + candidatePostingBytes(operand, table, keys, budget), 0);
  }
}

/** The lookups `candidates` makes for `tree` in one table at most: every casing of every trigram of its literals (whose keys `keys` holds). */
export function trigramLookups(tree: LiteralTree, keys: TrigramKeys): number {
  switch (tree.type) {
    case 'any':
      return 0;
    case 'literal':
      return keysOf(tree, keys)?.keys.reduce((sum, key) => sum + key.variants.length, 0) ?? 0;
    case 'and':
    case 'or':
      return tree.operands.reduce((sum, operand) => sum + trigramLookups(operand, keys), 0);
  }
}

/** The key of `keys` with the fewest posting bytes in `table` of those `budget` let it look up, the first of equals. */
function rarestKey(keys: readonly TrigramKey[], table: TrigramTable, budget: LookupBudget): TrigramKey {
  let rarest = keys[0]!;
  let fewest = Infinity;
  for (const key of keys) {
    const bytes = postingBytes(key, table, budget);
    if (bytes < fewest) [rarest, fewest] = [key, bytes];
  }
  return rarest;
}

/** The posting bytes of every casing of `key` in `table`; Infinity when `budget` has not as many lookups left. */
function postingBytes(key: TrigramKey, table: TrigramTable, budget: LookupBudget): number {
  if (budget.lookups < key.variants.length) return Infinity;
  budget.lookups -= key.variants.length;
  let bytes = 0;
  for (const variant of key.variants) {
    const index = table.locate(variant);
    if (index >= 0) bytes += table.encodedLength(index);
  }
  return bytes;
}

/**
 * Decoding stops once the candidates are few or the next posting list is far
 * longer than they are: verifying a few more documents costs less than
 * decoding a long list that would barely prune them (rare trigrams come first).
 */
const FEW_CANDIDATES = 4;
const PRUNING_WORTH_BYTES_PER_CANDIDATE = 256;

/**
 * A trigram of a literal: the casings to look up (one when case-sensitive),
 * its next-byte mask, and where the current shard holds it. The keys of a
 * literal are made once per query and their `located`, `present` and
 * `encodedLength` rewritten for each shard, so a shard's lookups allocate
 * nothing (a search runs synchronously, one shard after another).
 */
interface TrigramKey {
  variants: number[];
  followedBy: number;
  /** Table indexes of the first `present` casings found in the shard. */
  located: Int32Array;
  present: number;
  /** Encoded bytes of their posting lists. */
  encodedLength: number;
}

/** A literal's keys in its order, the same keys ordered for the current shard, and the one `candidatePostingBytes` looks up. */
interface LiteralKeys {
  keys: TrigramKey[];
  rarestFirst: TrigramKey[];
  estimatedBy?: TrigramKey;
}

type Literal = Extract<LiteralTree, { type: 'literal' }>;

/** The keys of each literal of a search (null: shorter than a trigram). */
export type TrigramKeys = Map<Literal, LiteralKeys | null>;

/** The distinct trigrams of a literal with their casings and masks, or null when it is shorter than a trigram. */
function keysOf(literal: Literal, cache: TrigramKeys): LiteralKeys | null {
  return cached(cache, literal, () => {
    const bytes = Buffer.from(literal.text, 'utf8');
    if (bytes.length < 3) return null;
    const keys = [...nextByteMasks(bytes, literal.caseSensitive)].map(([trigram, followedBy]) => {
      const variants = literal.caseSensitive ? [trigram] : caseVariants(trigram);
      return { variants, followedBy, located: new Int32Array(variants.length), present: 0, encodedLength: 0 };
    });
    return { keys, rarestFirst: [...keys] };
  });
}

function literalCandidates(literal: Literal, table: TrigramTable, stats: CandidateStats, cache: TrigramKeys): Candidates {
  const literalKeys = keysOf(literal, cache);
  if (literalKeys === null) return 'all';
  const { keys, rarestFirst } = literalKeys;
  // Per trigram, where the postings of each casing present are (case-insensitive: any casing will do).
  for (const key of keys) {
    key.present = 0;
    key.encodedLength = 0;
    for (const variant of key.variants) {
      stats.ngramLookups++;
      const index = table.locate(variant);
      if (index < 0) continue;
      key.located[key.present++] = index;
      key.encodedLength += table.encodedLength(index);
    }
    if (key.present === 0) return new Uint32Array(0);
  }
  // The rarest trigram first keeps every intersection small; ties in the literal's order, as every shard sees them.
  // An insertion sort: stable like Array.prototype.sort, without the copy that allocates per shard.
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i;
    for (; j > 0 && rarestFirst[j - 1]!.encodedLength > key.encodedLength; j--) rarestFirst[j] = rarestFirst[j - 1]!;
    rarestFirst[j] = key;
  }
  let result: Uint32Array | null = null;
  for (const key of rarestFirst) {
    if (result !== null && (result.length <= FEW_CANDIDATES || key.encodedLength > PRUNING_WORTH_BYTES_PER_CANDIDATE * result.length)) break;
    result = result === null ? unitedPostings(key, table, stats) : keptCandidates(key, table, stats, result);
    if (result.length === 0) break;
  }
  return result!;
}

/** The documents of every casing of `key` present in the shard, decoded and united. */
function unitedPostings(key: TrigramKey, table: TrigramTable, stats: CandidateStats): Uint32Array {
  let documents: Uint32Array | null = null;
  for (let i = 0; i < key.present; i++) {
    const index = key.located[i]!;
    const postings = table.postingsAt(index, key.followedBy);
    stats.indexBytesLoaded += table.encodedLength(index);
    stats.ngramMatches += postings.length;
    documents = documents === null ? postings : union(documents, postings);
  }
  return documents!;
}

/**
 * The documents of `candidates` (overwritten) that some casing of `key`
 * holds. Each casing's list is intersected with the candidates as the addon
 * decodes it (up to the last candidate, copying nothing out), into a copy of
 * them but for the last casing (docs/benchmarks.md, `77cbaf1`).
 */
function keptCandidates(key: TrigramKey, table: TrigramTable, stats: CandidateStats, candidates: Uint32Array): Uint32Array {
  let kept: Uint32Array | null = null;
  for (let i = 0; i < key.present; i++) {
    const index = key.located[i]!;
    stats.indexBytesLoaded += table.encodedLength(index);
    const into = i === key.present - 1 ? candidates : copyIdList(candidates);
    const found = table.intersectPostingsAt(index, key.followedBy, into);
    stats.ngramMatches += found.length;
    kept = kept === null ? found : union(kept, found);
  }
  return kept!;
}

/**
 * Each distinct trigram of the literal with the next-byte mask a matching
 * document must have for it: the bits of the bytes that follow it in the
 * literal. Case-insensitively, a non-ASCII next byte constrains nothing (its
 * other case is other bytes); an ASCII letter's cases share their bit.
 */
function nextByteMasks(bytes: Buffer, caseSensitive: boolean): Map<number, number> {
  const masks = new Map<number, number>();
  for (let i = 0; i + 3 <= bytes.length; i++) {
    const trigram = trigramAt(bytes, i);
    const next = bytes[i + 3];
    const bit = next === undefined || (!caseSensitive && next >= 0x80) ? 0 : nextByteBit(next);
    masks.set(trigram, (masks.get(trigram) ?? 0) | bit);
  }
  return masks;
}
