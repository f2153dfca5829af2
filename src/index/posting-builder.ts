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

export class TrigramPostingsBuilder {
  /** Distinct trigrams of every document with their next-byte masks (bits 24–31), document after document. */
  private readonly trigrams = new GrowableUint32Array(1 << 16);
  /** firstPair[d] = index in `trigrams` where document d's trigrams begin. */
  private readonly firstPair = new GrowableUint32Array();

  /** Records the distinct trigrams of the next document (id = documents added so far). */
  addDocument(bytes: Uint8Array): void {
    this.firstPair.push(this.trigrams.length);
    if (bytes.length < 3) return;
    seenBits ??= new Uint8Array(TRIGRAM_SPACE / 8);
    nextMasks ??= new Uint8Array(TRIGRAM_SPACE);
    const out = this.trigrams.reserve(bytes.length - 2);
    this.trigrams.length = native.collectTrigrams(bytes, seenBits, nextMasks, out, this.trigrams.length);
  }

  get documentCount(): number {
    return this.firstPair.length;
  }

  finish(): TrigramPostings {
    const pairs = this.trigrams.view();
    return { ...native.buildPostings(pairs, this.firstPair.view()), pairCount: pairs.length };
  }
}
