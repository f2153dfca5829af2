/**
 * A signal that fires when `signal` does or `ms` from now: the time bound of a git read (errors.ts `readLimit`) and
 * of a connection's fetches and API requests. One controller, held by its timer and by the parent's listener: on
 * Node 20, `AbortSignal.any` over `AbortSignal.timeout` never fires once a garbage collection has taken the
 * timeout signal, which nothing else references. The timer keeps no process alive; `clear` ends it and the
 * listener once the work is done.
 */
export function deadline(signal: AbortSignal, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, ms).unref();
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
