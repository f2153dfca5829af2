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
