import t from 'tap';
import { generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bearer } from '../helpers/auth.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { CookieClient, singleSignOnDaemon } from '../helpers/identity-provider.js';
import { expectError } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

const CALLBACK = '/api/auth/oidc/callback';
const ACCOUNTS = {
  dev: { email: 'dev@example.com', email_verified: true, name: 'Dev' },
  boss: { email: 'boss@corp.example', email_verified: true, name: 'Boss', groups: ['staff', 'trawl-owners'] },
  newcomer: { email: 'newcomer@corp.example', email_verified: true, name: 'New Comer', groups: ['staff'] },
  unverified: { email: 'dev@example.com', email_verified: false },
  outsider: { email: 'someone@elsewhere.example', email_verified: true },
  impostor: { email: 'DEV@example.com', email_verified: true, name: 'Not Dev' },
};

/**
 * Walks a single sign-on as `login` through the provider's pages (login,
 * then consent) and returns trawl's answer to the provider's redirect back.
 */
async function singleSignOn(client: CookieClient, daemon: Daemon, login: string, next = '/settings/api-keys'): Promise<Response> {
  let response = await client.get(`${daemon.url}/api/auth/oidc/start?next=${encodeURIComponent(next)}`);
  for (let step = 0; step < 20; step++) {
    const location = response.headers.get('location');
    if (location) {
      const target = new URL(location, response.url).href;
      if (target.startsWith(`${daemon.url}${CALLBACK}`)) return client.get(target);
      response = await client.get(target);
    } else {
      const page = await response.text();
      response = await client.submitForm(response.url, page, page.includes('name="login"') ? { login, password: 'any' } : {});
    }
  }
  throw new Error('the provider never sent the browser back');
}

const sessionCookie = (client: CookieClient, daemon: Daemon) => client.cookieHeader(new URL(daemon.url).origin);

t.test('single sign-on through a real OpenID provider: a member signs in, then removed, is out', async (t) => {
  const { daemon, owner, dev } = await singleSignOnDaemon(t, ACCOUNTS);
  const providers = await (await daemon.fetch('/api/auth/providers')).json();
  t.same(providers, { password: false, oidc: { name: 'Test IdP', start: '/api/auth/oidc/start' } }, 'no member has a password here');

  const client = new CookieClient();
  const start = await client.get(`${daemon.url}/api/auth/oidc/start?next=%2Fsettings`);
  t.equal(start.status, 302);
  const authorize = new URL(start.headers.get('location')!);
  t.equal(
    authorize.origin + authorize.pathname,
    (await (await fetch(`${authorize.origin}/.well-known/openid-configuration`)).json()).authorization_endpoint,
    "to the provider's authorization endpoint",
  );
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256', 'PKCE S256');
  t.match(authorize.searchParams.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
  t.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce'), 'a state and a nonce');
  t.equal(authorize.searchParams.get('redirect_uri'), `${daemon.url}${CALLBACK}`);
  t.match(start.headers.get('set-cookie'), /^trawl_sign_in_state=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/, 'the state is bound to the browser');

  const back = await singleSignOn(client, daemon, 'dev');
  t.equal(back.status, 302);
  t.equal(back.headers.get('location'), '/settings/api-keys', 'back where the person was going');
  const session = await (await fetch(`${daemon.url}/api/auth/session`, { headers: { Cookie: sessionCookie(client, daemon) } })).json();
  t.equal(session.user.id, dev.id, 'signed in as the member with that verified email');

  const created = await fetch(`${daemon.url}/api/admin/api_keys`, {
    method: 'POST',
    headers: { Cookie: sessionCookie(client, daemon), Origin: daemon.url, 'X-CSRF-Token': session.csrfToken, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'from sso' }),
  });
  const { key } = await created.json();
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(key) })).status, 200, 'a key made in that session works');

  t.equal((await daemon.fetch(`/api/ee/user?userId=${dev.id}`, { method: 'DELETE', headers: bearer(owner.key) })).status, 200);
  await expectError(
    t,
    await fetch(`${daemon.url}/api/auth/session`, { headers: { Cookie: sessionCookie(client, daemon) } }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'the session is gone on the next request',
  );
  await expectError(t, await daemon.fetch('/api/repos', { headers: bearer(key) }), 401, 'NOT_AUTHENTICATED', undefined, 'and the key');
  const again = await singleSignOn(new CookieClient(), daemon, 'dev');
  t.equal(again.headers.get('location'), '/sign-in?error=not_member', 'the provider still knows them; trawl no longer does');
});

