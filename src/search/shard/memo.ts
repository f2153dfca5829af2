/** The value `cache` holds for `key`, made (once) by `make` when it holds none. */
export function cached<K, T>(cache: Map<K, T>, key: K, make: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    value = make();
    cache.set(key, value);
  }
  return value;
}
