/** Match ranges travel flattened ([start0, end0, start1, end1, …]) between the engine's layers. */

/** [start, end] pairs of a flattened range list, in its order. */
export function rangePairs(flat: readonly number[]): [number, number][] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  return pairs;
}
