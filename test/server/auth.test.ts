import t, { type Test } from 'tap';
import { CreatedToken, TokenList } from '../../src/api/auth-schemas.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

const PUBLIC = 'example.com/acme/widgets';
const PRIVATE = 'example.com/acme/secret';

/** A daemon with a public and a private repository, an owner and two members. */
async function authDaemon(t: Test, anonymousAccess: boolean) {
  const open = fixtureRepository(t, PUBLIC);
  const hidden = { ...fixtureRepository(t, PRIVATE).config, public: false };
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [open.config, hidden], auth: { anonymousAccess }, index: { ctagsCommand: '' } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) => {
        users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner' },
          { email: 'member@example.com', role: 'member' },
          { email: 'granted@example.com', role: 'member' },
        ]);
      },
    },
  );
  return { daemon, open, owner: users['owner@example.com']!, member: users['member@example.com']!, granted: users['granted@example.com']! };
}

const repoNames = async (response: Response) => ((await response.json()) as { repoName: string }[]).map((repo) => repo.repoName);

function as(daemon: Daemon, secret: string) {
  return {
    get: (path: string) => daemon.fetch(path, { headers: bearer(secret) }),
    post: (path: string, body: unknown) => daemon.fetch(path, { method: 'POST', headers: bearer(secret), body: JSON.stringify(body) }),
    delete: (path: string) => daemon.fetch(path, { method: 'DELETE', headers: bearer(secret) }),
  };
}

