import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AuditList, UserList, UserSchema } from '../../src/api/auth-schemas.js';
import { bearer, LICENSE_ENV, seedUsers, testLicense, type SeededUser } from '../helpers/auth.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { commitStreamFodder, pausedStreamSearch } from '../helpers/stream.js';
import { fixtureRepository } from './fixture.js';

const REPO = 'example.com/acme/widgets';

async function usersDaemon(t: Test, options: { license?: string; bigRepository?: boolean; anonymousAccess?: boolean } = {}) {
  const repo = fixtureRepository(t, REPO);
  if (options.bigRepository) commitStreamFodder(repo.root);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [repo.config], auth: { anonymousAccess: options.anonymousAccess ?? false }, index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        users = await seedUsers(
          configFile,
          [
            { email: 'owner@example.com', role: 'owner' },
            { email: 'member@example.com', role: 'member' },
            { email: 'leaver@example.com', role: 'member' },
          ],
          options.license,
        );
      },
    },
  );
  return { daemon, owner: users['owner@example.com']!, member: users['member@example.com']!, leaver: users['leaver@example.com']! };
}

const removeUser = (daemon: Daemon, secret: string | null, userId?: string) =>
  daemon.fetch(`/api/ee/user${userId === undefined ? '' : `?userId=${encodeURIComponent(userId)}`}`, {
    method: 'DELETE',
    headers: secret ? bearer(secret) : {},
  });

t.test('DELETE /api/ee/user: the checks in order, then the effects', async (t) => {
  const { daemon, owner, member, leaver } = await usersDaemon(t);
  const token = await (
    await daemon.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(leaver.key), body: JSON.stringify({ repos: [REPO] }) })
  ).json();
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(token.token) })).status, 200, "the leaver's token works before");

  await expectError(t, await removeUser(daemon, null), 400, 'MISSING_REQUIRED_QUERY_PARAMETER', /userId/);
  await expectError(t, await removeUser(daemon, null, leaver.id), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await removeUser(daemon, member.key, leaver.id), 403, 'INSUFFICIENT_PERMISSIONS', /only owners/);
  await expectError(t, await removeUser(daemon, token.token, leaver.id), 403, 'INSUFFICIENT_PERMISSIONS');
  await expectError(t, await removeUser(daemon, owner.key, 'not-a-member'), 404, 'NOT_FOUND');
  await expectError(t, await removeUser(daemon, owner.key, owner.id), 403, 'LAST_OWNER_CANNOT_BE_REMOVED');

  const removed = await removeUser(daemon, owner.key, leaver.id);
  t.equal(removed.status, 200);
  const body = await removed.json();
  t.equal(body.success, true);
  t.match(body.message, /leaver@example\.com/);
  await expectError(t, await daemon.fetch('/api/repos', { headers: bearer(leaver.key) }), 401, 'NOT_AUTHENTICATED', /invalid, expired or revoked/);
  await expectError(t, await daemon.fetch('/api/repos', { headers: bearer(token.token) }), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await removeUser(daemon, owner.key, leaver.id), 404, 'NOT_FOUND', /not a member/);
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(member.key) })).status, 200, 'others are untouched');
});

t.test('GET /api/ee/users and /api/ee/user; POST /api/ee/users within the seats', async (t) => {
  const { daemon, owner, member } = await usersDaemon(t, { license: testLicense({ seats: 4 }) });
  const list = await (await daemon.fetch('/api/ee/users', { headers: bearer(owner.key) })).json();
  assertSchema(t, UserList, list, 'user list');
  t.same(
    list.map((user: { email: string }) => user.email),
    ['owner@example.com', 'member@example.com', 'leaver@example.com'],
  );
  t.ok(list[0].lastActivityAt, 'the owner was active (this request)');
  const one = await (await daemon.fetch(`/api/ee/user?userId=${member.id}`, { headers: bearer(owner.key) })).json();
  assertSchema(t, UserSchema, one, 'user');
  t.equal(one.email, 'member@example.com');
  await expectError(t, await daemon.fetch('/api/ee/user?userId=nobody', { headers: bearer(owner.key) }), 404, 'NOT_FOUND');
  await expectError(t, await daemon.fetch('/api/ee/users', { headers: bearer(member.key) }), 403, 'INSUFFICIENT_PERMISSIONS');
  const add = (email: string) =>
    daemon.fetch('/api/ee/users', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ name: 'New', email, role: 'member' }) });
  t.equal((await add('new@example.com')).status, 201, 'the fourth seat');
  await expectError(t, await add('fifth@example.com'), 403, 'INSUFFICIENT_PERMISSIONS', /every seat is taken \(4/);
  await expectError(t, await add('not an email'), 400, 'INVALID_REQUEST_BODY', /email/);
});

