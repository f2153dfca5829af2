/**
 * A signal that fires when `signal` does or `ms` from now. One controller, held by its timer and by the
 * parent's listener: on Node 20, `AbortSignal.any` over `AbortSignal.timeout` never fires once a garbage
 * collection has taken the timeout signal, which nothing else references (git/errors.ts `readLimit` says the same).
 * `clear` ends the timer and the listener once the work is done.
 */
export function deadline(signal: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, ms);
  signal.addEventListener('abort', abort, { once: true });
  if (signal.aborted) abort();
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    },
  };
}
