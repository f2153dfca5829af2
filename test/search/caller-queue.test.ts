import t from 'tap';
import { queueOptionsSymbol } from 'piscina';
import { CallerTaskQueue } from '../../src/search/caller-queue.js';

type Named = { name: string; [queueOptionsSymbol]: { caller?: string; resumes?: boolean } };
const task = (name: string, caller?: string, resumes = false): Named => ({ name, [queueOptionsSymbol]: caller === undefined ? {} : { caller, resumes } });

/** What `queue` gives, shifted until it is empty. */
function drained(queue: CallerTaskQueue): string[] {
  const names: string[] = [];
  for (let next = queue.shift(); next !== null; next = queue.shift()) names.push((next as Named).name);
  return names;
}

t.test('callers take turns, each first in, first out', async (t) => {
  const queue = new CallerTaskQueue();
  for (const name of ['a1', 'a2', 'a3', 'a4']) queue.push(task(name, 'a'));
  queue.push(task('b1', 'b'));
  queue.push(task('n1'));
  queue.push(task('b2', 'b'));
  queue.push(task('n2'));
  t.equal(queue.size, 8);
  t.same(drained(queue), ['a1', 'b1', 'n1', 'a2', 'b2', 'n2', 'a3', 'a4'], 'tasks without a caller take their turns together');
  t.equal(queue.size, 0);
  t.equal(queue.shift(), null);
});

t.test('one caller is first in, first out', async (t) => {
  const queue = new CallerTaskQueue();
  for (let i = 0; i < 10; i++) queue.push(task(`t${i}`, 'only'));
  t.same(
    drained(queue),
    Array.from({ length: 10 }, (_, i) => `t${i}`),
  );
});

t.test('a task put back is the next one again, in the turn it had', async (t) => {
  const queue = new CallerTaskQueue();
  for (const name of ['a1', 'a2']) queue.push(task(name, 'a'));
  queue.push(task('b1', 'b'));
  const first = queue.shift()!;
  queue.unshift(first);
  t.same(drained(queue), ['a1', 'b1', 'a2']);
  const lone = task('c1', 'c');
  queue.push(task('d1', 'd'));
  queue.unshift(lone);
  t.same(drained(queue), ['c1', 'd1'], 'a caller with nothing else queued goes first too');
});

t.test("a task resuming one that gave its worker up is its caller's next, in the caller's turn", async (t) => {
  const queue = new CallerTaskQueue();
  queue.push(task('b1', 'b'));
  queue.push(task('a2', 'a'));
  queue.push(task('a1 resumed', 'a', true));
  queue.push(task('c1 resumed', 'c', true));
  queue.push(task('b2', 'b'));
  t.same(drained(queue), ['b1', 'a1 resumed', 'c1 resumed', 'b2', 'a2'], "ahead of its caller's older tasks, behind the callers waiting before it");
});

t.test('a task removed is not given, and its caller loses its turn with its last task', async (t) => {
  const queue = new CallerTaskQueue();
  const b1 = task('b1', 'b');
  queue.push(task('a1', 'a'));
  queue.push(b1);
  queue.push(task('a2', 'a'));
  queue.push(task('c1', 'c'));
  queue.remove(b1);
  queue.remove(task('unknown', 'a'));
  t.equal(queue.size, 3);
  t.same(drained(queue), ['a1', 'c1', 'a2']);
});
