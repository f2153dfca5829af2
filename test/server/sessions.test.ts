import t, { type Test } from 'tap';
import { SessionList, SessionState } from '../../src/api/auth-schemas.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { runDaemon, startDaemon, type Daemon } from '../helpers/daemon.js';
import { postFrom } from '../helpers/from-address.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { commitStreamFodder, pausedStreamSearch } from '../helpers/stream.js';
import { fixtureRepository } from './fixture.js';

const REPO = 'example.com/acme/widgets';
const PASSWORD = 'correct horse battery';

async function sessionsDaemon(t: Test, config: Record<string, unknown> = {}, options: { bigRepository?: boolean } = {}) {
  const repo = fixtureRepository(t, REPO);
  if (options.bigRepository) commitStreamFodder(repo.root);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' }, ...config },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner', password: PASSWORD },
          { email: 'member@example.com', role: 'member', password: PASSWORD },
          { email: 'keyonly@example.com', role: 'member' },
        ]);
      },
    },
  );
  return { daemon, owner: users['owner@example.com']!, member: users['member@example.com']! };
}

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: { sessionId: string; csrfToken: string };
}

async function signIn(daemon: Daemon, email: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<Signed> {
  const response = await daemon.fetch('/api/auth/sign_in', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const body = await response.json();
  return { cookie: setCookie.split(';')[0]!, csrf: body.csrfToken, setCookie, body };
}

/** Headers of a page of this daemon's writing with the session: the cookie, the Origin, the CSRF token. */
const pageHeaders = (daemon: Daemon, signed: Signed) => ({
  Cookie: signed.cookie,
  Origin: daemon.url,
  'X-CSRF-Token': signed.csrf,
  'Content-Type': 'application/json',
});

t.test('signing in sets an HttpOnly, SameSite=Lax cookie that reads and manages, never creates tokens', async (t) => {
  const { daemon } = await sessionsDaemon(t);
  const signed = await signIn(daemon, 'member@example.com');
  t.match(signed.setCookie, /^trawl_session=trawl_ss_[0-9a-f]{64}; Path=\/; Max-Age=2592000; HttpOnly; SameSite=Lax$/, 'the cookie and its attributes');
  assertSchema(t, SessionState, signed.body, 'sign-in answer');

  const search = await daemon.fetch('/api/search', {
    method: 'POST',
    headers: pageHeaders(daemon, signed),
    body: JSON.stringify({ query: 'parse_expression', matches: 5 }),
  });
  t.equal(search.status, 200, 'a search with the session');
  const session = await daemon.fetch('/api/auth/session', { headers: { Cookie: signed.cookie } });
  t.equal((await session.json()).csrfToken, signed.csrf, 'GET /api/auth/session answers the same CSRF token');
  const created = await daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: pageHeaders(daemon, signed), body: JSON.stringify({ name: 'laptop' }) });
  t.equal(created.status, 201, 'an API key created from the session');
  const { key } = await created.json();
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(key) })).status, 200, 'and it works');
  const listed = await (await daemon.fetch('/api/admin/api_keys', { headers: { Cookie: signed.cookie } })).json();
  t.ok(listed.find((entry: { name: string; lastUsedAt?: string }) => entry.name === 'laptop')?.lastUsedAt, 'the list shows its last use');

  await expectError(
    t,
    await daemon.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: pageHeaders(daemon, signed), body: JSON.stringify({ repos: [REPO] }) }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /needs an API key/,
  );
  await expectError(
    t,
    await daemon.fetch('/api/repos', { headers: { Authorization: `Bearer ${signed.cookie.split('=')[1]}` } }),
    401,
    'NOT_AUTHENTICATED',
    /invalid/,
  );
  await expectError(t, await daemon.fetch('/api/ee/users', { headers: { Cookie: signed.cookie } }), 403, 'INSUFFICIENT_PERMISSIONS', /owner/);
});