t.test('the callback refuses what the browser did not start, replays, forged codes and open redirects', async (t) => {
  const { daemon } = await singleSignOnDaemon(t, ACCOUNTS);
  const victim = new CookieClient();
  const attacker = new CookieClient();

  // Login CSRF: the attacker's own callback URL, opened in the victim's browser (whose state cookie differs or is absent).
  const start = await attacker.get(`${daemon.url}/api/auth/oidc/start`);
  let response = start;
  let callback = '';
  for (let step = 0; step < 20 && !callback; step++) {
    const location = response.headers.get('location');
    if (location && new URL(location, response.url).href.startsWith(`${daemon.url}${CALLBACK}`)) callback = new URL(location, response.url).href;
    else if (location) response = await attacker.get(new URL(location, response.url).href);
    else {
      const page = await response.text();
      response = await attacker.submitForm(response.url, page, page.includes('name="login"') ? { login: 'dev', password: 'x' } : {});
    }
  }
  t.match(callback, /code=/, 'the attacker holds a code');
  const planted = await victim.get(callback);
  t.equal(planted.headers.get('location'), '/sign-in?error=flow', 'not started by this browser: refused');
  t.equal(sessionCookie(victim, daemon), '', 'and no session');

  const own = await attacker.get(callback);
  t.equal(own.headers.get('location'), '/', 'the browser that started it signs in');
  const replay = await attacker.get(callback);
  t.equal(replay.headers.get('location'), '/sign-in?error=flow', 'a callback is used once');

  const forgedState = new CookieClient();
  const started = await forgedState.get(`${daemon.url}/api/auth/oidc/start`);
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
  const forged = await forgedState.get(
    `${daemon.url}${CALLBACK}?code=forged-code&state=${state}&iss=${encodeURIComponent(new URL(started.headers.get('location')!).origin)}`,
  );
  t.equal(forged.headers.get('location'), '/sign-in?error=flow', 'a forged code is refused by the provider and so here');

  for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/ok\r\nLocation: https://evil.example']) {
    const client = new CookieClient();
    const back = await singleSignOn(client, daemon, 'dev', next);
    t.equal(back.headers.get('location'), '/', `next=${JSON.stringify(next)} goes home, not elsewhere`);
  }
});

t.test("the ID token's signature is checked: alg none, another key and a broken signature are refused", async (t) => {
  const { daemon, provider } = await singleSignOnDaemon(t, ACCOUNTS);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tamperings: Record<string, (idToken: string) => string> = {
    'alg none': (idToken) => `${encode({ alg: 'none', typ: 'JWT' })}.${idToken.split('.')[1]}.`,
    'signed with a key the provider did not publish': (idToken) => {
      const [header, payload] = idToken.split('.');
      const signed = `${header}.${payload}`;
      return `${signed}.${sign('sha256', Buffer.from(signed), privateKey).toString('base64url')}`;
    },
    'a broken signature': (idToken) => {
      const [header, payload, signature] = idToken.split('.') as [string, string, string];
      const middle = Math.floor(signature.length / 2);
      return `${header}.${payload}.${signature.slice(0, middle)}${signature[middle] === 'A' ? 'B' : 'A'}${signature.slice(middle + 1)}`;
    },
    'claims changed under the signature': (idToken) => {
      const [header, payload, signature] = idToken.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      return `${header}.${encode({ ...claims, email: 'owner@example.com' })}.${signature}`;
    },
  };
  for (const [what, tamper] of Object.entries(tamperings)) {
    provider.tamperIdToken = tamper;
    const client = new CookieClient();
    t.equal((await singleSignOn(client, daemon, 'dev')).headers.get('location'), '/sign-in?error=flow', `${what}: refused`);
    t.equal(sessionCookie(client, daemon), '', `${what}: no session`);
  }
  provider.tamperIdToken = null;
  t.equal((await singleSignOn(new CookieClient(), daemon, 'dev')).headers.get('location'), '/settings/api-keys', 'the untouched token signs in');
});

t.test("a member is bound to the provider's account at the first single sign-on; another account with their email is refused", async (t) => {
  const { daemon, dev } = await singleSignOnDaemon(t, ACCOUNTS);
  const devClient = new CookieClient();
  t.equal((await singleSignOn(devClient, daemon, 'dev')).status, 302);
  const session = await (await fetch(`${daemon.url}/api/auth/session`, { headers: { Cookie: sessionCookie(devClient, daemon) } })).json();
  t.equal(session.user.id, dev.id, 'the first sign-in binds dev@example.com to the account "dev"');

  const impostor = new CookieClient();
  t.equal(
    (await singleSignOn(impostor, daemon, 'impostor')).headers.get('location'),
    '/sign-in?error=identity',
    'another account vouched for with the same email (in other case) is refused',
  );
  t.equal(sessionCookie(impostor, daemon), '', 'and gets no session');
  t.equal((await singleSignOn(new CookieClient(), daemon, 'dev')).headers.get('location'), '/settings/api-keys', 'the bound account still signs in');
});

