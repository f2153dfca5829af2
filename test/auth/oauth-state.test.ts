import t, { type Test } from 'tap';
import { AuthState } from '../../src/auth/auth-state.js';
import { authRecord, MAX_OAUTH_CLIENTS, OAUTH_ACCESS_LIFETIME_MS, OAUTH_REFRESH_LIFETIME_MS, type AuthRecord } from '../../src/auth/model.js';
import { newSecret } from '../../src/auth/secrets.js';
import { AuthStore } from '../../src/auth/store.js';
import { TEST_LICENSE_KEYS, testLicense } from '../helpers/auth.js';
import { tempDir } from '../helpers/tmp.js';

async function openStore(t: Test, directory = tempDir(t, 'trawl-oauth-'), clock = { now: Date.now() }) {
  const { store } = await AuthStore.open({ directory, trustedLicenseKeys: TEST_LICENSE_KEYS, now: () => clock.now });
  t.teardown(() => store.close());
  return { store, directory, clock };
}

async function grantFor(store: AuthStore, userId: string, clientId: string) {
  const access = newSecret('oauthAccess');
  const refresh = newSecret('oauthRefresh');
  const grant = await store.oauth.save(userId, clientId, 'mcp', access, refresh, 'authorization-1');
  return { grant, access, refresh };
}

t.test('OAuth grants: access for an hour, refresh for 30 days, both ended by revocation, removal or a lapsed license', async (t) => {
  const { store, clock } = await openStore(t);
  await store.installLicense(testLicense());
  const owner = await store.addUser({ name: 'Ann', email: 'ann@example.com', role: 'owner' });
  const member = await store.addUser({ name: 'Mia', email: 'mia@example.com', role: 'member' });
  const client = { id: 'trawl_oc_agent' };
  const { grant, access, refresh } = await grantFor(store, member.id, client.id);
  const credential = store.authenticate(access);
  t.equal(credential?.kind, 'oauth');
  t.equal(credential?.user.id, member.id);
  t.equal(store.authenticate(refresh), null, 'a refresh token is no bearer credential');
  t.equal(store.oauth.ofRefreshToken(refresh)?.id, grant.id);
  t.equal(store.oauth.ofRefreshToken(access), null, 'an access token is no refresh token');

  clock.now += OAUTH_ACCESS_LIFETIME_MS;
  t.equal(store.authenticate(access), null, 'the access token ends at the hour');
  t.ok(store.oauth.ofRefreshToken(refresh), 'the refresh token lives on');
  clock.now += OAUTH_REFRESH_LIFETIME_MS;
  t.equal(store.oauth.ofRefreshToken(refresh), null, 'and ends at 30 days');

  const second = await grantFor(store, member.id, client.id);
  t.ok(await store.oauth.revokeToken(second.refresh), 'revoked by its refresh token');
  t.equal(store.authenticate(second.access), null, 'the pair ends together');
  t.notOk(await store.oauth.revokeToken(second.refresh), 'a second revocation finds nothing');

  const third = await grantFor(store, member.id, client.id);
  const live = store.authenticate(third.access)!;
  await store.removeUser(member.id);
  t.equal(store.stillValid(live), false, 'removing the person ends it');
  t.equal(store.oauth.ofRefreshToken(third.refresh), null);

  const ownerGrant = await grantFor(store, owner.id, client.id);
  t.ok(store.authenticate(ownerGrant.access));
  await store.installLicense(testLicense({ expiresAt: new Date(clock.now - 1000).toISOString() }));
  t.equal(store.authenticate(ownerGrant.access), null, 'without an active license OAuth tokens open nothing');
});

t.test('OAuth grants survive a restart and a compaction; expired grants do not', async (t) => {
  const directory = tempDir(t, 'trawl-oauth-');
  const clock = { now: Date.now() };
  const first = await openStore(t, directory, clock);
  await first.store.installLicense(testLicense({ expiresAt: new Date(clock.now + 400 * 86_400_000).toISOString() }));
  const owner = await first.store.addUser({ name: 'Ann', email: 'ann@example.com', role: 'owner' });
  const client = { id: 'trawl_oc_agent' };
  const old = await grantFor(first.store, owner.id, client.id);
  clock.now += OAUTH_REFRESH_LIFETIME_MS - 1000;
  const fresh = await grantFor(first.store, owner.id, client.id);
  clock.now += 2000;
  await first.store.compact();
  await first.store.close();

  const second = await openStore(t, directory, clock);
  t.same([...second.store.state.oauthGrants.keys()], [fresh.grant.id], 'only the grant that can still be refreshed is kept');
  t.ok(second.store.authenticate(fresh.access));
  t.equal(second.store.oauth.ofRefreshToken(old.refresh), null);
});

t.test(`clients an earlier trawl registered in the log replay: past ${MAX_OAUTH_CLIENTS} the oldest without a live grant makes room`, async (t) => {
  const state = new AuthState();
  let at = Date.now();
  const apply = (record: AuthRecord) => state.apply(authRecord(record, at++));
  apply({ type: 'user.added', userId: 'u1', name: 'Ann', email: 'ann@example.com', role: 'owner' });
  for (let i = 0; i < MAX_OAUTH_CLIENTS; i++)
    apply({ type: 'oauth.client.registered', clientId: `c${i}`, name: `c${i}`, redirectUris: ['http://127.0.0.1:1/cb'] });
  apply({ type: 'oauth.grant.issued', grantId: 'g1', userId: 'u1', clientId: 'c0', accessDigest: 'a'.repeat(64), refreshDigest: 'b'.repeat(64), scope: 'mcp' });
  apply({ type: 'oauth.client.registered', clientId: 'one more', name: 'one more', redirectUris: ['http://127.0.0.1:1/cb'] });
  t.equal(state.oauthClients.size, MAX_OAUTH_CLIENTS);
  t.ok(state.oauthClients.has('c0'), 'the oldest, in use, stays');
  t.notOk(state.oauthClients.has('c1'), 'the oldest unused one was dropped');
});
