/** Set operations on strictly ascending Uint32Arrays (document id lists); results are lists of index/id-lists.ts. */
import { takeIdList } from '../../index/id-lists.js';

/** Ids in both; gallops through the longer list, so a short list against a long one costs little. */
export function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = takeIdList(a.length);
  let count = 0;
  let low = 0;
  for (let i = 0; i < a.length && low < b.length; i++) {
    const value = a[i]!;
    // Exponential then binary search for the first b[j] >= value.
    let step = 1;
    let high = low;
    while (high < b.length && b[high]! < value) {
      low = high + 1;
      high += step;
      step *= 2;
    }
    high = Math.min(high, b.length);
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (b[mid]! < value) low = mid + 1;
      else high = mid;
    }
    if (low < b.length && b[low] === value) out[count++] = value;
  }
  return out.subarray(0, count);
}

/** Ids in either. */
export function union(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = takeIdList(a.length + b.length);
  let i = 0;
  let j = 0;
  let count = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      out[count++] = x;
      i++;
      j++;
    } else if (x < y) {
      out[count++] = x;
      i++;
    } else {
      out[count++] = y;
      j++;
    }
  }
  while (i < a.length) out[count++] = a[i++]!;
  while (j < b.length) out[count++] = b[j++]!;
  return out.subarray(0, count);
}
