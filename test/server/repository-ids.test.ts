import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from './fixture.js';

const GRANTED = 'example.com/acme/granted';
const OTHER = 'example.com/acme/other';

t.test('a grant stays on its repository when the index is rebuilt from nothing and the config is reordered', async (t) => {
  const granted = { ...fixtureRepository(t, GRANTED).config, public: false };
  const other = { ...fixtureRepository(t, OTHER).config, public: false };
  let users: Record<string, SeededUser> = {};
  const first = await startDaemon(
    t,
    { repos: [granted, other], auth: { anonymousAccess: false }, index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) =>
        void (users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner' },
          { email: 'member@example.com', role: 'member' },
        ])),
    },
  );
  const owner = users['owner@example.com']!;
  const member = users['member@example.com']!;
  const visibleTo = async (daemon: typeof first, key: string) =>
    ((await (await daemon.fetch('/api/repos', { headers: bearer(key) })).json()) as { repoName: string }[]).map((repo) => repo.repoName);
  t.equal(
    (await first.fetch('/api/admin/grants', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ userId: member.id, repo: GRANTED }) })).status,
    200,
  );
  t.same(await visibleTo(first, member.key), [GRANTED]);
  const token = await (
    await first.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ repos: [GRANTED] }) })
  ).json();
  t.equal(await first.stop(), 0);

  // The index is disposable: delete it whole, and list the repositories the other way round.
  const config = JSON.parse(fs.readFileSync(first.configFile, 'utf8'));
  fs.rmSync(path.join(config.dataDir, 'manifest.json'));
  fs.rmSync(path.join(config.dataDir, 'shards'), { recursive: true });
  fs.writeFileSync(first.configFile, JSON.stringify({ ...config, repos: [other, granted] }));
  const second = await runDaemon(t, first.configFile, { env: LICENSE_ENV });
  t.same(await visibleTo(second, member.key), [GRANTED], 'the member still sees the repository granted, and only it');
  t.same(await visibleTo(second, token.token), [GRANTED], "the token's scope did not move either");
});
