/** A search's signal tied to its request: cancelled when the client goes away. */
import { cancelSearch, createSignal, type SearchSignal } from '../search/signal.js';
import type { Request } from './http.js';

export function signalFor(request: Request): SearchSignal {
  const signal = createSignal();
  request.onAborted(() => cancelSearch(signal));
  return signal;
}
