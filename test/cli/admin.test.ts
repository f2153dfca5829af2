import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { bearer, LICENSE_ENV, testLicense } from '../helpers/auth.js';
import { trawl, trawlAsync } from '../helpers/cli.js';
import { runDaemon, startDaemon } from '../helpers/daemon.js';
import { fixtureRepository } from '../server/fixture.js';
import { NEEDS_ROOT_TO_MOUNT, smallFileSystem, tempDir } from '../helpers/tmp.js';

const PRIVATE = 'example.com/acme/secret';
const KEY = /trawl_ak_[0-9a-f]{64}/;
/** A row of `keys list`: a key's id first. */
const KEY_ID_LINE = /^[0-9a-f]{8}-[0-9a-f]{4}-/m;

t.test('trawl admin: offline before the daemon, online while it runs', async (t) => {
  const hidden = { ...fixtureRepository(t, PRIVATE).config, public: false };
  let ownerKey = '';
  let configFile = '';
  const offline = (...args: string[]) => trawl(['admin', '--config', configFile, ...args], { env: LICENSE_ENV });

  const daemon = await startDaemon(
    t,
    { repos: [hidden], index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (file) => {
        configFile = file;
        const init = offline('init', '--email', 'ann@example.com', '--name', 'Ann');
        t.equal(init.status, 0, init.stderr);
        t.match(init.stdout, /owner\s+ann@example\.com\s+Ann/);
        ownerKey = KEY.exec(init.stdout)![0];
        const again = offline('init', '--email', 'bob@example.com');
        t.equal(again.status, 1);
        t.match(again.stderr, /already has users/);
        const unlicensed = offline('users', 'add', '--email', 'bob@example.com');
        t.equal(unlicensed.status, 1, 'one seat without a license');
        t.match(unlicensed.stderr, /every seat is taken \(1 without a license\)/);
        t.equal(offline('license', 'install', 'trawl_license_bogus.sig').status, 1, 'a bad license is refused');
        const installed = offline('license', 'install', testLicense({ licensee: 'Acme', seats: 3 }));
        t.equal(installed.status, 0, installed.stderr);
        t.match(installed.stdout, /licensee: Acme\nseats: 1 of 3 in use/);
        t.equal(offline('users', 'add', '--email', 'bob@example.com', '--role', 'member').status, 0);
        const grant = offline('grant', 'someone', PRIVATE);
        t.equal(grant.status, 1);
        t.match(grant.stderr, /not indexed yet/);
      },
    },
  );

  const locked = await trawlAsync(['admin', '--config', configFile, 'users', 'list'], { env: LICENSE_ENV });
  t.equal(locked.status, 1, 'offline while the daemon runs: refused');
  t.match(locked.stderr, /in use by another trawl process .*use its HTTP API/);

  const online = (...args: string[]) => trawlAsync(['admin', '--url', daemon.url, ...args], { env: { ...LICENSE_ENV, TRAWL_API_KEY: ownerKey } });
  const list = await online('users', 'list');
  t.equal(list.status, 0, list.stderr);
  t.match(list.stdout, /ann@example\.com[\s\S]*bob@example\.com/);
  const bobId = /^(\S+)\s+member\s+bob@example\.com/m.exec(list.stdout)![1]!;

  const created = await online('keys', 'create', '--name', 'ci', '--user', bobId);
  t.equal(created.status, 0, created.stderr);
  const bobKey = KEY.exec(created.stdout)![0];
  t.match((await online('keys', 'list', '--user', '*')).stdout, new RegExp(`${bobId}\\s+ci`));
  const repos = async () =>
    ((await (await daemon.fetch('/api/repos', { headers: bearer(bobKey) })).json()) as { repoName: string }[]).map((repo) => repo.repoName);
  t.same(await repos(), [], 'bob sees nothing private');
  t.equal((await online('grant', bobId, PRIVATE)).status, 0);
  t.same(await repos(), [PRIVATE], 'granted');
  t.equal((await online('revoke', bobId, PRIVATE)).status, 0);
  t.same(await repos(), [], 'revoked');

  t.equal((await online('anonymous', 'on')).status, 0);
  t.equal((await daemon.fetch('/api/repos')).status, 200, 'anonymous reads on');
  t.equal((await online('anonymous', 'off')).status, 0);
  t.equal((await daemon.fetch('/api/repos')).status, 401, 'and off');

  const keyId = new RegExp(`^(\\S+)\\s+${bobId}\\s+ci`, 'm').exec((await online('keys', 'list', '--user', bobId)).stdout)![1]!;
  t.equal((await online('keys', 'delete', keyId)).status, 0);
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(bobKey) })).status, 401, 'the deleted key stopped working');
  const removed = await online('users', 'remove', bobId);
  t.equal(removed.status, 0, removed.stderr);
  t.match(removed.stdout, /bob@example\.com was removed/);
  t.match((await online('license', 'show')).stdout, /seats: 1 of 3 in use\nexpires: .*\nstatus: active/);

  const refused = await trawlAsync(['admin', '--url', daemon.url, '--key', `trawl_ak_${'0'.repeat(64)}`, 'users', 'list']);
  t.equal(refused.status, 1);
  t.match(refused.stderr, /401 NOT_AUTHENTICATED/);
  t.equal((await online('init', '--email', 'x@example.com')).status, 2, 'init is offline only');
  t.equal((await online('frobnicate')).status, 2, 'an unknown action is a usage error');
  t.equal((await trawlAsync(['admin', '--url', daemon.url, 'users', 'list'], { env: { TRAWL_API_KEY: '' } })).status, 2, '--url without a key');
});

