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

/** Items ordered by start, none longer than `longest` bytes: a document's symbol definitions. */
export interface SpansByStart {
  first: number;
  /** One past the last item. */
  end: number;
  longest: number;
  startOf(item: number): number;
  endOf(item: number): number;
}

/**
 * Calls `visit`, in item order, with each item of `spans` that overlaps one of
 * the ranges sorted[2·from … 2·to) (flattened, ordered by start, as byStart
 * leaves them): a binary search per item that can overlap, never a pass over
 * every item or every range.
 */
export function forEachOverlapping(spans: SpansByStart, sorted: readonly number[], from: number, to: number, visit: (item: number) => void): void {
  const pairs = to - from;
  if (pairs <= 0) return;
  // furthestEnd[i]: the largest end among ranges from … from + i, so "a range starting before x ends after y" is one lookup.
  const furthestEnd = furthestEndScratch(pairs);
  for (let i = 0, furthest = 0; i < pairs; i++) furthestEnd[i] = furthest = Math.max(furthest, sorted[2 * (from + i) + 1]!);
  const lowest = sorted[2 * from]!;
  const highest = furthestEnd[pairs - 1]!;
  // Only items starting after lowest − longest can end after `lowest`.
  let item = spans.first;
  for (let high = spans.end; item < high;) {
    const mid = (item + high) >>> 1;
    if (spans.startOf(mid) < lowest - spans.longest + 1) item = mid + 1;
    else high = mid;
  }
  for (; item < spans.end; item++) {
    const start = spans.startOf(item);
    const end = spans.endOf(item);
    if (start >= highest) break;
    if (end <= lowest) continue;
    let low = 0;
    let high = pairs; // first range starting at or after the item's end
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (sorted[2 * (from + mid)]! < end) low = mid + 1;
      else high = mid;
    }
    if (low > 0 && furthestEnd[low - 1]! > start) visit(item);
  }
}

/** forEachOverlapping's prefix maxima, one buffer per thread: a search calls it for every matching file. */
let furthestEnds = new Float64Array(256);

function furthestEndScratch(length: number): Float64Array {
  if (furthestEnds.length < length) furthestEnds = new Float64Array(Math.max(length, 2 * furthestEnds.length));
  return furthestEnds;
}
