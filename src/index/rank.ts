/**
 * Static document rank: the order documents take inside a shard, so that a
 * search that stops early has already seen the likeliest-useful files.
 * Hand-written source beats tests, tests beat vendored code, vendored beats
 * generated; then shorter paths, then byte order.
 */

const VENDORED = /(^|\/)(vendor|vendored|node_modules|third[_-]?party|external|deps|bower_components)\//i;
const GENERATED =
  /(\.min\.(js|css)$|\.pb\.go$|_pb2\.py$|\.generated\.|(^|\/)generated\/|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum)$)/i;
const TEST = /((^|\/)(tests?|__tests__|spec|testdata|testing)\/|(^|\/)test_[^/]*$|[._-](test|spec)\.[^/]+$|_test\.[^/]+$)/i;

/** Lower is better. */
function pathPenalty(path: string): number {
  if (GENERATED.test(path)) return 3;
  if (VENDORED.test(path)) return 2;
  if (TEST.test(path)) return 1;
  return 0;
}

/** Sorts items in place by static rank of their path. */
export function sortByStaticRank<T extends { path: string }>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, penalty: pathPenalty(item.path) }));
  keyed.sort(
    (a, b) => a.penalty - b.penalty || a.item.path.length - b.item.path.length || (a.item.path < b.item.path ? -1 : a.item.path > b.item.path ? 1 : 0),
  );
  keyed.forEach((entry, i) => (items[i] = entry.item));
  return items;
}