t.test('cookie-authenticated writes need this server’s Origin and the session’s CSRF token', async (t) => {
  const { daemon } = await sessionsDaemon(t);
  const signed = await signIn(daemon, 'member@example.com');
  const other = await signIn(daemon, 'owner@example.com');
  const create = (headers: Record<string, string>) =>
    daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ name: 'x' }) });
  const { Origin, 'X-CSRF-Token': csrf } = pageHeaders(daemon, signed);
  await expectError(t, await create({ Cookie: signed.cookie, 'X-CSRF-Token': csrf }), 403, 'INVALID_CSRF_TOKEN', /Origin/);
  await expectError(t, await create({ Cookie: signed.cookie, Origin }), 403, 'INVALID_CSRF_TOKEN', /X-CSRF-Token/);
  await expectError(t, await create({ Cookie: signed.cookie, Origin, 'X-CSRF-Token': other.csrf }), 403, 'INVALID_CSRF_TOKEN', /X-CSRF-Token/);
  await expectError(
    t,
    await create({ Cookie: signed.cookie, Origin: 'https://evil.example', 'X-CSRF-Token': csrf }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /cross-site/,
  );
  await expectError(t, await create({ Cookie: signed.cookie, Origin: 'null', 'X-CSRF-Token': csrf }), 403, 'INSUFFICIENT_PERMISSIONS', /cross-site/);
  t.equal((await create({ Cookie: signed.cookie, Origin, 'X-CSRF-Token': csrf })).status, 201, 'with both, the write is done');
  const keys = await (await daemon.fetch('/api/admin/api_keys', { headers: { Cookie: signed.cookie } })).json();
  t.equal(keys.length, 2, 'only the one accepted write made a key (plus the seeded one)');
});

t.test('forged, replayed and planted cookies get nothing', async (t) => {
  const { daemon } = await sessionsDaemon(t);
  const forged = `trawl_session=trawl_ss_${'a'.repeat(64)}`;
  await expectError(t, await daemon.fetch('/api/repos', { headers: { Cookie: forged } }), 401, 'NOT_AUTHENTICATED', /invalid, expired or revoked/);
  await expectError(t, await daemon.fetch('/api/repos', { headers: { Cookie: 'trawl_session=../../etc/passwd' } }), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await daemon.fetch('/api/repos', { headers: { Cookie: `a=${'x'.repeat(20_000)}` } }), 401, 'NOT_AUTHENTICATED', /no credential/);

  // Session fixation: a session the browser had before signing in is ended, and the sign-in never adopts a cookie.
  const planted = await signIn(daemon, 'member@example.com');
  const victim = await signIn(daemon, 'owner@example.com', PASSWORD, { Cookie: planted.cookie });
  t.not(victim.cookie, planted.cookie, 'a new secret at every sign-in');
  await expectError(
    t,
    await daemon.fetch('/api/repos', { headers: { Cookie: planted.cookie } }),
    401,
    'NOT_AUTHENTICATED',
    /invalid/,
    'the planted session ended',
  );

  // Replay after signing out.
  const signOut = await daemon.fetch('/api/auth/sign_out', { method: 'POST', headers: pageHeaders(daemon, victim) });
  t.equal(signOut.status, 200);
  t.match(signOut.headers.get('set-cookie'), /^trawl_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/, 'the cookie is cleared');
  await expectError(
    t,
    await daemon.fetch('/api/repos', { headers: { Cookie: victim.cookie } }),
    401,
    'NOT_AUTHENTICATED',
    /invalid/,
    'a replayed cookie after sign-out',
  );
});

