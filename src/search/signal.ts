/**
 * The cooperative control block of one search, shared by the front end and
 * every worker searching for it (a SharedArrayBuffer, so no messages are
 * needed): slot CANCELLED is set when nobody wants the result any more (client
 * gone, shutdown); slot RANGES_FOUND counts the match ranges found across all
 * shards, so a task stops once others have found enough.
 */
import type { SearchSignal } from '../worker/search-protocol.js';

const CANCELLED = 0;
const RANGES_FOUND = 1;

export function createSignal(): SearchSignal {
  return new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
}

export function cancelSearch(signal: SearchSignal): void {
  Atomics.store(signal, CANCELLED, 1);
}

export function isSearchCancelled(signal: SearchSignal): boolean {
  return Atomics.load(signal, CANCELLED) !== 0;
}

export function addRangesFound(signal: SearchSignal, ranges: number): void {
  Atomics.add(signal, RANGES_FOUND, ranges);
}

export function rangesFound(signal: SearchSignal): number {
  return Atomics.load(signal, RANGES_FOUND);
}
