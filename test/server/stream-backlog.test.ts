import t from 'tap';
import { Backlogs } from '../../src/server/stream-backlog.js';

/** Whether `promise` has resolved once pending callbacks ran. */
const resolved = (promise: Promise<void>) => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

t.test('a capped stream is refused past its own bound or all streams’', async (t) => {
  const backlogs = new Backlogs({ perStream: 10, pacedPerStream: 4, allStreams: 15 });
  const a = backlogs.open();
  const b = backlogs.open();
  t.ok(a.add(10, true), 'up to its bound');
  t.notOk(a.add(1, true), 'not past it');
  t.ok(b.add(5, true));
  t.notOk(b.add(1, true), 'nor past all streams’ bound');
  t.equal(backlogs.bytes, 15, 'a refused part is not counted');
  a.taken(10);
  t.ok(b.add(1, true), 'room again once written');
});

t.test('an exhaustive stream waits while its own backlog or all streams’ are large, and not once closed', async (t) => {
  const backlogs = new Backlogs({ perStream: 100, pacedPerStream: 4, allStreams: 10 });
  const paced = backlogs.open();
  const other = backlogs.open();
  t.ok(paced.add(6, false), 'an exhaustive stream is never refused');
  const own = paced.ready();
  t.notOk(await resolved(own), 'waits while its own 6 bytes are over 4');
  paced.taken(2);
  t.ok(await resolved(own), 'goes on at 4');

  t.ok(other.add(8, false), 'another exhaustive stream');
  const all = paced.ready();
  t.notOk(await resolved(all), 'waits while all streams hold 12 of 10');
  other.taken(8);
  t.ok(await resolved(all), "goes on when another stream's client reads");

  t.ok(paced.add(20, false));
  const stopped = paced.ready();
  t.notOk(await resolved(stopped));
  paced.close();
  t.ok(await resolved(stopped), 'a closed stream waits for nothing');
  t.ok(await resolved(paced.ready()), 'then or later');
});
