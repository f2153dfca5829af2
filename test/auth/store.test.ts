import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { AuthError } from '../../src/auth/errors.js';
import { LicenseError } from '../../src/auth/license.js';
import { SCOPED_TOKEN_LIFETIME_MS } from '../../src/auth/model.js';
import { AuthStore } from '../../src/auth/store.js';
import { StateLogLockedError, STATE_LOG_FILE } from '../../src/auth/state-log.js';
import { TEST_LICENSE_KEYS, testLicense } from '../helpers/auth.js';
import { tempDir } from '../helpers/tmp.js';

/** A store on a fresh directory with a clock the test moves. */
async function openStore(t: Test, directory = tempDir(t, 'trawl-store-'), clock = { now: 1_800_000_000_000 }) {
  const { store } = await AuthStore.open({ directory, trustedLicenseKeys: TEST_LICENSE_KEYS, now: () => clock.now });
  t.teardown(() => store.close());
  return { store, directory, clock };
}

const secretOf = async (store: AuthStore, userId: string) => (await store.createApiKey(userId, 'k')).secret;

t.test('a scoped token works until exactly one hour after issuance', async (t) => {
  const { store, clock } = await openStore(t);
  const user = await store.addUser({ name: 'Ann', email: 'ann@example.com', role: 'owner' });
  const issuedAt = clock.now;
  const { token, secret } = await store.createToken(user.id, [1]);
  t.equal(token.createdAt, issuedAt);
  t.equal(token.expiresAt, issuedAt + SCOPED_TOKEN_LIFETIME_MS);
  clock.now = issuedAt + SCOPED_TOKEN_LIFETIME_MS - 1;
  const credential = store.authenticate(secret);
  t.ok(credential, 'valid one millisecond before the hour');
  clock.now = issuedAt + SCOPED_TOKEN_LIFETIME_MS;
  t.equal(store.authenticate(secret), null, 'expired at the hour');
  t.equal(store.stillValid(credential!), false, 'an open stream sees it expire');
  t.equal(store.authenticate(`trawl_st_${'f'.repeat(64)}`), null, 'an unknown secret');
  t.equal(store.authenticate('trawl_st_short'), null, 'a malformed secret');
});

t.test('the last owner stays, even when two removals race', async (t) => {
  const { store } = await openStore(t);
  await store.installLicense(testLicense());
  const first = await store.addUser({ name: 'A', email: 'a@example.com', role: 'owner' });
  const second = await store.addUser({ name: 'B', email: 'b@example.com', role: 'owner' });
  const outcomes = await Promise.allSettled([store.removeUser(first.id), store.removeUser(second.id)]);
  t.same(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
  const rejected = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  t.ok(rejected.reason instanceof AuthError && rejected.reason.code === 'LAST_OWNER');
  t.equal(store.state.owners().length, 1);
});

t.test('seats: one without a license, the license’s with one', async (t) => {
  const { store } = await openStore(t);
  await store.addUser({ name: 'A', email: 'a@example.com', role: 'owner' });
  await t.rejects(store.addUser({ name: 'B', email: 'b@example.com', role: 'member' }), {
    name: 'AuthError',
    code: 'NO_FREE_SEAT',
    message: /1 without a license/,
  });
  await store.installLicense(testLicense({ seats: 2 }));
  await store.addUser({ name: 'B', email: 'b@example.com', role: 'member' });
  await t.rejects(store.addUser({ name: 'C', email: 'c@example.com', role: 'member' }), { message: /2 in the license/ });
  await t.rejects(store.installLicense('trawl_license_e30.AAAA'), LicenseError);
});

t.test('removing a user revokes their keys and tokens; listeners hear every change', async (t) => {
  const { store } = await openStore(t);
  await store.installLicense(testLicense());
  const owner = await store.addUser({ name: 'O', email: 'o@example.com', role: 'owner' });
  const member = await store.addUser({ name: 'M', email: 'm@example.com', role: 'member' });
  const key = await secretOf(store, member.id);
  const { secret: token } = await store.createToken(member.id, [1]);
  let changes = 0;
  const unsubscribe = store.onChange(() => changes++);
  const held = store.authenticate(token)!;
  await store.removeUser(member.id);
  t.equal(changes, 1);
  t.equal(store.authenticate(key), null);
  t.equal(store.authenticate(token), null);
  t.equal(store.stillValid(held), false);
  t.ok(store.authenticate(await secretOf(store, owner.id)), "the owner's keys are untouched");
  t.equal(changes, 2, 'the key creation was heard');
  unsubscribe();
  await store.setAnonymousAccess(true);
  t.equal(changes, 2, 'unsubscribed');
});

t.test('state survives a reopen and a compaction; a second opener is refused', async (t) => {
  const directory = tempDir(t, 'trawl-store-');
  const clock = { now: 1_800_000_000_000 };
  const first = await AuthStore.open({ directory, trustedLicenseKeys: TEST_LICENSE_KEYS, now: () => clock.now });
  await t.rejects(AuthStore.open({ directory, trustedLicenseKeys: TEST_LICENSE_KEYS }), StateLogLockedError);
  const { store } = first;
  await store.installLicense(testLicense());
  const owner = await store.addUser({ name: 'O', email: 'o@example.com', role: 'owner' });
  const key = await secretOf(store, owner.id);
  const expired = (await store.createToken(owner.id, [1])).token.id;
  clock.now += SCOPED_TOKEN_LIFETIME_MS;
  const live = await store.createToken(owner.id, [2]);
  for (let i = 0; i < 200; i++) await store.setAnonymousAccess(i % 2 === 0);
  const before = fs.statSync(path.join(directory, STATE_LOG_FILE)).size;
  await store.compact();
  const after = fs.statSync(path.join(directory, STATE_LOG_FILE)).size;
  t.ok(after < before / 4, `the compacted log is smaller (${before} → ${after} bytes)`);
  await store.close();

  const { store: reopened } = await openStore(t, directory, clock);
  t.ok(reopened.authenticate(key), 'the API key');
  t.ok(reopened.authenticate(live.secret), 'the live token');
  t.notOk(reopened.state.tokens.has(expired), 'the expired token was dropped');
  t.equal(reopened.anonymousAccess(true), false, 'the last setting');
  t.equal(reopened.activeLicense()?.licensee, 'Test Corp');
});
