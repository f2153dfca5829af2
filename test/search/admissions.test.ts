import t from 'tap';
import { Admissions, type Admission } from '../../src/search/admissions.js';

/** Admits `count` searches of `caller`, each recording its name in `stopped` when displaced. */
function fill(admissions: Admissions, caller: string, count: number, stopped: string[]): Admission[] {
  return Array.from({ length: count }, (_, i) => admissions.admit(caller, () => stopped.push(`${caller}${i}`))!);
}

t.test('a caller alone fills the queue, then is refused', async (t) => {
  const admissions = new Admissions(4);
  const stopped: string[] = [];
  const held = fill(admissions, 'a', 4, stopped);
  t.ok(
    held.every((admission) => admission !== undefined),
    'four admitted',
  );
  t.equal(
    admissions.admit('a', () => {}),
    undefined,
    'a fifth is refused',
  );
  t.same(stopped, [], 'nobody displaced');
  admissions.release(held[0]!);
  t.ok(admissions.admit('a'), 'a place given back is taken again');
});

t.test('another caller takes the youngest place of the caller holding most, until they hold about as many', async (t) => {
  const admissions = new Admissions(6);
  const stopped: string[] = [];
  const held = fill(admissions, 'a', 6, stopped);
  const b = [admissions.admit('b', () => {}), admissions.admit('b', () => {})];
  t.ok(
    b.every((admission) => admission !== undefined),
    "b's two admitted into a full queue",
  );
  t.same(stopped, ['a5', 'a4'], "a's youngest gave their places, youngest first");
  t.ok(held[5]!.displaced && held[4]!.displaced && !held[3]!.displaced);
  t.equal(admissions.size, 6, 'the limit holds');
  t.ok(
    admissions.admit('b', () => {}),
    'b holding 2 against 4 gets a third',
  );
  t.equal(
    admissions.admit('b', () => {}),
    undefined,
    'b holding 3 against 3 is refused',
  );
  t.same(stopped, ['a5', 'a4', 'a3']);
  admissions.release(held[5]!);
  t.equal(admissions.size, 6, 'releasing a displaced search again gives nothing back');
});

t.test('a search that keeps its place, or cannot give it, is passed over', async (t) => {
  const admissions = new Admissions(3);
  const stopped: string[] = [];
  const [a0, , a2] = fill(admissions, 'a', 3, stopped);
  a2!.keep(); // a worker answered it
  t.ok(
    admissions.admit('b', () => {}),
    'b admitted',
  );
  t.same(stopped, ['a1'], 'the youngest that may give its place did');
  t.ok(a0 && !a0.displaced && !a2!.displaced);

  const checks = new Admissions(2);
  checks.admit('a');
  checks.admit('a');
  t.equal(
    checks.admit('b', () => {}),
    undefined,
    'places without a way to stop (regex checks) are never given',
  );
});

t.test('the caller holding most is found again as places are given back', async (t) => {
  const admissions = new Admissions(5);
  const stopped: string[] = [];
  const a = fill(admissions, 'a', 3, stopped);
  fill(admissions, 'b', 2, stopped);
  for (const admission of a) admissions.release(admission);
  fill(admissions, 'c', 3, stopped);
  t.same(stopped, [], 'room enough');
  t.ok(
    admissions.admit('d', () => {}),
    'd admitted into a full queue',
  );
  t.same(stopped, ['c2'], 'c, holding most now, gave its youngest');
});