t.test('a state log damaged before its end: the daemon refuses to start, `state repair` keeps what is intact', async (t) => {
  const dir = tempDir(t, 'trawl-corrupt-');
  const configFile = path.join(dir, 'trawl.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), listen: { host: '127.0.0.1', port: 0 }, repos: [] }));
  const admin = (...args: string[]) => trawl(['admin', '--config', configFile, ...args], { env: LICENSE_ENV });
  t.equal(admin('init', '--email', 'ann@example.com').status, 0);
  t.equal(admin('license', 'install', testLicense()).status, 0);
  t.equal(admin('users', 'add', '--email', 'bob@example.com').status, 0);
  const log = path.join(dir, 'data', 'state', 'state.log');
  const bytes = fs.readFileSync(log);
  bytes[12]! ^= 0x04; // inside the first record's body: intact records follow
  fs.writeFileSync(log, bytes);

  const serve = trawl(['serve', '--config', configFile]);
  t.equal(serve.status, 1, 'the daemon does not start');
  t.match(serve.stderr, /state\.log is damaged .* intact records after it.*state repair/, 'and says what to run');
  t.same(fs.readFileSync(log), bytes, 'the log is untouched');

  const repair = admin('state', 'repair');
  t.equal(repair.status, 0, repair.stderr);
  t.match(repair.stdout, /state\.log: kept \d+ intact records, dropped \d+ damaged bytes .* in .*state\.log\.corrupt-\d+/);
  const copies = fs.readdirSync(path.dirname(log)).filter((name) => name.startsWith('state.log.corrupt-'));
  t.same(
    copies.map((name) => fs.readFileSync(path.join(path.dirname(log), name))),
    [bytes],
    'a copy of the whole damaged file is kept',
  );
  const users = admin('users', 'list');
  t.equal(users.status, 0, 'the repaired log opens');
  t.match(users.stdout, /bob@example\.com/, 'the records after the damage survive');
});

/** A state log in which bob (a member with a key) was removed, then ann (the owner) made a key; its record of the removal found. */
function removedMemberScenario(t: Test) {
  const dir = tempDir(t, 'trawl-removed-');
  const configFile = path.join(dir, 'trawl.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), listen: { host: '127.0.0.1', port: 0 }, repos: [] }));
  const admin = (...args: string[]) => trawl(['admin', '--config', configFile, ...args], { env: LICENSE_ENV });
  const annKey = KEY.exec(admin('init', '--email', 'ann@example.com').stdout)![0];
  t.equal(admin('license', 'install', testLicense()).status, 0);
  const bobId = /^(\S+)\s+member\s+bob@example\.com/m.exec(admin('users', 'add', '--email', 'bob@example.com').stdout)![1]!;
  const bobKey = KEY.exec(admin('keys', 'create', '--name', 'bob', '--user', bobId).stdout)![0];
  t.equal(admin('users', 'remove', bobId).status, 0);
  const annId = /^(\S+)\s+owner/m.exec(admin('users', 'list').stdout)![1]!;
  t.equal(admin('keys', 'create', '--name', 'later', '--user', annId).status, 0, 'a record after the removal: the damage is no torn tail');
  const log = path.join(dir, 'data', 'state', 'state.log');
  const bytes = fs.readFileSync(log);
  return { configFile, admin, log, bytes, removal: bytes.indexOf('user.removed'), bobId, bobKey, annKey };
}

t.test('state repair fails closed: a dropped removal is named and refused, and ended again on request', async (t) => {
  const { configFile, admin, log, bytes, removal, bobId, bobKey, annKey } = removedMemberScenario(t);
  bytes[removal + 'user.removed'.length]! ^= 0x01; // the field after the type: the record fails its checksum, its type and id still legible
  fs.writeFileSync(log, bytes);

  const refused = admin('state', 'repair');
  t.equal(refused.status, 1, 'refused');
  t.match(
    refused.stdout,
    new RegExp(`dropped record 1: user\\.removed \\(ids ${bobId}\\): could have ended access`),
    'saying what was dropped: its type and id',
  );
  t.match(refused.stderr, /refused: 1 of the damaged records could have ended access.*nothing was written.*--end-credentials.*--accept-risk/);
  t.same(fs.readFileSync(log), bytes, 'nothing was written');
  t.same(
    fs.readdirSync(path.dirname(log)).filter((name) => name.includes('corrupt')),
    [],
    'not even the copy',
  );

  const ended = admin('state', 'repair', '--end-credentials');
  t.equal(ended.status, 0, ended.stderr);
  t.match(ended.stdout, /appended 1 records ending credentials/);
  t.notMatch(admin('users', 'list').stdout, /bob@example\.com/, 'the removal is made again');
  const daemon = await runDaemon(t, configFile, { env: LICENSE_ENV });
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(bobKey) })).status, 401, "the removed member's key does not come back");
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(annKey) })).status, 200, "the owner's key, not concerned, still works");
});

