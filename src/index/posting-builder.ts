/**
 * Builds per-document trigram posting lists for one shard: documents are fed
 * in ascending id order, and finish() yields the sorted trigram keys with
 * delta-varint posting lists carrying each document's next-byte mask (see
 * docs/index-format.md, sections CTRK/CTRP).
 */
import { native } from '../../native/index.js';
import { TRIGRAM_SPACE } from './trigrams.js';
import { GrowableUint32Array } from './growable.js';

export interface TrigramPostings {
  /** Distinct trigrams, ascending. */
  keys: Uint32Array;
  /** postings[offsets[i], offsets[i+1]) holds the documents of keys[i]; length keys.length + 1. */
  offsets: Uint32Array;
  postings: Buffer;
  /** Number of (trigram, document) pairs. */
  pairCount: number;
}

/** The scratch tables collectTrigrams needs (2^24 bits, 2^24 bytes): one pair per thread, allocated once, always left clean. */
let seenBits: Uint8Array | null = null;
let nextMasks: Uint8Array | null = null;

function scratch(): [Uint8Array, Uint8Array] {
  seenBits ??= new Uint8Array(TRIGRAM_SPACE / 8);
  nextMasks ??= new Uint8Array(TRIGRAM_SPACE);
  return [seenBits, nextMasks];
}

export class TrigramPostingsBuilder {
  /** Distinct trigrams of every document with their next-byte masks (bits 24–31), document after document. */
  private readonly trigrams = new GrowableUint32Array(1 << 16);
  /** firstPair[d] = index in `trigrams` where document d's trigrams begin. */
  private readonly firstPair = new GrowableUint32Array();

  /** Records the distinct trigrams of the next document (id = documents added so far). */
  addDocument(bytes: Uint8Array): void {
    this.firstPair.push(this.trigrams.length);
    if (bytes.length < 3) return;
    const out = this.trigrams.reserve(bytes.length - 2);
    this.trigrams.length = native.collectTrigrams(bytes, ...scratch(), out, this.trigrams.length);
  }

  /**
   * Records the next document as the union of `pieces`' documents from
   * `firstPiece` on (their trigrams, masks ORed): a document whose blocks
   * cover all its trigrams, without scanning its bytes again.
   */
  addUnionOf(pieces: TrigramPostingsBuilder, firstPiece: number): void {
    this.firstPair.push(this.trigrams.length);
    const pairs = pieces.trigrams.view().subarray(pieces.firstPair.view()[firstPiece] ?? pieces.trigrams.length);
    const out = this.trigrams.reserve(pairs.length);
    this.trigrams.length = native.uniteTrigrams(pairs, ...scratch(), out, this.trigrams.length);
  }

  get documentCount(): number {
    return this.firstPair.length;
  }

  finish(): TrigramPostings {
    const pairs = this.trigrams.view();
    return { ...native.buildPostings(pairs, this.firstPair.view()), pairCount: pairs.length };
  }
}
