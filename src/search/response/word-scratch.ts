/**
 * Words of this thread that a file's layout (chunks.ts) lives in from when the file is drafted until
 * the next file is: every sink writes or copies a file before the next is drafted (build.ts). A typed
 * array made per file would cost more than the addon's work on it: V8 moves a small one's memory off
 * its heap when it is first handed to the addon (≈ 0.5 µs a call, measured).
 */
export class WordScratch {
  private words = new Uint32Array(1024);

  /** `length` words: this scratch's, valid until its next `take`; beyond RETAINED_WORDS, a new array that is not kept. */
  take(length: number): Uint32Array {
    if (length > RETAINED_WORDS) return new Uint32Array(length);
    if (length > this.words.length) this.words = new Uint32Array(2 ** Math.ceil(Math.log2(length)));
    return this.words.subarray(0, length);
  }
}

/** A scratch grows to at most this many words (256 KiB, what a thread keeps after a broad search): a file with more brings its own. */
const RETAINED_WORDS = 1 << 16;
