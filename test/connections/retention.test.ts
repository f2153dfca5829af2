import t from 'tap';
import { departures } from '../../src/connections/retention.js';
import type { ConnectionRecord, MirroredRepository } from '../../src/connections/sync-state.js';

const HOUR = 3_600_000;
const start = Date.parse('2026-12-01T00:00:00Z');

function record(): ConnectionRecord {
  const repo = (name: string, extra: Partial<MirroredRepository> = {}): MirroredRepository => ({
    name,
    path: name,
    cloneUrl: `https://git.example.com/${name}.git`,
    archived: false,
    fork: false,
    mirror: name.replace('/', '-'),
    fetchedAt: new Date(start - HOUR).toISOString(),
    ...extra,
  });
  return {
    id: 1,
    warnings: [],
    repos: [
      repo('acme/kept'),
      repo('acme/moved'),
      repo('acme/never', { fetchedAt: undefined }),
      repo('acme/deleted', { goneSince: new Date(start).toISOString() }),
    ],
  };
}

const names = (repos: MirroredRepository[]) => repos.map((repo) => repo.name);

t.test('a single node drops only what its host stopped listing, after the grace', async (t) => {
  const connection = record();
  t.same(departures(connection, undefined, 24, start + 23 * HOUR), { gone: [], released: [] }, 'within the grace nothing goes');
  const later = departures(connection, undefined, 24, start + 24 * HOUR);
  t.same(names(later.gone), ['acme/deleted'], 'gone from the host for 24 hours: dropped');
  t.same(later.released, [], 'nothing is released without a cluster');
  t.same(names(connection.repos), ['acme/kept', 'acme/moved', 'acme/never'], 'and taken out of the record');
});

t.test('a cluster node forgets the fetch of a repository it has not held for the grace, and only then', async (t) => {
  const connection = record();
  const held = new Set(['acme/kept']);
  const holds = (name: string) => held.has(name);
  t.same(departures(connection, holds, 24, start).released, [], 'no longer held: not removed at once');
  const moved = connection.repos.find((repo) => repo.name === 'acme/moved')!;
  t.equal(moved.releasedSince, new Date(start).toISOString(), 'since when it is not held is recorded');
  t.equal(connection.repos.find((repo) => repo.name === 'acme/never')!.releasedSince, undefined, 'a repository never fetched here has no mirror to remove');

  held.add('acme/moved');
  departures(connection, holds, 24, start + 12 * HOUR);
  t.equal(moved.releasedSince, undefined, 'held again: the clock stops');
  held.delete('acme/moved');
  t.same(departures(connection, holds, 24, start + 13 * HOUR).released, [], 'released again: the grace starts over');
  const released = departures(connection, holds, 24, start + 37 * HOUR).released;
  t.same(names(released), ['acme/moved'], 'not held for 24 hours: released');
  t.equal(moved.fetchedAt, undefined, 'its fetch is forgotten, so it is fetched whole if held again');
  t.ok(names(connection.repos).includes('acme/moved'), 'it stays listed: other nodes hold it');
});
