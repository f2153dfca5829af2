import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { postFrom } from '../helpers/from-address.js';
import { bearer, LICENSE_ENV, teamDaemon } from '../helpers/auth.js';
import { runDaemon, type Daemon } from '../helpers/daemon.js';
import { expectError } from '../helpers/schema.js';

const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:9/callback';

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** A signed-in browser's headers for writes (cookie, Origin, CSRF token). */
async function browserOf(daemon: Daemon) {
  const response = await daemon.post('/api/auth/sign_in', { email: 'dev@example.com', password: PASSWORD });
  const { csrfToken } = await response.json();
  return { Cookie: response.headers.get('set-cookie')!.split(';')[0]!, Origin: daemon.url, 'X-CSRF-Token': csrfToken, 'Content-Type': 'application/json' };
}

async function register(daemon: Daemon, body: unknown = { redirect_uris: [REDIRECT], client_name: 'agent' }) {
  return daemon.fetch('/api/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

t.test('OAuth for MCP: discovery, and every hostile step refused', async (t) => {
  const { daemon, owner } = await teamDaemon(t, { password: PASSWORD });
  const unauthorized = await daemon.fetch('/api/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  t.equal(unauthorized.status, 401);
  t.equal(
    unauthorized.headers.get('www-authenticate'),
    `Bearer resource_metadata="${daemon.url}/.well-known/oauth-protected-resource/api/mcp"`,
    'a 401 from /api/mcp names the resource metadata (RFC 9728)',
  );
  const resource = await (await daemon.fetch('/.well-known/oauth-protected-resource/api/mcp')).json();
  t.same(resource.authorization_servers, [daemon.url]);
  t.equal(resource.resource, `${daemon.url}/api/mcp`);
  t.same(await (await daemon.fetch('/.well-known/oauth-protected-resource')).json(), resource, 'also at the root, where older clients look');
  const metadata = await (await daemon.fetch('/.well-known/oauth-authorization-server')).json();
  t.same(metadata.code_challenge_methods_supported, ['S256'], 'PKCE S256 only');
  t.equal(metadata.issuer, daemon.url);

  for (const [uri, why] of [
    ['http://evil.example/cb', /https, or http on a loopback/],
    ['https://app.example/cb#frag', /fragment/],
    ['javascript:alert(1)', /https, or http on a loopback/],
    ['not a url', /not an absolute URL/],
  ] as const) {
    const body = await expectError(t, await register(daemon, { redirect_uris: [uri] }), 400, 'INVALID_REQUEST_BODY', why, `redirect URI ${uri}`);
    t.equal((body as unknown as { error: string }).error, 'invalid_redirect_uri', 'with the RFC 7591 error too');
  }
  await expectError(
    t,
    await register(daemon, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }),
    400,
    'INVALID_REQUEST_BODY',
    /token_endpoint_auth_method/,
  );
  const registered = await register(daemon);
  t.equal(registered.status, 201);
  const { client_id: clientId } = await registered.json();

  const browser = await browserOf(daemon);
  const { verifier, challenge } = pkce();
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    resource: `${daemon.url}/api/mcp`,
  };
  const decide = (overrides: Record<string, string>, approve = true, headers: Record<string, string> = browser) =>
    daemon.fetch('/api/oauth/authorization', { method: 'POST', headers, body: JSON.stringify({ params: { ...params, ...overrides }, approve }) });

  await expectError(
    t,
    await decide({ redirect_uri: 'https://evil.example/steal' }),
    400,
    'INVALID_REQUEST_BODY',
    /not one this client registered/,
    'an unregistered redirect URI (no open redirect)',
  );
  await expectError(t, await decide({ code_challenge: '' }), 400, 'INVALID_REQUEST_BODY', /PKCE is required/, 'no PKCE');
  await expectError(t, await decide({ code_challenge_method: 'plain' }), 400, 'INVALID_REQUEST_BODY', /S256/, 'plain PKCE');
  await expectError(t, await decide({ client_id: 'unknown' }), 400, 'INVALID_REQUEST_BODY', /unknown client_id/);
  await expectError(t, await decide({ resource: 'https://other.example/mcp' }), 400, 'INVALID_REQUEST_BODY', /resource must be/);
  await expectError(
    t,
    await decide({}, true, bearer(owner.key)),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /signed in to the web app/,
    'an API key cannot consent for a person',
  );
  await expectError(
    t,
    await decide({}, true, { ...browser, Origin: 'https://evil.example' }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    /cross-site/,
    'a cross-site POST',
  );
  await expectError(t, await decide({}, true, { ...browser, 'X-CSRF-Token': 'f'.repeat(64) }), 403, 'INVALID_CSRF_TOKEN', undefined, 'a forged CSRF token');

  const denied = new URL((await (await decide({}, false)).json()).redirect);
  t.equal(denied.searchParams.get('error'), 'access_denied', 'a refusal goes back to the client as access_denied');
  t.equal(denied.searchParams.get('state'), 'xyz');

  const code = new URL((await (await decide({})).json()).redirect).searchParams.get('code')!;
  const exchange = (fields: Record<string, string>) =>
    daemon.fetch(
      '/api/oauth/token',
      form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier, ...fields }),
    );
  const wrongVerifier = await exchange({ code_verifier: pkce().verifier });
  t.equal(wrongVerifier.status, 400);
  t.equal((await wrongVerifier.json()).error, 'invalid_grant', 'a wrong PKCE verifier');
  const json = await daemon.fetch('/api/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ grant_type: 'authorization_code', code }),
  });
  t.equal((await json.json()).error, 'invalid_request', 'the token endpoint takes form bodies only');

  // A fresh authorization, exchanged as a client should.
  const { verifier: otherVerifier, challenge: otherChallenge } = pkce();
  const code2 = new URL((await (await decide({ code_challenge: otherChallenge })).json()).redirect).searchParams.get('code')!;
  const tokens = await (
    await daemon.fetch(
      '/api/oauth/token',
      form({ grant_type: 'authorization_code', code: code2, client_id: clientId, redirect_uri: REDIRECT, code_verifier: otherVerifier }),
    )
  ).json();
  t.match(tokens.access_token, /^trawl_oa_/);

  t.equal((await daemon.fetch('/api/repos', { headers: bearer(tokens.access_token) })).status, 200, 'the access token reads');
  await expectError(
    t,
    await daemon.fetch('/api/admin/api_keys', { method: 'POST', headers: bearer(tokens.access_token), body: JSON.stringify({ name: 'x' }) }),
    403,
    'INSUFFICIENT_PERMISSIONS',
    undefined,
    'and does nothing else',
  );
  await expectError(
    t,
    await daemon.fetch('/api/repos', { headers: bearer(tokens.refresh_token) }),
    401,
    'NOT_AUTHENTICATED',
    undefined,
    'a refresh token is no bearer credential',
  );
  t.equal(
    (await daemon.fetch('/api/oauth/revoke', form({ token: `trawl_oa_${'0'.repeat(64)}` }))).status,
    200,
    'revoking an unknown token is no error (RFC 7009)',
  );

  const refresh = () => daemon.fetch('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId }));
  const racing = await Promise.all([refresh(), refresh(), refresh()]);
  t.same(racing.map((response) => response.status).sort(), [200, 400, 400], 'refreshes racing with one refresh token: one wins, it is used once');
});

