import t from 'tap';
import { native } from '../../native/index.js';
import { checkedPattern } from '../../src/query/compiled-regex.js';
import { plan } from '../../src/query/plan.js';
import { SearchPool } from '../../src/search/pool.js';

// RE2 compiles counted on this thread: the workers load the addon for themselves.
let compiledHere = 0;
const compileRegex = native.compileRegex.bind(native);
native.compileRegex = (source, caseSensitive) => {
  compiledHere++;
  return compileRegex(source, caseSensitive);
};

/** What `plan` makes of `request` on this thread, or the error it throws. */
function planned(request: Parameters<typeof plan>[0]) {
  try {
    return plan(request, {});
  } catch (error) {
    return error as Error;
  }
}

t.test("a query's regexes are compiled by a worker, not on the front end's thread", async (t) => {
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 4, timeBudgetMs: 10_000, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  const valid = { query: 'file:\\.c$ (foo|bar)+baz', matches: 10, isRegexEnabled: true };
  // Each `\pL{1000}` is a thousand Unicode classes: RE2 works a while before it gives up.
  const tooLarge = { query: `lang:c ${'\\pL{1000}'.repeat(20)}`, matches: 10, isRegexEnabled: true };
  const plain = { query: 'plain words', matches: 1 };
  const expected = { valid: planned(valid), tooLarge: planned(tooLarge), plain: planned(plain) };
  t.match(expected.tooLarge, { name: 'QueryParseError', message: /invalid regex .*pattern too large/ });
  t.ok(compiledHere > 0, 'the count is of the RE2 this thread uses');

  compiledHere = 0;
  t.same(await pool.plan(valid), expected.valid, 'the same plan as query/plan.ts makes');
  await t.rejects(pool.plan(tooLarge), { name: 'QueryParseError', message: (expected.tooLarge as Error).message, position: 7 });
  await t.rejects(pool.plan({ query: 'repo:a( x', matches: 1 }), { message: /repo: has an invalid regex "a\(" .* at column 1/ });
  t.same(await pool.plan(plain), expected.plain, 'a query without regexes needs no worker');
  t.equal(compiledHere, 0, 'no regex was compiled on this thread');
  checkedPattern('counted(here)?');
  t.equal(compiledHere, 1, 'while one compiled here is counted');
});
