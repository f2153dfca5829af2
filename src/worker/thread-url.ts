/**
 * Where a thread entry of this folder is: its `.js` file when trawl runs built, its `.ts` file when the
 * test runner loads the sources (its loader is inherited by the threads). Every thread is started through it.
 * The path goes through `../worker/` so that it holds from the build's bundle chunks (dist/src/chunks) too.
 */
export type ThreadName = 'search-thread' | 'index-thread' | 'symbol-thread';

export function threadUrl(name: ThreadName): URL {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`../worker/${name}${extension}`, import.meta.url);
}