t.test('credentials and visibility, anonymous access off', async (t) => {
  const { daemon, open, owner, member, granted } = await authDaemon(t, false);
  const sourceOf = (repo: string) => `/api/source?repo=${encodeURIComponent(repo)}&path=README.md`;
  await as(daemon, owner.key).post('/api/admin/grants', { userId: granted.id, repo: PRIVATE });

  t.test('public endpoints need nothing; read endpoints need a credential', async (t) => {
    for (const path of ['/api/health', '/api/version', '/api/openapi.json']) t.equal((await daemon.fetch(path)).status, 200, path);
    await expectError(t, await daemon.fetch('/api/repos'), 401, 'NOT_AUTHENTICATED', /no credential was sent and anonymous access is off/);
    await expectError(t, await daemon.post('/api/search', { query: 'x', matches: 1 }), 401, 'NOT_AUTHENTICATED');
    await expectError(
      t,
      await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${'0'.repeat(64)}`) }),
      401,
      'NOT_AUTHENTICATED',
      /invalid, expired or revoked/,
    );
    await expectError(t, await daemon.fetch('/api/repos', { headers: { Authorization: 'Bearer nonsense' } }), 401, 'NOT_AUTHENTICATED');
    await expectError(t, await daemon.fetch('/api/repos', { headers: { Authorization: `Basic ${member.key}` } }), 401, 'NOT_AUTHENTICATED', /no credential/);
  });

  t.test('/metrics names only the repositories the caller can see', async (t) => {
    await expectError(t, await daemon.fetch('/metrics'), 401, 'NOT_AUTHENTICATED');
    const lagOf = async (secret: string) =>
      [...(await (await as(daemon, secret).get('/metrics')).text()).matchAll(/^trawl_index_lag_seconds\{repo="([^"]+)"\}/gm)].map((match) => match[1]).sort();
    t.same(await lagOf(owner.key), [PRIVATE, PUBLIC], 'an owner sees every repository');
    t.same(await lagOf(member.key), [PUBLIC], 'a member only what it may see');
    t.notMatch(await (await as(daemon, member.key).get('/metrics')).text(), /secret/, 'the private name appears nowhere');
  });

  t.test('an API key works as a bearer token (any case of the scheme) and in X-Service-Api-Key', async (t) => {
    t.equal((await daemon.fetch('/api/repos', { headers: { Authorization: `bearer ${member.key}` } })).status, 200);
    t.equal((await daemon.fetch('/api/repos', { headers: { Authorization: `BEARER ${member.key}` } })).status, 200);
    t.equal((await daemon.fetch('/api/repos', { headers: { 'X-Service-Api-Key': member.key } })).status, 200);
  });

  t.test('members see public and granted repositories, owners everything; the rest does not exist', async (t) => {
    t.same(await repoNames(await as(daemon, member.key).get('/api/repos')), [PUBLIC]);
    t.same(await repoNames(await as(daemon, granted.key).get('/api/repos')), [PRIVATE, PUBLIC]);
    t.same(await repoNames(await as(daemon, owner.key).get('/api/repos')), [PRIVATE, PUBLIC]);
    const hiddenSearch = await (await as(daemon, member.key).post('/api/search', { query: 'parse_expression', matches: 100 })).json();
    t.same([...new Set(hiddenSearch.files.map((file: { repository: string }) => file.repository))], [PUBLIC], 'search skips invisible repositories');
    const ownerSearch = await (await as(daemon, owner.key).post('/api/search', { query: 'parse_expression', matches: 100 })).json();
    t.same(new Set(ownerSearch.files.map((file: { repository: string }) => file.repository)), new Set([PUBLIC, PRIVATE]));
    const invisible = await expectError(t, await as(daemon, member.key).get(sourceOf(PRIVATE)), 404, 'NOT_FOUND');
    const missing = await expectError(t, await as(daemon, member.key).get(sourceOf('example.com/acme/nothing')), 404, 'NOT_FOUND');
    t.equal(invisible.message.replace(PRIVATE, '*'), missing.message.replace('example.com/acme/nothing', '*'), 'invisible and missing look the same');
    const q = new URLSearchParams({ repo: PRIVATE, ref: 'HEAD' }).toString();
    await expectError(t, await as(daemon, member.key).get(`/api/commits?${q}`), 404, 'NOT_FOUND');
    await expectError(t, await as(daemon, member.key).get(`/api/commit?${q}`), 404, 'NOT_FOUND');
    await expectError(t, await as(daemon, member.key).get(`/api/diff?repo=${PRIVATE}&base=${open.first}&head=${open.second}`), 404, 'NOT_FOUND');
    await expectError(t, await as(daemon, member.key).post('/api/tree', { repoName: PRIVATE, revisionName: 'HEAD', paths: [] }), 404, 'NOT_FOUND');
    const references = await (await as(daemon, member.key).post('/api/find_references', { symbolName: 'parse_expression' })).json();
    t.ok(references.files.length > 0, 'find_references finds the public repository');
    t.notOk(
      references.files.some((file: { repository: string }) => file.repository === PRIVATE),
      'find_references skips invisible repositories',
    );
    t.equal((await as(daemon, granted.key).get(sourceOf(PRIVATE))).status, 200, 'a grant makes it readable');
  });

  t.test('scoped tokens: created with an API key, for one hour, reaching their scope only', async (t) => {
    const created = await as(daemon, owner.key).post('/api/ee/scoped_access_token', { repos: [PRIVATE, PRIVATE] });
    t.equal(created.status, 201);
    const token = await created.json();
    assertSchema(t, CreatedToken, token, 'created token');
    t.match(token.token, /^trawl_st_[0-9a-f]{64}$/);
    t.equal(Date.parse(token.expiresAt) - Date.parse(token.createdAt), 3_600_000, 'exactly one hour');
    t.match(token.createdAt, /\.\d{3}Z$/, 'millisecond precision');
    t.same(
      token.repos.map((repo: { name: string }) => repo.name),
      [PRIVATE],
      'duplicates collapsed',
    );
    t.same(await repoNames(await as(daemon, token.token).get('/api/repos')), [PRIVATE], 'the token reaches its scope only');
    await expectError(t, await as(daemon, token.token).get(sourceOf(PUBLIC)), 404, 'NOT_FOUND');
    await expectError(
      t,
      await daemon.fetch('/api/repos', { headers: { 'X-Service-Api-Key': token.token } }),
      401,
      'NOT_AUTHENTICATED',
      /X-Service-Api-Key takes API keys only/,
    );
    await expectError(
      t,
      await as(daemon, token.token).post('/api/ee/scoped_access_token', { repos: [PRIVATE] }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      /scoped access token cannot/,
    );
    await expectError(t, await as(daemon, token.token).delete(`/api/ee/scoped_access_token/${token.id}`), 403, 'INSUFFICIENT_PERMISSIONS');
    await expectError(t, await as(daemon, token.token).get('/api/ee/users'), 403, 'INSUFFICIENT_PERMISSIONS');
    const listed = await (await as(daemon, owner.key).get('/api/ee/scoped_access_tokens')).json();
    assertSchema(t, TokenList, listed, 'token list');
    t.same(
      listed.map((item: { id: string }) => item.id),
      [token.id],
    );
    t.notOk('token' in listed[0], 'never the secret again');
    t.same(await (await as(daemon, member.key).get('/api/ee/scoped_access_tokens')).json(), [], "others' tokens are not listed");
  });

  t.test('token requests are checked: scope, body, credential', async (t) => {
    await expectError(t, await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: [PRIVATE] }), 400, 'INVALID_REPOSITORY_SCOPE', /secret/);
    await expectError(
      t,
      await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: ['example.com/acme/nothing'] }),
      400,
      'INVALID_REPOSITORY_SCOPE',
    );
    await expectError(t, await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: [PUBLIC], extra: 1 }), 400, 'INVALID_REQUEST_BODY');
    await expectError(t, await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: [] }), 400, 'INVALID_REQUEST_BODY');
    await expectError(
      t,
      await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: Array.from({ length: 101 }, () => PUBLIC) }),
      400,
      'INVALID_REQUEST_BODY',
    );
    await expectError(t, await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: 'x' }), 400, 'INVALID_REQUEST_BODY');
    await expectError(t, await daemon.post('/api/ee/scoped_access_token', { repos: [PUBLIC] }), 401, 'NOT_AUTHENTICATED', /never allows anonymous/);
    t.equal((await as(daemon, member.key).get('/api/ee/scoped_access_tokens')).status, 200, 'the daemon keeps serving');
  });

  t.test("a token's scope shrinks when its creator loses a grant", async (t) => {
    const token = await (await as(daemon, granted.key).post('/api/ee/scoped_access_token', { repos: [PRIVATE, PUBLIC] })).json();
    t.same(await repoNames(await as(daemon, token.token).get('/api/repos')), [PRIVATE, PUBLIC]);
    t.equal((await as(daemon, owner.key).delete(`/api/admin/grants?${new URLSearchParams({ userId: granted.id, repo: PRIVATE })}`)).status, 200);
    t.same(await repoNames(await as(daemon, token.token).get('/api/repos')), [PUBLIC], 'the creator cannot see it now, so neither can the token');
    await as(daemon, owner.key).post('/api/admin/grants', { userId: granted.id, repo: PRIVATE });
    t.same(await repoNames(await as(daemon, token.token).get('/api/repos')), [PRIVATE, PUBLIC], 'bound to the ids at creation, back with the grant');
  });

  t.test('a revoked token fails on the next request; only its creator can revoke it', async (t) => {
    const token = await (await as(daemon, member.key).post('/api/ee/scoped_access_token', { repos: [PUBLIC] })).json();
    t.equal((await as(daemon, token.token).get('/api/repos')).status, 200);
    await expectError(t, await as(daemon, owner.key).delete(`/api/ee/scoped_access_token/${token.id}`), 404, 'SCOPED_ACCESS_TOKEN_NOT_FOUND');
    await expectError(t, await as(daemon, member.key).delete('/api/ee/scoped_access_token/no-such-token'), 404, 'SCOPED_ACCESS_TOKEN_NOT_FOUND');
    const revoked = await as(daemon, member.key).delete(`/api/ee/scoped_access_token/${token.id}`);
    t.equal(revoked.status, 204);
    await expectError(t, await as(daemon, token.token).get('/api/repos'), 401, 'NOT_AUTHENTICATED');
    const listed = await (await as(daemon, member.key).get('/api/ee/scoped_access_tokens')).json();
    t.ok(listed.find((item: { id: string }) => item.id === token.id).revokedAt, 'listed with revokedAt');
  });

  t.test('API keys: users make their own, owners anyone’s; a deleted key stops at once', async (t) => {
    const created = await (await as(daemon, member.key).post('/api/admin/api_keys', { name: 'ci' })).json();
    t.match(created.key, /^trawl_ak_[0-9a-f]{64}$/);
    t.equal(created.userId, member.id);
    t.equal((await as(daemon, created.key).get('/api/repos')).status, 200);
    await expectError(t, await as(daemon, member.key).post('/api/admin/api_keys', { name: 'x', userId: owner.id }), 403, 'INSUFFICIENT_PERMISSIONS');
    await expectError(t, await as(daemon, member.key).get('/api/admin/api_keys?userId=*'), 403, 'INSUFFICIENT_PERMISSIONS');
    const mine = await (await as(daemon, member.key).get('/api/admin/api_keys')).json();
    t.same(mine.map((key: { name: string }) => key.name).sort(), ['ci', 'test']);
    t.notOk(
      mine.some((key: object) => 'key' in key),
      'secrets are never listed',
    );
    t.equal((await as(daemon, owner.key).get('/api/admin/api_keys?userId=*')).status, 200);
    await expectError(t, await as(daemon, granted.key).delete(`/api/admin/api_keys/${created.id}`), 404, 'NOT_FOUND');
    t.equal((await as(daemon, member.key).delete(`/api/admin/api_keys/${created.id}`)).status, 204);
    await expectError(t, await as(daemon, created.key).get('/api/repos'), 401, 'NOT_AUTHENTICATED');
  });

  t.test('settings and grants are for owners', async (t) => {
    await expectError(t, await as(daemon, member.key).post('/api/admin/settings', { anonymousAccess: true }), 403, 'INSUFFICIENT_PERMISSIONS', /only owners/);
    await expectError(t, await as(daemon, member.key).post('/api/admin/grants', { userId: member.id, repo: PRIVATE }), 403, 'INSUFFICIENT_PERMISSIONS');
    await expectError(t, await as(daemon, owner.key).post('/api/admin/grants', { userId: 'nobody', repo: PRIVATE }), 404, 'NOT_FOUND');
    await expectError(t, await as(daemon, owner.key).post('/api/admin/grants', { userId: member.id, repo: 'example.com/acme/nothing' }), 404, 'NOT_FOUND');
    t.same(await (await as(daemon, owner.key).get('/api/admin/settings')).json(), { anonymousAccess: false });
    t.equal((await as(daemon, owner.key).post('/api/admin/settings', { anonymousAccess: true })).status, 200);
    t.same(await repoNames(await daemon.fetch('/api/repos')), [PUBLIC], 'anonymous callers now read public repositories');
    await as(daemon, owner.key).post('/api/admin/settings', { anonymousAccess: false });
    await expectError(t, await daemon.fetch('/api/repos'), 401, 'NOT_AUTHENTICATED');
  });
});

t.test('anonymous access on: no or a bad credential reads public repositories; token and user endpoints still refuse', async (t) => {
  const { daemon, owner } = await authDaemon(t, true);
  t.same(await repoNames(await daemon.fetch('/api/repos')), [PUBLIC], 'anonymous');
  t.same(
    await repoNames(await daemon.fetch('/api/repos', { headers: bearer(`trawl_ak_${'1'.repeat(64)}`) })),
    [PUBLIC],
    'an invalid credential counts as none',
  );
  t.same(await repoNames(await daemon.fetch('/api/repos', { headers: bearer(owner.key) })), [PRIVATE, PUBLIC], 'a valid one counts');
  await expectError(t, await daemon.fetch('/api/ee/scoped_access_tokens'), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await daemon.fetch('/api/ee/users'), 401, 'NOT_AUTHENTICATED');
  await expectError(t, await daemon.fetch('/api/ee/audit'), 401, 'NOT_AUTHENTICATED');
  const token = await (await as(daemon, owner.key).post('/api/ee/scoped_access_token', { repos: [PRIVATE] })).json();
  await expectError(t, await daemon.fetch('/api/repos', { headers: { 'X-Service-Api-Key': token.token } }), 401, 'NOT_AUTHENTICATED', /API keys only/);
});