t.test('sign-in: wrong passwords are refused alike, audited, rate limited, never echoed', async (t) => {
  const { daemon, owner } = await sessionsDaemon(t);
  const attempt = (email: string, password: string) => daemon.post('/api/auth/sign_in', { email, password });
  const wrong = await expectError(t, await attempt('member@example.com', 'not the password'), 401, 'NOT_AUTHENTICATED');
  const unknown = await expectError(t, await attempt('nobody@example.com', 'not the password'), 401, 'NOT_AUTHENTICATED');
  t.equal(wrong.message, unknown.message, 'an unknown email is told nothing more');
  await expectError(
    t,
    await attempt('keyonly@example.com', 'not the password'),
    401,
    'NOT_AUTHENTICATED',
    /wrong/,
    'a member without a password cannot sign in',
  );
  const invalid = await expectError(
    t,
    await daemon.post('/api/auth/sign_in', { email: 'member@example.com', password: 12345 }),
    400,
    'INVALID_REQUEST_BODY',
    /password/,
  );
  t.notMatch(invalid.message, /12345/, 'the password is not echoed');
  const short = await expectError(
    t,
    await daemon.fetch('/api/auth/password', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ password: 'hunter2' }) }),
    400,
    'INVALID_REQUEST_BODY',
    /a secret, not shown/,
  );
  t.notMatch(short.message, /hunter2/);

  const audit = await (await daemon.fetch('/api/ee/audit', { headers: bearer(owner.key) })).json();
  const failed = audit.filter(
    (record: { action: string; metadata: { email?: string } }) => record.action === 'auth.failed' && record.metadata.email !== undefined,
  );
  t.ok(failed.length >= 3, 'failed sign-ins are audited');
  t.notOk(JSON.stringify(audit).includes('not the password'), 'no password in the audit log');

  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await attempt('member@example.com', `guess number ${i}`)).status);
  t.ok(statuses.includes(429), `guessing is rate limited (${statuses.join(' ')})`);
  await expectError(t, await attempt('member@example.com', PASSWORD), 429, 'RATE_LIMITED', undefined, 'even the right password waits once the budget is spent');
});

t.test('strangers guessing a password never keep its owner out: only failures count, and only against failing addresses', async (t) => {
  const { daemon } = await sessionsDaemon(t);
  const signInUrl = `${daemon.url}/api/auth/sign_in`;
  const from = (address: string, password: string) => postFrom(address, signInUrl, { email: 'Member@example.com', password });
  // Until the budget runs out, however long the checks take (it refills one failure per 6 s).
  const attacker: number[] = [];
  for (let i = 0; i < 40 && !attacker.includes(429); i++) attacker.push((await from('127.0.0.2', `guess ${i}`)).status);
  t.same(attacker.slice(0, 10), Array(10).fill(401), 'ten guesses are checked');
  t.equal(attacker.at(-1), 429, 'then the guessing address is refused');
  t.equal((await from('127.0.0.2', PASSWORD)).status, 429, 'even with the right password: that address is failing for the email');

  t.equal((await from('127.0.0.3', PASSWORD)).status, 200, 'the owner, from elsewhere, signs in while the email is under attack');
  for (let i = 0; i < 5; i++) t.equal((await from('127.0.0.1', PASSWORD)).status, 200, `right passwords spend nothing (${i + 1})`);

  // Guessing spread over many addresses: once the email's budget is spent, an address that failed for it is refused at once.
  t.equal((await from('127.0.0.4', 'one more guess')).status, 401, "a new address's first guess is checked");
  t.equal((await from('127.0.0.4', 'and another')).status, 429, "but the email's budget is spent: a failing address gets no second");
  t.equal((await from('127.0.0.4', PASSWORD)).status, 429, 'not even with the right password');
  t.equal((await from('127.0.0.5', PASSWORD)).status, 200, 'an address that has not failed is let through');

  const signed = await signIn(daemon, 'member@example.com');
  const changed = await daemon.fetch('/api/auth/password', {
    method: 'POST',
    headers: pageHeaders(daemon, signed),
    body: JSON.stringify({ currentPassword: PASSWORD, password: `${PASSWORD} again` }),
  });
  t.equal(changed.status, 200, 'changing the password is not held by the attack either');
});

