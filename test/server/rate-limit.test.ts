import t from 'tap';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { startDaemon } from '../helpers/daemon.js';
import { expectError } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

t.test('server.rateLimitPerSecond: a bucket per credential, failed authentications per address', async (t) => {
  const repo = fixtureRepository(t);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' }, server: { rateLimitPerSecond: 1 } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        users = await seedUsers(configFile, [
          { email: 'busy@example.com', role: 'member' },
          { email: 'calm@example.com', role: 'member' },
        ]);
      },
    },
  );
  const busy = users['busy@example.com']!.key;
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await daemon.fetch('/api/repos', { headers: bearer(busy) })).status);
  t.same(statuses.slice(0, 2), [200, 200], 'a burst of twice the rate passes');
  const limited = await daemon.fetch('/api/repos', { headers: bearer(busy) });
  await expectError(t, limited, 429, 'RATE_LIMITED', /more than 1 requests per second/);
  t.match(limited.headers.get('retry-after'), /^[1-9]\d*$/, 'with Retry-After');
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(users['calm@example.com']!.key) })).status, 200, 'another credential has its own bucket');
  t.equal((await daemon.fetch('/api/health')).status, 200, 'health is never limited');

  const guesses: number[] = [];
  for (let i = 0; i < 4; i++) guesses.push((await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${String(i).repeat(64)}`) })).status);
  t.same(guesses, [401, 401, 429, 429], 'guessing keys from one address is slowed as well');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(busy) })).status, 200, 'the bucket refills');
});

t.test('failed authentications have a budget per address by default, and past it nothing is audited', async (t) => {
  const repo = fixtureRepository(t);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' }, auth: { anonymousAccess: true } },
    { env: LICENSE_ENV, prepare: async (configFile) => void (users = await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }])) },
  );
  const owner = users['owner@example.com']!.key;
  const statuses: number[] = [];
  for (let i = 0; i < 40; i++) statuses.push((await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${String(i % 10).repeat(64)}`) })).status);
  t.ok(
    statuses.slice(0, 10).every((status) => status === 200),
    'a burst of ten is served (anonymously: the bad key counts as none)',
  );
  const refused = statuses.filter((status) => status === 429).length;
  t.ok(refused > 0, `then refused (${statuses.join(' ')})`);
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(owner) })).status, 200, 'a valid key from the same address still works');

  const records = await (await daemon.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner) })).json();
  const failed = records.filter((record: { action: string }) => record.action === 'auth.failed').length;
  t.equal(failed, statuses.length - refused, 'every answered failure is audited, none of the refused ones');
});
