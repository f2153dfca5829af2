import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { stateDirectory } from '../../src/auth/store.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from './fixture.js';

const REPO = 'example.com/acme/widgets';
const CLIENTS = 32;

t.test('kill -9 while 32 clients create tokens: every token whose 201 arrived works after the restart', async (t) => {
  const repo = fixtureRepository(t, REPO);
  let owner!: SeededUser;
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' } },
    { env: LICENSE_ENV, prepare: async (configFile) => void (owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']!) },
  );
  const acknowledged: string[] = [];
  let stop = false;
  const client = async () => {
    while (!stop) {
      try {
        const response = await daemon.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ repos: [REPO] }) });
        if (response.status === 201) acknowledged.push((await response.json()).token);
      } catch {
        return; // the daemon is gone
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 5));
  await daemon.stop('SIGKILL');
  stop = true;
  await Promise.all(clients);
  t.ok(acknowledged.length >= 200, `${acknowledged.length} tokens acknowledged before the kill`);

  // A torn record after the last acknowledged one, as a crash mid-write leaves it.
  const { dataDir } = JSON.parse(fs.readFileSync(daemon.configFile, 'utf8')) as { dataDir: string };
  const log = path.join(stateDirectory(dataDir), 'state.log');
  const goodBytes = fs.statSync(log).size;
  fs.appendFileSync(log, Buffer.from([0x40, 0x00, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x81, 0xa1]));

  const restarted = await runDaemon(t, daemon.configFile, { env: LICENSE_ENV });
  await restarted.waitForLog(/damaged tail was cut off/, 'the repair to be logged');
  t.pass('the repair is logged');
  t.equal(fs.statSync(log).size, goodBytes, 'cut back to the last good record');
  const failing: string[] = [];
  for (const token of acknowledged) {
    if ((await restarted.fetch('/api/repos', { headers: bearer(token) })).status !== 200) failing.push(token);
  }
  t.same(failing, [], 'every acknowledged token works');
  t.equal((await restarted.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ repos: [REPO] }) })).status, 201, 'and new ones can be made');
});
