import t from 'tap';
import { Worker } from 'node:worker_threads';
import { IndexStoppedError, stopOutsideNative, stopWord, uninterrupted } from '../../src/worker/index-protocol.js';

t.test('a stop waits for the thread to leave the addon, and keeps it from entering again', async (t) => {
  const word = stopWord();
  const left = new Int32Array(new SharedArrayBuffer(4));
  // A thread "inside the addon" (as uninterrupted marks it) for a while, that says when it leaves.
  const thread = new Worker(
    `const { workerData: { word, left } } = require('node:worker_threads');
     Atomics.store(word, 0, 1);
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
     Atomics.store(left, 0, 1);
     Atomics.store(word, 0, 0);`,
    { eval: true, workerData: { word, left } },
  );
  t.teardown(() => thread.terminate());
  await new Promise((resolve) => setTimeout(resolve, 50)); // the thread is inside by now, or soon
  while (Atomics.load(word, 0) === 0 && Atomics.load(left, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await stopOutsideNative(word, 10_000);
  t.equal(Atomics.load(left, 0), 1, 'the stop resolved only after the thread left');
  t.throws(() => uninterrupted(word, () => 1), IndexStoppedError, 'a stopped thread does not enter again');
});

t.test('outside a stop, native work runs and its result is returned', async (t) => {
  const word = stopWord();
  t.equal(
    uninterrupted(word, () => 42),
    42,
  );
  t.throws(
    () =>
      uninterrupted(word, () => {
        throw new RangeError('from the addon');
      }),
    RangeError,
  );
  t.equal(
    uninterrupted(word, () => 'again'),
    'again',
    'a throw inside leaves the word outside',
  );
  await stopOutsideNative(word, 0);
  t.throws(() => uninterrupted(word, () => 1), IndexStoppedError);
});