t.test('starting single sign-on keeps nothing: thousands of starts refuse no one, and a forged state cookie opens nothing', async (t) => {
  const { daemon } = await singleSignOnDaemon(t, ACCOUNTS);
  const starts: number[] = [];
  for (let batch = 0; batch < 15; batch++) {
    starts.push(
      ...(await Promise.all(
        Array.from({ length: 100 }, () => fetch(`${daemon.url}/api/auth/oidc/start`, { redirect: 'manual' }).then((response) => response.status)),
      )),
    );
  }
  t.same([...new Set(starts)], [302], '1,500 starts from one address, all answered with the redirect');
  t.equal((await singleSignOn(new CookieClient(), daemon, 'dev')).headers.get('location'), '/settings/api-keys', 'and a person still signs in');

  const client = new CookieClient();
  const started = await client.get(`${daemon.url}/api/auth/oidc/start`);
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
  const origin = new URL(daemon.url).origin;
  const sealed = client.cookieHeader(origin).split('=').slice(1).join('=');
  const altered = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
  client.setCookie(origin, 'trawl_sign_in_state', altered);
  t.equal(
    (await client.get(`${daemon.url}${CALLBACK}?code=x&state=${state}`)).headers.get('location'),
    '/sign-in?error=flow',
    'an altered state cookie is refused',
  );
  client.setCookie(origin, 'trawl_sign_in_state', state);
  t.equal(
    (await client.get(`${daemon.url}${CALLBACK}?code=x&state=${state}`)).headers.get('location'),
    '/sign-in?error=flow',
    'the bare state as the cookie is refused',
  );
});

t.test('who may sign in: verified emails, allowed domains, members made when allowed, roles from a claim', async (t) => {
  const { daemon, owner } = await singleSignOnDaemon(t, ACCOUNTS, {
    allowedEmailDomains: ['corp.example', 'example.com'],
    createMembers: true,
    roleClaim: 'groups',
    ownerValues: ['trawl-owners'],
  });
  t.equal((await singleSignOn(new CookieClient(), daemon, 'unverified')).headers.get('location'), '/sign-in?error=unverified_email');
  t.equal((await singleSignOn(new CookieClient(), daemon, 'outsider')).headers.get('location'), '/sign-in?error=domain');

  const boss = new CookieClient();
  t.equal((await singleSignOn(boss, daemon, 'boss')).status, 302);
  const bossSession = await (await fetch(`${daemon.url}/api/auth/session`, { headers: { Cookie: sessionCookie(boss, daemon) } })).json();
  t.equal(bossSession.user.role, 'owner', 'a new member made an owner by the claim');
  const newcomer = new CookieClient();
  await singleSignOn(newcomer, daemon, 'newcomer');
  const newcomerSession = await (await fetch(`${daemon.url}/api/auth/session`, { headers: { Cookie: sessionCookie(newcomer, daemon) } })).json();
  t.equal(newcomerSession.user.role, 'member');
  t.equal(newcomerSession.user.name, 'New Comer', 'named from the profile');

  const audit = await (await daemon.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner.key) })).json();
  const reasons = audit
    .filter((record: { action: string }) => record.action === 'auth.failed')
    .map((record: { metadata: { reason: string } }) => record.metadata.reason);
  t.same(reasons.sort(), ['domain', 'unverified_email'], 'refused sign-ins are audited with their reason');
  t.ok(audit.some((record: { action: string; metadata: { method?: string } }) => record.action === 'auth.signed_in' && record.metadata.method === 'oidc'));
});

t.test('an unreachable provider, a secret file others can read, no SSO configured', async (t) => {
  const repo = fixtureRepository(t);
  const plain = await startDaemon(t, { repos: [repo.config], index: { ctagsCommand: '' } });
  t.same(await (await plain.fetch('/api/auth/providers')).json(), { password: false, oidc: null }, 'no way to sign in: no member, no single sign-on');
  await expectError(t, await plain.fetch('/api/auth/oidc/start'), 404, 'NOT_FOUND', /not configured/);

  const unreachable = await startDaemon(
    t,
    { repos: [repo.config], index: { ctagsCommand: '' }, auth: { oidc: { issuer: 'http://127.0.0.1:9/', clientId: 'x', clientSecretFile: 'secret' } } },
    { prepare: async (configFile) => fs.writeFileSync(path.join(path.dirname(configFile), 'secret'), 'x', { mode: 0o600 }) },
  );
  const down = await unreachable.fetch('/api/auth/oidc/start', { redirect: 'manual' });
  t.equal(down.headers.get('location'), '/sign-in?error=provider', 'said plainly on the sign-in page');
  t.equal((await unreachable.fetch('/api/health')).status, 200, 'and the daemon serves on');

  const readable = startDaemon(
    t,
    { repos: [repo.config], auth: { oidc: { issuer: 'https://idp.example', clientId: 'x', clientSecretFile: 'secret' } } },
    { prepare: async (configFile) => fs.writeFileSync(path.join(path.dirname(configFile), 'secret'), 'x', { mode: 0o644 }) },
  );
  await t.rejects(readable, /must be readable by its owner only/, 'a secret file others can read stops the start');
  const insecure = startDaemon(t, { repos: [repo.config], auth: { oidc: { issuer: 'http://idp.example', clientId: 'x', clientSecretFile: 'secret' } } });
  await t.rejects(insecure, /auth\.oidc\.issuer: must be an https URL/, 'an http issuer off loopback is a config error');
});
