/**
 * The cooperative control block of one search, shared by the front end and
 * every worker searching for it (a SharedArrayBuffer, so no messages are
 * needed): slot CANCELLED is set when nobody wants the result any more (client
 * gone, shutdown, the search displaced).
 */
import type { SearchSignal } from '../worker/search-protocol.js';

export type { SearchSignal };

const CANCELLED = 0;

export function createSignal(): SearchSignal {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

export function cancelSearch(signal: SearchSignal): void {
  Atomics.store(signal, CANCELLED, 1);
}

export function isSearchCancelled(signal: SearchSignal): boolean {
  return Atomics.load(signal, CANCELLED) !== 0;
}