t.test('removing a user, or ending a session, locks the browser out on its next request; sessions survive a restart', async (t) => {
  const { daemon, owner, member } = await sessionsDaemon(t);
  const mine = await signIn(daemon, 'member@example.com');
  const laptop = await signIn(daemon, 'member@example.com', PASSWORD, { 'User-Agent': 'laptop browser' });
  const listed = await (await daemon.fetch('/api/auth/sessions', { headers: { Cookie: mine.cookie } })).json();
  assertSchema(t, SessionList, listed, 'the sessions list');
  t.same(listed.map((session: { current: boolean }) => session.current).sort(), [false, true], 'both listed, this one marked');
  t.ok(listed.some((session: { userAgent: string }) => session.userAgent === 'laptop browser'));

  const ended = await daemon.fetch(`/api/auth/sessions/${laptop.body.sessionId}`, { method: 'DELETE', headers: pageHeaders(daemon, mine) });
  t.equal(ended.status, 204);
  await expectError(
    t,
    await daemon.fetch('/api/repos', { headers: { Cookie: laptop.cookie } }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'the ended session is out',
  );

  await daemon.stop();
  const restarted = await runDaemon(t, daemon.configFile, { env: LICENSE_ENV });
  t.equal((await restarted.fetch('/api/repos', { headers: { Cookie: mine.cookie } })).status, 200, 'the session lives through a restart');

  const removed = await restarted.fetch(`/api/ee/user?userId=${member.id}`, { method: 'DELETE', headers: bearer(owner.key) });
  t.equal(removed.status, 200);
  await expectError(
    t,
    await restarted.fetch('/api/repos', { headers: { Cookie: mine.cookie } }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'the removed member is out on the very next request',
  );
  await expectError(
    t,
    await restarted.post('/api/auth/sign_in', { email: 'member@example.com', password: PASSWORD }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'and cannot sign in again',
  );
});

t.test('changing the password needs the current one and ends the other sessions', async (t) => {
  const { daemon } = await sessionsDaemon(t);
  const mine = await signIn(daemon, 'member@example.com');
  const other = await signIn(daemon, 'member@example.com');
  const change = (body: unknown) => daemon.fetch('/api/auth/password', { method: 'POST', headers: pageHeaders(daemon, mine), body: JSON.stringify(body) });
  await expectError(t, await change({ password: 'a brand new password' }), 400, 'INVALID_REQUEST_BODY', /currentPassword/);
  await expectError(
    t,
    await change({ password: 'a brand new password', currentPassword: 'wrong wrong wrong' }),
    400,
    'INVALID_REQUEST_BODY',
    /currentPassword/,
  );
  t.equal((await change({ password: 'a brand new password', currentPassword: PASSWORD })).status, 200);
  t.equal((await daemon.fetch('/api/repos', { headers: { Cookie: mine.cookie } })).status, 200, 'this session stays');
  await expectError(t, await daemon.fetch('/api/repos', { headers: { Cookie: other.cookie } }), 401, 'NOT_AUTHENTICATED', undefined, 'the other one ended');
  await expectError(
    t,
    await daemon.post('/api/auth/sign_in', { email: 'member@example.com', password: PASSWORD }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'the old password is refused',
  );
  t.ok(await signIn(daemon, 'member@example.com', 'a brand new password'), 'the new one signs in');
});

t.test('behind https the cookie is Secure and __Host- prefixed', async (t) => {
  const { daemon } = await sessionsDaemon(t, { publicUrl: 'https://code.example.com' });
  const signed = await signIn(daemon, 'member@example.com', PASSWORD, { Host: 'code.example.com' });
  t.match(signed.setCookie, /^__Host-trawl_session=trawl_ss_[0-9a-f]{64}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
  t.equal((await daemon.fetch('/api/repos', { headers: { Cookie: signed.cookie.replace('__Host-', '') } })).status, 401, 'the unprefixed name is not read');
  t.equal((await daemon.fetch('/api/repos', { headers: { Cookie: signed.cookie } })).status, 200);
});

t.test('signing out ends an open stream of that session', async (t) => {
  const { daemon } = await sessionsDaemon(t, {}, { bigRepository: true });
  const signed = await signIn(daemon, 'member@example.com');
  const stream = await pausedStreamSearch(daemon.url, pageHeaders(daemon, signed), { query: 'needle', matches: 60000 });
  t.equal(stream.response.statusCode, 200, 'the stream began with the session');
  t.equal((await daemon.fetch('/api/auth/sign_out', { method: 'POST', headers: pageHeaders(daemon, signed) })).status, 200);
  const { payloads } = await stream.rest();
  t.equal(payloads.at(-1), '[DONE]');
  t.equal(JSON.parse(payloads.at(-2)!).error?.errorCode, 'NOT_AUTHENTICATED', 'it ended with an error, not the final event');
});
