import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { readLimit } from '../../src/git/errors.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Node 20's AbortSignal.any over AbortSignal.timeout lost its deadline to a collection: a walk ran on past it.
// When it fires is measured, not assumed: a loaded machine may run the test's own timers late.
t.test('a read limit fires at its budget, garbage collections or not', async (t) => {
  const startedAt = performance.now();
  const { limit } = readLimit(50);
  const fired = new Promise<number>((resolve) => limit.signal.addEventListener('abort', () => resolve(performance.now() - startedAt)));
  // The limit's own timer does not hold the process open (it is unref'd); this one does until it fires.
  const open = setTimeout(() => undefined, 60_000);
  gc();
  await after(20);
  gc();
  const firedAfter = await fired;
  clearTimeout(open);
  t.ok(firedAfter >= 49, `not before the budget (fired after ${firedAfter.toFixed(1)} ms)`);
  t.equal(limit.signal.aborted, true, 'fired, though collections ran while it waited');
});

t.test('a read limit fires when stopped (the client gone)', async (t) => {
  const { limit, stop } = readLimit(60_000);
  stop();
  t.equal(limit.signal.aborted, true);
});