t.test('state repair: damage that names nothing ends every credential on request, or is kept as it is when the risk is accepted', async (t) => {
  for (const choice of ['--end-credentials', '--accept-risk']) {
    const { admin, log, bytes, removal, bobId } = removedMemberScenario(t);
    bytes.fill(0x78, removal, removal + 'user.removed'.length + 60); // the type and the id unreadable
    fs.writeFileSync(log, bytes);
    const refused = admin('state', 'repair');
    t.equal(refused.status, 1, 'refused');
    t.match(refused.stdout, /dropped record 1: (type unreadable|.* among unreadable bytes.*): could have ended access/);
    const repaired = admin('state', 'repair', choice);
    t.equal(repaired.status, 0, repaired.stderr);
    const keys = admin('keys', 'list', '--user', '*').stdout;
    if (choice === '--end-credentials') {
      t.match(repaired.stdout, /ended, for every user/);
      t.notMatch(keys, KEY_ID_LINE, "everyone's keys are ended: the dropped record could have been anyone's");
    } else {
      t.match(admin('users', 'list').stdout, new RegExp(bobId), 'with the risk accepted, what the intact records say stands: bob is back');
    }
  }
});

t.test('offline on a full disk: a change that cannot be saved fails with exit 1 and says why', { skip: NEEDS_ROOT_TO_MOUNT }, async (t) => {
  const disk = smallFileSystem(t);
  const configFile = path.join(disk.dir, 'trawl.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(disk.dir, 'data'), listen: { host: '127.0.0.1', port: 0 }, repos: [] }));
  const admin = (...args: string[]) => trawl(['admin', '--config', configFile, ...args], { env: LICENSE_ENV });
  t.equal(admin('init', '--email', 'ann@example.com').status, 0);
  const owner = /^(\S+)\s+owner/m.exec(admin('users', 'list').stdout)![1]!;
  disk.fill();
  let refused = null;
  for (let n = 0; n < 100 && !refused; n++) {
    const created = admin('keys', 'create', '--name', `key ${n}`, '--user', owner);
    if (created.status !== 0) refused = created;
  }
  t.equal(refused?.status, 1, 'a key that does not fit is refused');
  t.match(refused?.stderr, /^trawl admin: nothing was saved: the disk that holds the server's data directory is full \(ENOSPC\)$/m, 'saying why');
  t.notMatch(refused?.stderr, /\n\s+at /, 'without a stack trace');
  disk.free();
  t.equal(admin('keys', 'create', '--name', 'later', '--user', owner).status, 0, 'and made once there is room');
});

t.test('trawl admin init --password-stdin: the first owner signs in to the web app', async (t) => {
  const repo = fixtureRepository(t);
  let configFile = '';
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' } },
    {
      prepare: async (file) => {
        configFile = file;
        const short = trawl(['admin', '--config', file, 'init', '--email', 'ann@example.com', '--password-stdin'], { input: 'hunter2\n' });
        t.equal(short.status, 2, 'a short password is a usage error');
        t.match(short.stderr, /at least 10 characters/);
        t.notMatch(short.stderr, /hunter2/, 'and is not printed');
        const init = trawl(['admin', '--config', file, 'init', '--email', 'ann@example.com', '--password-stdin'], {
          input: 'correct horse battery\nignored second line\n',
        });
        t.equal(init.status, 0, init.stderr);
        t.match(init.stdout, KEY, 'the API key is printed as before');
      },
    },
  );
  t.ok(configFile);
  const signIn = (password: string) => daemon.post('/api/auth/sign_in', { email: 'ann@example.com', password });
  t.equal((await signIn('ignored second line')).status, 401, 'only the first line is the password');
  const signed = await signIn('correct horse battery');
  t.equal(signed.status, 200, 'the password read from stdin signs in');
  t.equal((await signed.json()).user.role, 'owner');
});

t.test('offline reads make no state directory, and warnings are lines for a person, not JSON', async (t) => {
  const dir = tempDir(t, 'trawl-fresh-');
  const configFile = path.join(dir, 'trawl.json');
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), repos: [] }));
  for (const action of [
    ['users', 'list'],
    ['keys', 'list'],
    ['license', 'show'],
  ]) {
    const listed = trawl(['admin', '--config', configFile, ...action]);
    t.equal(listed.status, 0, `${action.join(' ')} on a fresh instance`);
    t.match(listed.stdout, /has no users yet: `trawl admin init` makes the first owner/);
  }
  t.notOk(fs.existsSync(path.join(dir, 'data')), 'looking made nothing');

  const init = trawl(['admin', '--config', configFile, 'init', '--email', 'ann@example.com'], { env: LICENSE_ENV });
  t.equal(init.status, 0);
  t.notMatch(init.stderr, /\{"level"/, 'no JSON log line among the output');
  t.match(init.stderr, /^trawl admin: warning: licenses signed with a test key are trusted: for tests only \(variable: \w+\)$/m, 'a warning reads as one');
});