t.test("a removed user's open stream ends and their MCP session closes", async (t) => {
  // With anonymous access on, the removed user's next MCP request reaches the session layer (as anonymous) and finds no session.
  const { daemon, owner, leaver } = await usersDaemon(t, { bigRepository: true, anonymousAccess: true });
  const client = new Client({ name: 'trawl-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${leaver.key}` } },
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.match(JSON.stringify(await client.callTool({ name: 'list_repos', arguments: {} })), /widgets/, 'the session works');

  // A stream the client stops reading after its first bytes: the rest waits in the daemon.
  const stream = await pausedStreamSearch(daemon.url, bearer(leaver.key), { query: 'needle', matches: 60000 });
  t.equal((await removeUser(daemon, owner.key, leaver.id)).status, 200);
  const { text, payloads } = await stream.rest();
  t.equal(payloads.at(-1), '[DONE]', 'the stream ended');
  const last = JSON.parse(payloads.at(-2)!);
  t.equal(last.type, 'error', 'with an error, not the final event');
  t.equal(last.error.errorCode, 'NOT_AUTHENTICATED');
  t.ok(text.length < 4 << 20, `what was not sent was dropped (${text.length} bytes arrived)`);

  await t.rejects(client.callTool({ name: 'list_repos', arguments: {} }), /Session not found/, 'the MCP session is gone');
});

t.test('GET /api/ee/audit: who did what, newest first, paged', async (t) => {
  const { daemon, owner, member } = await usersDaemon(t);
  await daemon.fetch('/api/search', { method: 'POST', headers: bearer(member.key), body: JSON.stringify({ query: 'parse_expression', matches: 5 }) });
  await daemon.fetch(`/api/source?repo=${REPO}&path=README.md`, { headers: bearer(member.key) });
  await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${'2'.repeat(64)}`) });
  const token = await (
    await daemon.fetch('/api/ee/scoped_access_token', { method: 'POST', headers: bearer(member.key), body: JSON.stringify({ repos: [REPO] }) })
  ).json();
  await daemon.fetch(`/api/ee/scoped_access_token/${token.id}`, { method: 'DELETE', headers: bearer(member.key) });

  // Audit records are written in the background: poll until the last one is on disk.
  let records: { action: string; actorId: string; actorType: string; targetId: string; metadata: Record<string, unknown> }[] = [];
  for (let tries = 0; tries < 100 && records[0]?.action !== 'token.revoked'; tries++) {
    records = await (await daemon.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner.key) })).json();
  }
  assertSchema(t, AuditList, records, 'audit records');
  t.same(
    records.slice(0, 5).map((record) => record.action),
    ['token.revoked', 'token.created', 'auth.failed', 'file.read', 'search'],
  );
  t.equal(records[0]!.actorId, member.id);
  t.equal(records[0]!.targetId, token.id);
  t.equal(records[4]!.metadata.query, 'parse_expression');
  t.same(
    [records[2]!.actorId, records[2]!.actorType, records[2]!.targetId],
    ['', 'anonymous', ''],
    'a failed authentication has no actor and no target: strings, never null',
  );
  t.notMatch(JSON.stringify(records), /trawl_(ak|st)_/, 'no secret is ever audited');

  const paged = await daemon.fetch('/api/ee/audit?perPage=2&page=2', { headers: bearer(owner.key) });
  t.equal(paged.headers.get('x-total-count'), String(records.length));
  t.match(paged.headers.get('link'), /rel="next"/);
  t.same(
    (await paged.json()).map((record: { action: string }) => record.action),
    ['auth.failed', 'file.read'],
  );
  t.same(await (await daemon.fetch(`/api/ee/audit?since=${new Date(Date.now() + 60_000).toISOString()}`, { headers: bearer(owner.key) })).json(), []);
  await expectError(t, await daemon.fetch('/api/ee/audit?since=yesterday', { headers: bearer(owner.key) }), 400, 'INVALID_QUERY_PARAMS', /since/);
  await expectError(t, await daemon.fetch('/api/ee/audit', { headers: bearer(member.key) }), 403, 'INSUFFICIENT_PERMISSIONS');
});

t.test('EE endpoints need an active license', async (t) => {
  const { daemon, owner } = await usersDaemon(t, { license: testLicense({ expiresAt: new Date(Date.now() - 1000).toISOString() }) });
  await expectError(t, await daemon.fetch('/api/ee/users', { headers: bearer(owner.key) }), 403, 'INSUFFICIENT_PERMISSIONS', /no active license/);
  await expectError(
    t,
    await daemon.fetch('/api/ee/scoped_access_tokens', { headers: bearer(owner.key) }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /no active license/,
  );
  await expectError(t, await removeUser(daemon, owner.key, 'anyone'), 403, 'INSUFFICIENT_PERMISSIONS', /no active license/);
  const status = await (await daemon.fetch('/api/admin/license', { headers: bearer(owner.key) })).json();
  t.match(status, { installed: true, active: false, licensee: 'Test Corp', seatsUsed: 3 });

  const install = (key: string) => daemon.fetch('/api/admin/license', { method: 'POST', headers: bearer(owner.key), body: JSON.stringify({ key }) });
  await expectError(t, await install('trawl_license_e30.AAAA'), 400, 'INVALID_REQUEST_BODY', /signature does not verify/);
  const forged = testLicense().replace(/\.[^.]+$/, `.${Buffer.alloc(64).toString('base64url')}`);
  await expectError(t, await install(forged), 400, 'INVALID_REQUEST_BODY', /signature/);
  t.equal((await install(testLicense({ seats: 5 }))).status, 200);
  t.equal((await daemon.fetch('/api/ee/users', { headers: bearer(owner.key) })).status, 200, 'active again');
});

t.test('POST /api/ee/user/role: owners change roles, never leaving no owner', async (t) => {
  const { daemon, owner, member } = await usersDaemon(t);
  const setRole = (secret: string, body: unknown) => daemon.fetch('/api/ee/user/role', { method: 'POST', headers: bearer(secret), body: JSON.stringify(body) });
  await expectError(
    t,
    await setRole(member.key, { userId: member.id, role: 'owner' }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /only owners/,
    'a member cannot promote themselves',
  );
  await expectError(t, await setRole(owner.key, { userId: owner.id, role: 'member' }), 403, 'LAST_OWNER_CANNOT_BE_REMOVED', /last owner/);
  await expectError(t, await setRole(owner.key, { userId: 'nobody', role: 'owner' }), 404, 'NOT_FOUND');
  await expectError(t, await setRole(owner.key, { userId: member.id, role: 'admin' }), 400, 'INVALID_REQUEST_BODY', /role/);
  const promoted = await setRole(owner.key, { userId: member.id, role: 'OWNER' });
  t.equal(promoted.status, 200);
  assertSchema(t, UserSchema, await promoted.json(), 'the changed member');
  t.equal((await daemon.fetch('/api/ee/users', { headers: bearer(member.key) })).status, 200, 'the new owner can call owner endpoints at once');
  t.equal((await setRole(member.key, { userId: owner.id, role: 'member' })).status, 200, 'with two owners, one may step down');
  await expectError(
    t,
    await daemon.fetch('/api/ee/users', { headers: bearer(owner.key) }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    undefined,
    'the former owner is a member now',
  );
});
