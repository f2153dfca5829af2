/**
 * Byte trigrams: the unit of trawl's content and path indexes.
 *
 * A trigram is three consecutive bytes packed big-endian into 24 bits
 * (b0 << 16 | b1 << 8 | b2), case kept. A case-insensitive lookup unites the
 * postings of a trigram's ASCII case variants (at most 8); bytes of
 * multi-byte UTF-8 have no variants, so case-insensitive non-ASCII text
 * constrains nothing and is found by verification alone.
 */

export const TRIGRAM_SPACE = 1 << 24;

/** The trigram of text[i..i+3). */
export function trigramAt(text: Uint8Array, i: number): number {
  return (text[i]! << 16) | (text[i + 1]! << 8) | text[i + 2]!;
}

/**
 * The bit `byte` sets in a next-byte mask (docs/index-format.md, CTRP): its
 * low three bits, which an ASCII letter shares with its other case.
 */
export function nextByteBit(byte: number): number {
  return 1 << (byte & 7);
}

/** Every ASCII case variant of a trigram, itself first. */
export function caseVariants(trigram: number): number[] {
  const variants = [trigram];
  for (let shift = 0; shift <= 16; shift += 8) {
    const byte = (trigram >> shift) & 0xff;
    const other = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : -1;
    if (other < 0) continue;
    for (let i = 0, count = variants.length; i < count; i++) variants.push((variants[i]! & ~(0xff << shift)) | (other << shift));
  }
  return variants;
}
