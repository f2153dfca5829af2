/** A shard's trigram tables (docs/index-format.md): ascending keys, and each key's postings found in two-byte buckets. */
import { decodeMaskedPostings, intersectMaskedPostings } from './varint.js';
import type { SectionSpan } from './shard-sections.js';

/** A trigram table: ascending keys and the posting byte range of each. */
export class TrigramTable {
  constructor(
    private readonly bytes: Buffer,
    private readonly keys: Uint32Array,
    private readonly offsets: Uint32Array,
    private readonly postings: SectionSpan,
    private readonly name: string,
  ) {}

  get size(): number {
    return this.keys.length;
  }

  /**
   * bucketStart[p]: the index of the first key whose first two bytes are ≥ p,
   * built at the first lookup. A plain binary search over a shard's ≈ 600K keys
   * took ≈ 2 µs per lookup in cache misses; within one two-byte bucket it is a
   * few probes.
   */
  private bucketStart: Uint32Array | null = null;

  /** Where the trigram's postings are in this table, or -1 when no document holds it. */
  locate(trigram: number): number {
    const buckets = (this.bucketStart ??= bucketStarts(this.keys));
    const bucket = trigram >>> 8;
    if (bucket >= BUCKETS) return -1;
    return binarySearch(this.keys, trigram, buckets[bucket]!, buckets[bucket + 1]!);
  }

  /** Encoded size in bytes of the postings at `index` (from locate): proportional to their length, known without decoding. */
  encodedLength(index: number): number {
    return this.offsets[index + 1]! - this.offsets[index]!;
  }

  /**
   * Ascending document ids of the postings at `index` (from locate): those
   * where the trigram is followed, somewhere, by a byte of each bit of
   * `followedBy` (a next-byte mask, docs/index-format.md; 0: every document).
   */
  postingsAt(index: number, followedBy = 0): Uint32Array {
    const start = this.postings.offset + this.offsets[index]!;
    return decodeMaskedPostings(this.bytes, start, start + this.encodedLength(index), this.name, followedBy);
  }

  /**
   * The documents of `candidates` (ascending; overwritten) that postingsAt(index,
   * followedBy) holds, as a view of `candidates`: an intersection that decodes
   * the list only up to the last candidate and never copies it.
   */
  intersectPostingsAt(index: number, followedBy: number, candidates: Uint32Array): Uint32Array {
    const start = this.postings.offset + this.offsets[index]!;
    return intersectMaskedPostings(this.bytes, start, start + this.encodedLength(index), this.name, followedBy, candidates);
  }

  /** Ascending document ids containing the trigram, or null when none does. */
  postingsOf(trigram: number): Uint32Array | null {
    const index = this.locate(trigram);
    return index < 0 ? null : this.postingsAt(index);
  }
}

/** Trigrams grouped by their first two bytes. */
const BUCKETS = 1 << 16;

function bucketStarts(keys: Uint32Array): Uint32Array {
  const starts = new Uint32Array(BUCKETS + 1);
  let key = 0;
  for (let bucket = 0; bucket <= BUCKETS; bucket++) {
    while (key < keys.length && keys[key]! >>> 8 < bucket) key++;
    starts[bucket] = key;
  }
  return starts;
}

/** The index of `key` in keys[from, to), or -1. */
function binarySearch(keys: Uint32Array, key: number, from: number, to: number): number {
  let low = from;
  let high = to - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const value = keys[mid]!;
    if (value < key) low = mid + 1;
    else if (value > key) high = mid - 1;
    else return mid;
  }
  return -1;
}
