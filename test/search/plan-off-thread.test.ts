import t from 'tap';
import { native } from '../../native/index.js';
import { checkedPattern } from '../../src/query/compiled-regex.js';
import { plan } from '../../src/query/plan.js';
import { SearchPool } from '../../src/search/pool.js';
import { REMEMBERED_PATTERNS } from '../../src/search/pattern-checks.js';
import { SearchWorkers } from '../../src/search/workers.js';

// RE2 compiles counted on this thread: the workers load the addon for themselves.
let compiledHere = 0;
const compileRegex = native.compileRegex.bind(native);
native.compileRegex = (source, caseSensitive) => {
  compiledHere++;
  return compileRegex(source, caseSensitive);
};

// Checks asked of the workers, each with the patterns it names.
const checksAsked: string[][] = [];
const run = SearchWorkers.prototype.run;
SearchWorkers.prototype.run = function (task, name) {
  if (name === 'checkRegexes') checksAsked.push(task as string[]);
  return run.call(this, task, name);
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

t.test('patterns a worker has checked are planned on the front end, the refused ones too', async (t) => {
  const pool = new SearchPool({ workers: 1, maxQueuedSearches: 4, timeBudgetMs: 10_000, publicUrl: 'http://127.0.0.1:1', contexts: {} });
  t.teardown(() => pool.close());
  const valid = { query: 'file:\\.h$ lang:c kmalloc\\(\\w+', matches: 10, isRegexEnabled: true };
  const swapped = { ...valid, query: 'kmalloc\\(\\w+ file:\\.h$' };
  const expected = { valid: planned(valid), swapped: planned(swapped) };
  checksAsked.length = 0;
  compiledHere = 0;
  t.same(await pool.plan(valid), expected.valid);
  t.same(await pool.plan(valid), expected.valid, 'the same plan the second time');
  t.same(await pool.plan(swapped), expected.swapped, 'known patterns in another query');
  t.same(checksAsked, [['\\.h$', 'kmalloc\\(\\w+']], 'a worker was asked once');

  const refused = { query: 'ok(x)? broken(', matches: 1, isRegexEnabled: true };
  for (let attempt = 0; attempt < 2; attempt++) {
    await t.rejects(pool.plan(refused), { name: 'QueryParseError', message: /invalid regex "broken\(" \(missing \): broken\(\) at column 8/, position: 7 });
  }
  t.same(checksAsked.slice(1), [['ok(x)?', 'broken(']], 'the refusal is remembered with the pattern before it');

  // The budget is summed over a query's patterns whether they are known or not.
  const costly = (n: number) => `[\\p{L}\\p{N}]{300}x${n}`;
  await pool.plan({ query: `${costly(1)} ${costly(2)}`, matches: 1, isRegexEnabled: true });
  await t.rejects(pool.plan({ query: `${costly(1)} ${costly(2)} ${costly(1)}y`, matches: 1, isRegexEnabled: true }), {
    message: /more than 1,000,000 RE2 instructions/,
  });
  await t.rejects(pool.plan({ query: `${costly(2)} ${costly(1)} ${costly(2)}`, matches: 1, isRegexEnabled: true }), {
    message: /more than 1,000,000 RE2 instructions/,
    position: 2 * costly(1).length + 2,
  });
  t.equal(checksAsked.length, 4, 'three known costly patterns are refused with no worker asked');

  // Forgotten beyond REMEMBERED_PATTERNS, the least recently used first.
  for (let n = 0; n < REMEMBERED_PATTERNS; n++) await pool.plan({ query: `p${n}+`, matches: 1, isRegexEnabled: true });
  const asked = checksAsked.length;
  await pool.plan({ query: `p${REMEMBERED_PATTERNS - 1}+`, matches: 1, isRegexEnabled: true });
  t.equal(checksAsked.length, asked, 'the most recent pattern is still known');
  await pool.plan(valid);
  t.same(checksAsked.slice(asked), [['\\.h$', 'kmalloc\\(\\w+']], 'an older one is asked again');
  t.equal(compiledHere, 0, 'no regex was compiled on this thread');
});
