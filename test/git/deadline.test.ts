import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { deadline } from '../../src/git/deadline.js';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

t.test('a deadline fires after its time even when a garbage collection ran meanwhile', async (t) => {
  const parent = new AbortController();
  const limit = deadline(parent.signal, 100);
  t.teardown(limit.clear);
  let fired = false;
  limit.signal.addEventListener('abort', () => (fired = true));
  collectGarbage();
  await sleep(10);
  collectGarbage();
  await sleep(400);
  t.ok(fired && limit.signal.aborted, 'it fired (AbortSignal.any over AbortSignal.timeout does not, on Node 20)');
  t.notOk(parent.signal.aborted, 'the parent is left alone');
});

t.test('a deadline fires with its parent, at once when the parent already fired, and not after clear', async (t) => {
  const parent = new AbortController();
  const limit = deadline(parent.signal, 60_000);
  t.notOk(limit.signal.aborted);
  parent.abort();
  t.ok(limit.signal.aborted, 'the parent stopping stops it');
  limit.clear();

  const stopped = deadline(parent.signal, 60_000);
  t.ok(stopped.signal.aborted, 'a parent that had fired fires it at once');
  stopped.clear();

  const cleared = deadline(new AbortController().signal, 50);
  cleared.clear();
  await sleep(150);
  t.notOk(cleared.signal.aborted, 'cleared, its timer is gone');
});
