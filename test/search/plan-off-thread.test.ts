import t from 'tap';
import RE2 from 're2';
import { plan } from '../../src/query/plan.js';

// RE2 compiles counted on this thread: the pool is imported with 're2' wrapped (its workers load the real one).
// The built pool: tap's mockImport replaces 're2' in the nested imports of JavaScript modules, not of the TypeScript sources.
let compiledHere = 0;
const CountingRE2 = new Proxy(RE2, {
  construct(target, args, newTarget) {
    compiledHere++;
    return Reflect.construct(target, args, newTarget) as object;
  },
});
const { SearchPool } = (await t.mockImport(new URL('../../dist/src/search/pool.js', import.meta.url).href, { re2: CountingRE2 })) as typeof import('../../src/search/pool.js');
// The constants its modules compile as they load: the wrapper is what they use.
const compiledAtLoad = compiledHere;
compiledHere = 0;

t.test("a query's regexes are compiled by a worker, not on the front end's thread", async (t) => {
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 4, timeBudgetMs: 10_000, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  const valid = { query: 'file:\\.c$ (foo|bar)+baz', matches: 10, isRegexEnabled: true };
  t.same(await pool.plan(valid), plan(valid, {}), 'the same plan as query/plan.ts makes');
  // Each `\pL{1000}` is a thousand Unicode classes: RE2 works a while before it gives up.
  const tooLarge = { query: `lang:c ${'\\pL{1000}'.repeat(20)}`, matches: 10, isRegexEnabled: true };
  const expected = (() => {
    try {
      plan(tooLarge, {});
    } catch (error) {
      return error as Error;
    }
  })();
  t.match(expected, { name: 'QueryParseError', message: /invalid regex .*pattern too large/ });
  await t.rejects(pool.plan(tooLarge), { name: 'QueryParseError', message: expected!.message, position: 7 });
  await t.rejects(pool.plan({ query: 'repo:a( x', matches: 1 }), { message: /repo: has an invalid regex "a\(" .* at column 1/ });
  t.same(await pool.plan({ query: 'plain words', matches: 1 }), plan({ query: 'plain words', matches: 1 }, {}), 'a query without regexes needs no worker');
  t.equal(compiledHere, 0, 'no regex was compiled on this thread');
  t.ok(compiledAtLoad > 0, "the count is of the pool's own RE2");
});
