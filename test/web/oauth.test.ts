import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, discoverAuthorizationServerMetadata, refreshAuthorization } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer, teamDaemon, testLicense } from '../helpers/auth.js';
import { MemoryOAuthProvider, startCallback } from '../helpers/mcp-oauth.js';

const PASSWORD = 'correct horse battery';

t.test("the MCP SDK's own OAuth flow: discovery, registration, consent in the browser, token, a tool call, refresh, revocation", async (t) => {
  const { daemon, owner, dev } = await teamDaemon(t, { password: PASSWORD });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  await page.goto(`${daemon.url}/sign-in`);
  await page.fill('input[name=email]', 'dev@example.com');
  await page.fill('input[name=password]', PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#sign-out');

  const callback = await startCallback(t);
  let consentShown = { title: '', name: '', origin: '' };
  const provider = new MemoryOAuthProvider(callback.url, async (url) => {
    await page.goto(url.href);
    await page.waitForSelector('#consent');
    consentShown = {
      title: (await page.textContent('#consent-title')) ?? '',
      name: (await page.textContent('#consent-client-name')) ?? '',
      origin: (await page.textContent('#consent-origin')) ?? '',
    };
    await page.click('#allow');
  });
  const mcpUrl = new URL(`${daemon.url}/api/mcp`);
  const connect = async () => {
    const client = new Client({ name: 'trawl-oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    t.teardown(() => client.close());
    return client;
  };

  const arrived = callback.next();
  await t.rejects(connect(), /Unauthorized/, 'the first connection has no token: the browser is sent to consent');
  t.match(provider.information?.client_id, /^trawl_oc_[A-Za-z0-9_-]+$/, 'the client registered itself');
  t.equal(consentShown.title, 'An application asks to use trawl as dev@example.com', 'the consent page names the person');
  t.equal(consentShown.name, 'trawl test agent', 'and the name the client gave itself');
  t.equal(consentShown.origin, new URL(callback.url).origin, 'and where the answer goes');
  const query = await arrived;
  t.ok(query.get('code'), `the browser came back to the client with a code (${query})`);
  t.equal(await auth(provider, { serverUrl: mcpUrl, authorizationCode: query.get('code')! }), 'AUTHORIZED', 'the SDK exchanged the code (PKCE verifier sent)');
  t.match(provider.saved?.access_token, /^trawl_oa_[0-9a-f]{64}$/);
  t.match(provider.saved?.refresh_token, /^trawl_or_[0-9a-f]{64}$/);
  t.ok(provider.saved!.expires_in! > 3000 && provider.saved!.expires_in! <= 3600, `access tokens last one hour (expires_in ${provider.saved!.expires_in})`);

  const client = await connect();
  const found = await client.callTool({ name: 'search_code', arguments: { query: 'parse_expression' } });
  t.match(JSON.stringify(found), /parser\.c/, 'search_code answers with the token');

  const metadata = await discoverAuthorizationServerMetadata(daemon.url);
  const first = provider.saved!;
  const refreshed = await refreshAuthorization(daemon.url, { metadata, clientInformation: provider.information!, refreshToken: first.refresh_token! });
  t.not(refreshed.refresh_token, first.refresh_token, 'the refresh token rotates');
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(first.access_token) })).status, 401, 'the old access token ended with its pair');
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(refreshed.access_token) })).status, 200, 'the new one works');

  const revoked = await daemon.fetch('/api/oauth/revoke', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `token=${refreshed.refresh_token}`,
  });
  t.equal(revoked.status, 200);
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(refreshed.access_token) })).status, 401, 'revoking the refresh token ends the access token too');
  await t.rejects(
    refreshAuthorization(daemon.url, { metadata, clientInformation: provider.information!, refreshToken: first.refresh_token! }),
    /invalid/i,
    'a used refresh token is refused',
  );

  // Removed, the person's OAuth tokens end with them.
  provider.saved = undefined;
  const again = callback.next();
  await t.rejects(connect(), /Unauthorized/);
  await auth(provider, { serverUrl: mcpUrl, authorizationCode: (await again).get('code')! });
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(provider.saved!.access_token) })).status, 200);
  t.equal((await daemon.fetch(`/api/ee/user?userId=${dev.id}`, { method: 'DELETE', headers: bearer(owner.key) })).status, 200);
  t.equal((await daemon.fetch('/api/repos', { headers: bearer(provider.saved!.access_token) })).status, 401, 'removing the person ends their OAuth tokens');
});

t.test('without a license the OAuth flow is refused with a clear error', async (t) => {
  const { daemon } = await teamDaemon(t, { password: PASSWORD, license: testLicense({ expiresAt: new Date(Date.now() - 86_400_000).toISOString() }) });
  const callback = await startCallback(t);
  const provider = new MemoryOAuthProvider(callback.url, async () => {
    throw new Error('no consent should be asked without a license');
  });
  await t.rejects(auth(provider, { serverUrl: new URL(`${daemon.url}/api/mcp`) }), /enterprise feature/, 'registration says why');
});
