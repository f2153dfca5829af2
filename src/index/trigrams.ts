/**
 * Case-folded byte trigrams: the unit of trawl's content and path indexes.
 *
 * A trigram is three consecutive bytes with ASCII A–Z folded to a–z, packed
 * big-endian into 24 bits (b0 << 16 | b1 << 8 | b2). Other bytes, including
 * every byte of a multi-byte UTF-8 sequence, are kept as they are, so a
 * case-insensitive search for non-ASCII letters must fall back to scanning.
 */

/** byte → folded byte. */
const FOLD = new Uint8Array(256).map((_, byte) => (byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte));

export const TRIGRAM_SPACE = 1 << 24;

/** The folded trigram of text[i..i+3). */
export function trigramAt(text: Uint8Array, i: number): number {
  return (FOLD[text[i]!]! << 16) | (FOLD[text[i + 1]!]! << 8) | FOLD[text[i + 2]!]!;
}

