import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { recordOffsets } from '../../src/auth/state-record.js';
import { stateDirectory } from '../../src/auth/store.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon } from '../helpers/daemon.js';
import { NEEDS_ROOT_TO_MOUNT, smallFileSystem } from '../helpers/tmp.js';
import { fixtureRepository } from './fixture.js';

const REPO = 'example.com/acme/widgets';
const CLIENTS = 32;

t.test('kill -9 while 32 clients create tokens: every token whose 201 arrived works after the restart', async (t) => {
  const repo = fixtureRepository(t, REPO);
  let owner!: SeededUser;
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => void (owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']!),
    },
  );
  const acknowledged: string[] = [];
  let stop = false;
  const client = async () => {
    while (!stop) {
      try {
        const response = await daemon.fetch('/api/ee/scoped_access_token', {
          method: 'POST',
          headers: bearer(owner.key),
          body: JSON.stringify({ repos: [REPO] }),
        });
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
  const auditLog = path.join(stateDirectory(dataDir), 'audit.log');
  const goodBytes = fs.statSync(log).size;
  const auditGoodBytes = recordOffsets(fs.readFileSync(auditLog)).end; // its records are written in batches the kill may cut
  const torn = Buffer.from([0x40, 0x00, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x81, 0xa1]);
  fs.appendFileSync(log, torn);
  fs.appendFileSync(auditLog, torn);

  const restarted = await runDaemon(t, daemon.configFile, { env: LICENSE_ENV });
  await restarted.waitForLog(/state log: a damaged tail was cut off/, 'the repair to be logged');
  await restarted.waitForLog(/audit log: a damaged tail was cut off/, "the audit log's repair to be logged");
  t.pass('both repairs are logged');
  t.equal(fs.statSync(log).size, goodBytes, 'cut back to the last good record');
  t.equal(fs.statSync(auditLog).size, auditGoodBytes, 'the audit log too');
  const failing: string[] = [];
  for (const token of acknowledged) {
    if ((await restarted.fetch('/api/repos', { headers: bearer(token) })).status !== 200) failing.push(token);
  }
  t.same(failing, [], 'every acknowledged token works');
  t.equal(
    (await restarted.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ repos: [REPO] }) })).status,
    201,
    'and new ones can be made',
  );
});

t.test(
  'a full disk: a token that cannot be saved is a 500 saying so, reads go on, and nothing acknowledged is lost',
  { skip: NEEDS_ROOT_TO_MOUNT },
  async (t) => {
    const disk = smallFileSystem(t, 4096);
    const repo = fixtureRepository(t, REPO);
    let owner!: SeededUser;
    const daemon = await startDaemon(
      t,
      { repos: [repo.config], index: { ctagsCommand: '' }, dataDir: path.join(disk.dir, 'data') },
      {
        env: LICENSE_ENV,
        prepare: async (configFile) => void (owner = (await seedUsers(configFile, [{ email: 'owner@example.com', role: 'owner' }]))['owner@example.com']!),
      },
    );
    const create = () => daemon.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ repos: [REPO] }) });
    const acknowledged: string[] = [];
    const createUntilRefused = async () => {
      for (let n = 0; n < 100; n++) {
        const response = await create();
        if (response.status !== 201) return response;
        acknowledged.push((await response.json()).id);
      }
      throw new Error('100 tokens saved on a full disk');
    };
    const search = () => daemon.fetch('/api/search', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ query: 'parse', matches: 10 }) });
    t.equal((await create()).status, 201, 'a token while there is room');
    disk.fill();
    // Each search is audited: these fill the audit log's last page, so that its records wait for room.
    const statuses: number[] = [];
    for (let n = 0; n < 30; n++) statuses.push((await search()).status);
    t.same(new Set(statuses), new Set([200]), 'searches go on');
    const refused = await createUntilRefused();
    t.equal(refused.status, 500);
    t.match(
      await refused.json(),
      { statusCode: 500, errorCode: 'UNEXPECTED_ERROR', message: /^nothing was saved: the disk that holds the server's data directory is full \(ENOSPC\)$/ },
      'the error says what is wrong',
    );
    await daemon.waitForLog(/"level":50.*nothing was saved/, 'the refusal logged as an error');
    t.pass('and logs it as an error');
    t.ok((await (await search()).json()).files.length > 0, 'and find');
    t.same(await (await daemon.fetch('/api/health')).json(), { status: 'ok' });

    disk.free();
    const after = await create();
    t.equal(after.status, 201, 'tokens are saved again once there is room');
    acknowledged.unshift((await after.json()).id);
    const audited = (await (await daemon.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner.key) })).json()) as { action: string; targetId: string }[];
    const createdIds = audited.filter((entry) => entry.action === 'token.created').map((entry) => entry.targetId);
    t.same(
      acknowledged.filter((id) => !createdIds.includes(id)),
      [],
      'the audit trail has every token made while the disk was full',
    );
    t.equal(audited.filter((entry) => entry.action === 'search').length, 31, 'and every search');

    await daemon.stop();
    const restarted = await runDaemon(t, daemon.configFile, { env: LICENSE_ENV });
    const listed = ((await (await restarted.fetch('/api/ee/scoped_access_tokens', { headers: bearer(owner.key) })).json()) as { id: string }[]).map(
      (token) => token.id,
    );
    t.same(
      acknowledged.filter((id) => !listed.includes(id)),
      [],
      `after a restart every acknowledged token is there (${acknowledged.length})`,
    );
    t.equal(listed.length, acknowledged.length + 1, 'and none that was refused');
  },
);
