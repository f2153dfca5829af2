import t, { type Test } from 'tap';
import { MAX_SESSIONS_PER_USER, SESSION_SEEN_INTERVAL_MS } from '../../src/auth/model.js';
import { hashPassword, UNUSABLE_HASH, verifyPassword } from '../../src/auth/password.js';
import { AuthStore } from '../../src/auth/store.js';
import { TEST_LICENSE_KEYS, testLicense } from '../helpers/auth.js';
import { tempDir } from '../helpers/tmp.js';

const LIMITS = { idleMs: 3_600_000, maxAgeMs: 86_400_000 };
const CLIENT = { userAgent: 'Mozilla/5.0 (test)', address: '192.0.2.7' };
const PASSWORD = 'correct horse battery';

/** A store with a clock the test moves and one owner who has a password. */
async function openStore(t: Test, directory = tempDir(t, 'trawl-sessions-'), clock = { now: 1_800_000_000_000 }) {
  const { store } = await AuthStore.open({ directory, trustedLicenseKeys: TEST_LICENSE_KEYS, now: () => clock.now, sessionLimits: LIMITS });
  t.teardown(() => store.close());
  return { store, directory, clock };
}

async function withOwner(t: Test) {
  const opened = await openStore(t);
  const owner = await opened.store.addUser({ name: 'Ann', email: 'Ann@Example.com', role: 'owner' });
  await opened.store.setPassword(owner.id, PASSWORD);
  return { ...opened, owner };
}

