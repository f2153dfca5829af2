/** Match ranges travel flattened ([start0, end0, start1, end1, …]) between the engine's layers. */

/** [start, end] pairs of a flattened range list, in its order. */
export function rangePairs(flat: readonly number[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}

/**
 * The ranges ordered by start, then end: `flat` itself when they already are
 * (one pattern's ranges are: the common case, which then allocates nothing),
 * else a sorted copy.
 */
export function byStart(flat: readonly number[]): readonly number[] {
  for (let i = 2; i < flat.length; i += 2) {
    const previousStart = flat[i - 2]!;
    const start = flat[i]!;
    if (previousStart > start || (previousStart === start && flat[i - 1]! > flat[i + 1]!)) {
      return rangePairs(flat)
        .sort((a, b) => a[0] - b[0] || a[1] - b[1])
        .flat();
    }
  }
  return flat;
}
