import t from 'tap';
import { GitProcessesBusyError, ProcessSlots } from '../../src/git/process-slots.js';

const never = () => ({ signal: new AbortController().signal, budgetMs: 60_000 });

/** A task that runs until `finish()`; `started` resolves once its slot is given. */
function gate() {
  let finish!: () => void;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { started, finish, task: () => (markStarted(), done) };
}

t.test('git processes run at most `slots` at once; waiting callers are served in turn, not by arrival', async (t) => {
  const slots = new ProcessSlots(1, 100);
  const order: string[] = [];
  const running = gate();
  const first = slots.run('heavy', never(), 'blame', 'narrow', running.task);
  await running.started;
  const queued: Promise<void>[] = [];
  for (let i = 0; i < 5; i++) queued.push(slots.run('heavy', never(), 'blame', 'narrow', async () => void order.push(`heavy ${i}`)));
  queued.push(slots.run('light', never(), 'blame', 'narrow', async () => void order.push('light')));
  t.equal(slots.waiting, 6, 'six wait for the one slot');
  running.finish();
  await Promise.all([first, ...queued]);
  t.same(
    order,
    ['heavy 0', 'light', 'heavy 1', 'heavy 2', 'heavy 3', 'heavy 4'],
    "the light caller's one read comes after one of the heavy caller's, not after all five",
  );
  t.equal(slots.waiting, 0);
});

t.test('the wait is bounded, and a read whose limit fires while it waits leaves the queue', async (t) => {
  const slots = new ProcessSlots(1, 2);
  const running = gate();
  const first = slots.run('a', never(), 'blame', 'narrow', running.task);
  await running.started;
  const controller = new AbortController();
  const leaving = slots.run('b', { signal: controller.signal, budgetMs: 5 }, 'the blame of x', 'blame a smaller file', async () => 'ran');
  const staying = slots.run('c', never(), 'blame', 'narrow', async () => 'ran');
  await t.rejects(
    slots.run('d', never(), 'blame', 'narrow', async () => 'ran'),
    GitProcessesBusyError,
    'a third waiting read is refused',
  );
  controller.abort();
  await t.rejects(leaving, { name: 'GitReadStoppedError', bound: 'time' }, 'the read whose client went away stops waiting');
  t.equal(slots.waiting, 1, 'and leaves its place');
  running.finish();
  await first;
  t.equal(await staying, 'ran', 'the rest run');
  t.equal(await slots.run('d', never(), 'blame', 'narrow', async () => 'ran'), 'ran', 'and a free slot is taken at once');
});

t.test('a task that throws gives its slot back', async (t) => {
  const slots = new ProcessSlots(1, 1);
  await t.rejects(
    slots.run('a', never(), 'blame', 'narrow', async () => Promise.reject(new Error('git failed'))),
    /git failed/,
  );
  t.equal(await slots.run('a', never(), 'blame', 'narrow', async () => 'ran'), 'ran');
});