t.test('reuse ends the authorization: a rotated-out refresh token, or a code presented again, revokes every token it led to', async (t) => {
  const { daemon } = await teamDaemon(t, { password: PASSWORD });
  const { client_id: clientId } = await (await register(daemon)).json();
  const browser = await browserOf(daemon);
  const authorize = async () => {
    const { verifier, challenge } = pkce();
    const params = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' };
    const decided = await daemon.fetch('/api/oauth/authorization', { method: 'POST', headers: browser, body: JSON.stringify({ params, approve: true }) });
    const code = new URL((await decided.json()).redirect).searchParams.get('code')!;
    const exchange = () =>
      daemon.fetch('/api/oauth/token', form({ grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: verifier }));
    return { exchange };
  };
  const refresh = (token: string) => daemon.fetch('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId }));
  const reads = async (accessToken: string) => (await daemon.fetch('/api/repos', { headers: bearer(accessToken) })).status;

  // The thief refreshes first with a stolen refresh token; the client's own later refresh is reuse.
  const first = await (await (await authorize()).exchange()).json();
  const thief = await (await refresh(first.refresh_token)).json();
  t.equal(await reads(thief.access_token), 200, "the thief's refreshed token reads, until the reuse is seen");
  const reused = await refresh(first.refresh_token);
  t.equal(reused.status, 400);
  t.equal((await reused.json()).error, 'invalid_grant', 'the rotated-out refresh token is refused');
  t.equal(await reads(thief.access_token), 401, "and the grant's live access token is revoked");
  t.equal((await refresh(thief.refresh_token)).status, 400, 'and its live refresh token');

  // Another authorization of the same client and person is not touched.
  const other = await (await (await authorize()).exchange()).json();
  t.equal(await reads(other.access_token), 200, 'another authorization still reads');

  const replayed = await authorize();
  const issued = await (await replayed.exchange()).json();
  t.equal(await reads(issued.access_token), 200);
  const again = await replayed.exchange();
  t.equal((await again.json()).error, 'invalid_grant', 'a code is used once');
  t.equal(await reads(issued.access_token), 401, 'and presenting it again revokes the tokens it issued');
  t.equal((await refresh(issued.refresh_token)).status, 400, 'refresh token too');
  t.equal(await reads(other.access_token), 200, 'the other authorization still reads');

  // Reuse is still recognised after a restart (the rotated-out grant is kept, revoked, for its lifetime).
  const kept = await (await (await authorize()).exchange()).json();
  const rotated = await (await refresh(kept.refresh_token)).json();
  await daemon.stop();
  const restarted = await runDaemon(t, daemon.configFile, { env: LICENSE_ENV });
  t.equal(
    (await restarted.fetch('/api/oauth/token', form({ grant_type: 'refresh_token', refresh_token: kept.refresh_token, client_id: clientId }))).status,
    400,
  );
  t.equal((await restarted.fetch('/api/repos', { headers: bearer(rotated.access_token) })).status, 401, 'after a restart too');
});

t.test('registration keeps nothing: many addresses registering cannot grow the state or crowd out a client; names are plain text', async (t) => {
  const { daemon } = await teamDaemon(t, { password: PASSWORD });
  const { client_id: early } = await (await register(daemon)).json();
  t.match(early, /^trawl_oc_/);
  const stateLog = path.join(path.dirname(daemon.configFile), 'data', 'state', 'state.log');
  const before = fs.statSync(stateLog).size;
  const statuses: number[] = [];
  for (let address = 2; address < 14; address++) {
    for (let i = 0; i < 11; i++)
      statuses.push(
        (await postFrom(`127.0.0.${address}`, `${daemon.url}/api/oauth/register`, { redirect_uris: [REDIRECT], client_name: `flood ${address}.${i}` })).status,
      );
  }
  t.equal(statuses.filter((status) => status === 201).length, 120, 'ten from each of twelve addresses');
  t.equal(statuses.filter((status) => status === 429).length, 12, 'then each address waits');
  t.equal(fs.statSync(stateLog).size, before, 'and the state log did not grow');

  const browser = await browserOf(daemon);
  const { challenge } = pkce();
  const described = await daemon.fetch(
    `/api/oauth/authorization?${new URLSearchParams({ response_type: 'code', client_id: early, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`,
    { headers: browser },
  );
  t.equal(described.status, 200, 'the client registered before the flood still asks');
  t.equal((await described.json()).clientName, 'agent');

  const altered = early.slice(0, 30) + (early[30] === 'A' ? 'B' : 'A') + early.slice(31);
  await expectError(
    t,
    await daemon.fetch(
      `/api/oauth/authorization?${new URLSearchParams({ response_type: 'code', client_id: altered, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`,
      { headers: browser },
    ),
    400,
    'INVALID_REQUEST_BODY',
    /unknown client_id/,
    'an altered client_id is no client',
  );

  for (const name of ['Trusted\u202eevil', 'two\nlines', 'zero\u200bwidth']) {
    const refused = await register(daemon, { redirect_uris: [REDIRECT], client_name: name });
    t.equal(refused.status, 400, `client_name ${JSON.stringify(name)}`);
    t.equal((await refused.json()).error, 'invalid_client_metadata');
  }
  const html = await (await register(daemon, { redirect_uris: [REDIRECT], client_name: '<img src=x onerror=alert(1)>' })).json();
  t.equal(html.client_name, '<img src=x onerror=alert(1)>', 'markup is a name like any other: shown as text, never as markup');
  const long = await register(daemon, { redirect_uris: Array.from({ length: 10 }, (_, i) => `https://app.example/${'x'.repeat(120)}/${i}`) });
  t.equal(long.status, 400, 'over 1 KiB of redirect URIs');
});
