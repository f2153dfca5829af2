import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { readLimit } from '../../src/git/errors.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Node 20's AbortSignal.any over AbortSignal.timeout lost its deadline to a collection: a walk ran on past it.
t.test('a read limit fires at its budget, garbage collections or not', async (t) => {
  const { limit } = readLimit(50);
  gc();
  await after(20);
  gc();
  t.equal(limit.signal.aborted, false, 'not before the budget');
  await after(150);
  t.equal(limit.signal.aborted, true, 'fired at the budget');
});

t.test('a read limit fires when stopped (the client gone)', async (t) => {
  const { limit, stop } = readLimit(60_000);
  stop();
  t.equal(limit.signal.aborted, true);
});