t.test('passwords: scrypt, salted, checked in constant time', async (t) => {
  const first = await hashPassword(PASSWORD);
  const second = await hashPassword(PASSWORD);
  t.match(first, /^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
  t.not(first, second, 'a fresh salt each time');
  t.ok(await verifyPassword(PASSWORD, first));
  t.notOk(await verifyPassword('correct horse batterY', first), 'one character off');
  t.notOk(await verifyPassword(PASSWORD, UNUSABLE_HASH), 'the unusable hash matches nothing');
  t.notOk(await verifyPassword(PASSWORD, 'scrypt$30$8$1$AAAA$AAAA'), 'a cost past the bound is refused, not computed');
  t.notOk(await verifyPassword(PASSWORD, 'plain'), 'a malformed hash');
  t.notOk(await verifyPassword('x'.repeat(2000), first), 'an over-long password is not hashed');
});

t.test('signing in: the right password gives a session, anything else nothing', async (t) => {
  const { store, owner } = await withOwner(t);
  t.equal(await store.signIn('ann@example.com', 'wrong password!', CLIENT), null, 'wrong password');
  t.equal(await store.signIn('bob@example.com', PASSWORD, CLIENT), null, 'unknown email');
  const member = await store.addUser({ name: 'Nopw', email: 'nopw@example.com', role: 'member' }).catch(() => null);
  t.equal(member, null, 'one seat without a license');
  const started = await store.signIn('ANN@example.com', PASSWORD, CLIENT);
  t.ok(started, 'the email is compared without case');
  t.match(started!.secret, /^trawl_ss_[0-9a-f]{64}$/);
  t.equal(started!.session.userAgent, CLIENT.userAgent);
  const credential = store.authenticateSession(started!.secret);
  t.equal(credential?.kind, 'session');
  t.equal(credential?.user.id, owner.id);
  t.equal(store.authenticate(started!.secret), null, 'a session secret is not a bearer credential');
  t.ok(store.validCsrfToken(started!.secret, started!.csrfToken), 'its CSRF token');
  t.notOk(
    store.validCsrfToken(
      started!.secret,
      started!.csrfToken.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    ),
    'a CSRF token one digit off',
  );
  const other = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  t.notOk(store.validCsrfToken(started!.secret, other!.csrfToken), "another session's CSRF token");
  t.equal(store.authenticateSession(started!.secret.replace(/.$/, (c) => (c === '0' ? '1' : '0'))), null, 'a forged secret');
});

t.test('a session ends when idle, at its absolute limit, when ended, and with its user', async (t) => {
  const { store, clock, owner } = await withOwner(t);
  const idle = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  clock.now += LIMITS.idleMs - 1;
  t.ok(store.authenticateSession(idle!.secret), 'used one millisecond before the idle limit');
  clock.now += LIMITS.idleMs - 1;
  t.ok(store.authenticateSession(idle!.secret), 'each use restarts the idle clock');
  clock.now += LIMITS.idleMs;
  t.equal(store.authenticateSession(idle!.secret), null, 'unused for the idle limit: ended');

  const busy = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  const startedAt = clock.now;
  while (clock.now + LIMITS.idleMs / 2 < startedAt + LIMITS.maxAgeMs) {
    clock.now += LIMITS.idleMs / 2;
    t.ok(store.authenticateSession(busy!.secret), 'used every half hour');
    if (!store.authenticateSession(busy!.secret)) break;
  }
  clock.now = startedAt + LIMITS.maxAgeMs;
  t.equal(store.authenticateSession(busy!.secret), null, 'however used, it ends at the absolute limit');

  const ended = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  const credential = store.authenticateSession(ended!.secret)!;
  t.ok(await store.endSession(owner.id, ended!.session.id));
  t.equal(store.stillValid(credential), false, 'an open stream sees its session end');
  t.equal(store.authenticateSession(ended!.secret), null);
  t.notOk(await store.endSession('someone-else', ended!.session.id), "ending another's session finds nothing");
});

t.test('removing a user ends every session of theirs, in the same record', async (t) => {
  const { store } = await openStore(t);
  await store.installLicense(testLicense());
  await store.addUser({ name: 'Owner', email: 'owner@example.com', role: 'owner' });
  const member = await store.addUser({ name: 'Mia', email: 'mia@example.com', role: 'member' });
  await store.setPassword(member.id, PASSWORD);
  const started = await store.signIn('mia@example.com', PASSWORD, CLIENT);
  const credential = store.authenticateSession(started!.secret)!;
  await store.removeUser(member.id);
  t.equal(store.stillValid(credential), false);
  t.equal(store.authenticateSession(started!.secret), null);
  t.same(store.sessionsOf(member.id), []);
  t.equal(await store.signIn('mia@example.com', PASSWORD, CLIENT), null, 'and their password with them');
});

t.test('sessions, passwords and last use survive a restart and a compaction; expired ones do not', async (t) => {
  const directory = tempDir(t, 'trawl-sessions-');
  const clock = { now: 1_800_000_000_000 };
  const first = await openStore(t, directory, clock);
  const owner = await first.store.addUser({ name: 'Ann', email: 'ann@example.com', role: 'owner' });
  await first.store.setPassword(owner.id, PASSWORD);
  const kept = await first.store.signIn('ann@example.com', PASSWORD, CLIENT);
  const dropped = await first.store.signIn('ann@example.com', PASSWORD, CLIENT);
  clock.now += SESSION_SEEN_INTERVAL_MS;
  t.ok(first.store.authenticateSession(kept!.secret), 'used after the interval: its use is written');
  await new Promise((resolve) => setTimeout(resolve, 50));
  await first.store.close();

  // Past the idle limit of the session not used since sign-in, within the other's.
  clock.now += LIMITS.idleMs - SESSION_SEEN_INTERVAL_MS + 1;
  const second = await openStore(t, directory, clock);
  t.ok(second.store.authenticateSession(kept!.secret), 'the used session lives on: its last use was written');
  t.equal(second.store.authenticateSession(dropped!.secret), null, 'the unused one is idle past its limit');
  await second.store.compact();
  await second.store.close();

  const third = await openStore(t, directory, clock);
  t.same(
    third.store.sessionsOf(owner.id).map((session) => session.id),
    [kept!.session.id],
    'the compacted log keeps the live session only',
  );
  t.ok(await third.store.signIn('ann@example.com', PASSWORD, CLIENT), 'and the password');
});

t.test(`one more sign-in than ${MAX_SESSIONS_PER_USER} ends the least recently used session`, async (t) => {
  const { store, clock, owner } = await withOwner(t);
  const secrets: string[] = [];
  for (let i = 0; i < MAX_SESSIONS_PER_USER; i++) {
    secrets.push((await store.startSession(owner.id, CLIENT)).secret);
    clock.now += 1;
  }
  clock.now += SESSION_SEEN_INTERVAL_MS;
  t.ok(store.authenticateSession(secrets[0]!), 'the oldest is used again: written as seen');
  await new Promise((resolve) => setTimeout(resolve, 50));
  await store.startSession(owner.id, CLIENT);
  t.equal(store.sessionsOf(owner.id).length, MAX_SESSIONS_PER_USER);
  t.ok(store.authenticateSession(secrets[0]!), 'the oldest but recently used one stays');
  t.equal(store.authenticateSession(secrets[1]!), null, 'the least recently used one ended');
});

t.test('a password is set only within its bounds, and other sessions can be ended', async (t) => {
  const { store, owner } = await withOwner(t);
  await t.rejects(store.setPassword(owner.id, 'short'), { code: 'WEAK_PASSWORD' });
  await t.rejects(store.setPassword(owner.id, 'x'.repeat(1025)), { code: 'WEAK_PASSWORD' });
  const keep = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  const other = await store.signIn('ann@example.com', PASSWORD, CLIENT);
  t.ok(await store.checkPassword(owner.id, PASSWORD));
  const ended = await store.endOtherSessions(owner.id, keep!.session.id);
  t.same(
    ended.map((session) => session.id),
    [other!.session.id],
  );
  t.ok(store.authenticateSession(keep!.secret));
  t.equal(store.authenticateSession(other!.secret), null);
});

t.test('an email is one member whatever its case, as sign-in finds members by email', async (t) => {
  const { store } = await withOwner(t);
  await store.installLicense(testLicense());
  await t.rejects(store.addUser({ name: 'Twin', email: 'ann@EXAMPLE.com', role: 'member' }), { code: 'EMAIL_TAKEN' });
});
