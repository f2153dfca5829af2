import t from 'tap';
import { AuthState } from '../../src/auth/auth-state.js';
import { SCOPED_TOKEN_LIFETIME_MS, authRecord, type AuthRecord } from '../../src/auth/model.js';
import type { StateRecord } from '../../src/auth/state-record.js';

const T0 = 1_800_000_000_000;
const publicRepo = { id: 1, public: true };
const privateRepo = { id: 2, public: false };
const otherPrivate = { id: 3, public: false };

function stateOf(records: [AuthRecord, number][]): AuthState {
  const state = new AuthState();
  for (const [record, at] of records) state.apply(authRecord(record, at));
  return state;
}

const base: [AuthRecord, number][] = [
  [{ type: 'user.added', userId: 'u-owner', name: 'Olga', email: 'olga@example.com', role: 'owner' }, T0],
  [{ type: 'user.added', userId: 'u-member', name: 'Max', email: 'max@example.com', role: 'member' }, T0],
  [{ type: 'apikey.created', keyId: 'k1', userId: 'u-member', name: 'ci', digest: 'aa'.repeat(32) }, T0],
  [{ type: 'grant.added', userId: 'u-member', repoId: 2 }, T0],
  [{ type: 'token.created', tokenId: 't1', userId: 'u-member', digest: 'bb'.repeat(32), repoIds: [1, 2, 3] }, T0 + 1000],
];

t.test('credentials: keys of live users; tokens until revoked or exactly one hour old', async (t) => {
  const state = stateOf(base);
  t.match(state.credential('apiKey', 'aa'.repeat(32), T0), { kind: 'apiKey', user: { id: 'u-member' } });
  t.equal(state.credential('apiKey', 'cc'.repeat(32), T0), null, 'an unknown digest');
  t.equal(state.credential('scopedToken', 'aa'.repeat(32), T0), null, 'an API key is not a scoped token');
  const issued = T0 + 1000;
  t.ok(state.credential('scopedToken', 'bb'.repeat(32), issued + SCOPED_TOKEN_LIFETIME_MS - 1), 'valid one millisecond before the hour');
  t.equal(state.credential('scopedToken', 'bb'.repeat(32), issued + SCOPED_TOKEN_LIFETIME_MS), null, 'expired at exactly one hour');
  state.apply(authRecord({ type: 'token.revoked', tokenId: 't1' }, issued + 10));
  t.equal(state.credential('scopedToken', 'bb'.repeat(32), issued + 20), null, 'revoked');
});

t.test('visibility: anonymous, members, owners, grants, and scoped tokens intersected with their creator now', async (t) => {
  const state = stateOf(base);
  const member = state.credential('apiKey', 'aa'.repeat(32), T0)!;
  const token = state.credential('scopedToken', 'bb'.repeat(32), T0 + 2000)!;
  const owner = { kind: 'apiKey' as const, key: { id: 'k0', userId: 'u-owner', name: '', digest: '', createdAt: T0 }, user: state.users.get('u-owner')! };
  t.same(
    [publicRepo, privateRepo, otherPrivate].map((repo) => state.canSee(null, repo)),
    [true, false, false],
    'anonymous: public only',
  );
  t.same(
    [publicRepo, privateRepo, otherPrivate].map((repo) => state.canSee(member, repo)),
    [true, true, false],
    'member: public and granted',
  );
  t.same(
    [publicRepo, privateRepo, otherPrivate].map((repo) => state.canSee(owner, repo)),
    [true, true, true],
    'owner: everything',
  );
  t.same(
    [publicRepo, privateRepo, otherPrivate].map((repo) => state.canSee(token, repo)),
    [true, true, false],
    'token: its repos ∩ what its creator sees',
  );
  state.apply(authRecord({ type: 'grant.removed', userId: 'u-member', repoId: 2 }, T0 + 3000));
  t.same(
    [publicRepo, privateRepo].map((repo) => state.canSee(token, repo)),
    [true, false],
    'the scope shrinks when the creator loses a grant',
  );
});

t.test('removing a user ends their keys and tokens in the same record', async (t) => {
  const state = stateOf(base);
  state.apply(authRecord({ type: 'user.removed', userId: 'u-member' }, T0 + 5000));
  t.equal(state.credential('apiKey', 'aa'.repeat(32), T0 + 5001), null, 'their API key');
  t.equal(state.credential('scopedToken', 'bb'.repeat(32), T0 + 5001), null, 'their token');
  t.notOk(state.users.has('u-member'));
  t.equal(state.tokens.get('t1')!.revokedAt, T0 + 5000, 'the token is marked revoked');
});

t.test('unknown record types are skipped; a snapshot rebuilds the same state', async (t) => {
  const state = stateOf(base);
  state.apply({ v: 7, type: 'feature.from.the.future', at: T0, whatever: true } as StateRecord);
  state.apply(authRecord({ type: 'settings.anonymousAccess', enabled: true }, T0));
  state.apply(authRecord({ type: 'license.installed', key: 'trawl_license_x.y' }, T0));
  const now = T0 + 10_000;
  const rebuilt = new AuthState();
  for (const record of state.snapshot(now)) rebuilt.apply(record);
  t.same([...rebuilt.users.values()], [...state.users.values()]);
  t.same([...rebuilt.apiKeys.values()], [...state.apiKeys.values()]);
  t.same([...rebuilt.tokens.values()], [...state.tokens.values()]);
  t.same([...rebuilt.grants], [...state.grants]);
  t.equal(rebuilt.anonymousAccess, true);
  t.equal(rebuilt.licenseKey, 'trawl_license_x.y');
  t.equal(new AuthState().anonymousAccess, undefined, 'until an administrator sets it, the config file decides');
  const later = state.snapshot(T0 + 1000 + SCOPED_TOKEN_LIFETIME_MS);
  t.notOk(
    later.some((record) => record.type === 'token.created'),
    'expired tokens are left out of a snapshot',
  );
});

t.test('clear forgets every record applied: the state of an empty log', async (t) => {
  const state = stateOf([
    ...base,
    [{ type: 'user.identity', userId: 'u-member', issuer: 'https://id.example.com', subject: 's-1' }, T0],
    [{ type: 'user.password', userId: 'u-owner', hash: 'scrypt$x' }, T0],
    [{ type: 'session.created', sessionId: 's1', userId: 'u-owner', digest: 'cc'.repeat(32), userAgent: 'test', address: '127.0.0.1' }, T0],
    [{ type: 'oauth.client.registered', clientId: 'c1', name: 'tool', redirectUris: ['http://127.0.0.1/cb'] }, T0],
    [
      {
        type: 'oauth.grant.issued',
        grantId: 'g1',
        userId: 'u-member',
        clientId: 'c1',
        accessDigest: 'dd'.repeat(32),
        refreshDigest: 'ee'.repeat(32),
        scope: 'search',
        familyId: 'f1',
      },
      T0,
    ],
    [{ type: 'settings.anonymousAccess', enabled: false }, T0],
    [{ type: 'license.installed', key: 'trawl_license_x.y' }, T0],
  ]);
  const empty = Object.entries(state).filter(([, value]) => value instanceof Map && value.size === 0);
  t.same(empty, [], 'every map of the state holds something before');
  state.clear();
  t.same(state, new AuthState(), 'and after clear, the state is a new one');
  state.apply(authRecord(base[0]![0], T0));
  t.equal(state.users.size, 1, 'which applies records again');
});
