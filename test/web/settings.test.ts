import t, { type Test } from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import { bearer, teamDaemon } from '../helpers/auth.js';
import { singleSignOnDaemon } from '../helpers/identity-provider.js';

const PASSWORD = 'correct horse battery';

const settingsDaemon = (t: Test) => teamDaemon(t, { password: PASSWORD });

t.test('sign in with the keyboard, create an API key in Settings, use it; removed, the person is locked out', async (t) => {
  const { daemon, owner, dev } = await settingsDaemon(t);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));

  await page.goto(`${daemon.url}/settings/api-keys`);
  await page.waitForSelector('#sign-in');
  t.match(page.url(), /\/sign-in\?next=%2Fsettings%2Fapi-keys$/, 'Settings asks for a sign-in first');
  t.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'email', 'the email field has the focus');
  await page.keyboard.type('dev@example.com');
  await page.keyboard.press('Tab');
  await page.keyboard.type('not the password');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#sign-in-error:not([hidden])');
  t.match(await page.textContent('#sign-in-error'), /email or the password is wrong/, 'a wrong password is said so');
  await page.fill('input[name=password]', PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#settings-api-keys');
  t.match(page.url(), /\/settings\/api-keys$/, 'back where the person was going');
  t.equal(await page.textContent('#signed-in-as'), 'dev@example.com');
  const cookies = await page.context().cookies();
  t.same(
    cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite]),
    [['trawl_session', true, 'Lax']],
    'one HttpOnly, SameSite=Lax cookie',
  );
  t.equal(await page.evaluate(() => document.cookie), '', 'page scripts cannot read it');

  await page.fill('#create-key input[name=name]', 'ci pipeline');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#new-key');
  const key = (await page.textContent('#new-key'))!;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: daemon.url });
  await page.click('#copy-key');
  await page.waitForSelector('#copy-key:has-text("Copied")');
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'Copy key copies the new key');
  t.match(key, /^trawl_ak_[0-9a-f]{64}$/, 'the key is shown once');
  t.match(await page.textContent('#api-keys'), /ci pipeline/, 'and listed');
  const search = await fetch(`${daemon.url}/api/search`, {
    method: 'POST',
    headers: bearer(key),
    body: JSON.stringify({ query: 'parse_expression', matches: 5 }),
  });
  t.equal(search.status, 200, 'the key works from outside the browser, as curl would use it');
  await page.reload();
  await page.waitForSelector('#api-keys');
  t.equal(await page.$('#new-key'), null, 'after a reload the secret is gone');

  await page.click('.settings-nav a:text-is("Sessions")');
  await page.waitForSelector('#sessions');
  t.match(await page.textContent('#sessions'), /this browser/, 'the sessions list marks this browser');
  t.equal(await page.$('.settings-nav a:text-is("Members")'), null, 'a member sees no owner sections');

  const removed = await fetch(`${daemon.url}/api/ee/user?userId=${dev.id}`, { method: 'DELETE', headers: bearer(owner.key) });
  t.equal(removed.status, 200, 'an owner removes the person');
  t.equal(
    (await fetch(`${daemon.url}/api/search`, { method: 'POST', headers: bearer(key), body: JSON.stringify({ query: 'x', matches: 1 }) })).status,
    401,
    'their key is dead',
  );
  await page.click('.settings-nav a:text-is("API keys")');
  await page.waitForSelector('#sign-in');
  t.pass('the browser is sent to sign in on its next request');
  t.same(errors, [], 'no script errors');
});

t.test('owners manage members, the license and anonymous access; the pages work on a narrow screen', async (t) => {
  const { daemon } = await settingsDaemon(t);
  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 375, height: 740 } });
  await page.goto(`${daemon.url}/sign-in`);
  await page.fill('input[name=email]', 'owner@example.com');
  await page.fill('input[name=password]', PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#sign-out');
  await page.goto(`${daemon.url}/settings/members`);
  await page.waitForSelector('#members');
  t.match(await page.textContent('#members'), /dev@example\.com/);

  await page.fill('#add-member input[name=email]', 'new@example.com');
  await page.fill('#add-member input[name=name]', 'Newcomer');
  await page.selectOption('#add-member select[name=role]', 'member');
  await page.fill('#add-member input[name=password]', 'a password for new');
  await page.click('#add-member button');
  await page.waitForSelector('#members :text("new@example.com")');
  const signIn = await fetch(`${daemon.url}/api/auth/sign_in`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: 'new@example.com', password: 'a password for new' }),
  });
  t.equal(signIn.status, 200, 'the added member signs in with the password set for them');

  await page.click('#members button:text("Make owner@example.com a member")');
  await page.waitForSelector('#members .error');
  t.match(await page.textContent('#members .error'), /last owner/, 'the last owner stays an owner, and the page says why');
  await page.click('#members button:text("Make new@example.com an owner")');
  await page.waitForSelector('#members tr:has-text("new@example.com") :text("owner")');
  t.pass('a member made an owner');

  page.on('dialog', (dialog) => void dialog.accept());
  await page.click('#members button:text("Remove new@example.com")');
  await page.waitForFunction(() => !document.querySelector('#members')?.textContent?.includes('new@example.com'));
  t.pass('removed from the list');

  await page.goto(`${daemon.url}/settings/access`);
  await page.waitForSelector('#anonymous-state');
  t.match(await page.textContent('#anonymous-state'), /needs a sign-in/);
  await page.click('#settings-access button');
  await page.waitForSelector('#anonymous-state:text("Anyone may read")');
  t.equal((await fetch(`${daemon.url}/api/repos`)).status, 200, 'anonymous reads are on');

  await page.goto(`${daemon.url}/settings/license`);
  await page.waitForSelector('#license-state');
  t.match(await page.textContent('#license-state'), /Active: Test Corp/);

  await page.goto(`${daemon.url}/settings/audit`);
  await page.waitForSelector('#audit');
  t.match(await page.textContent('#audit'), /settings\.changed/, 'the audit log shows the change just made');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  t.equal(overflow, 0, 'nothing sticks out sideways at 375 px (tables scroll in their own box)');
});

t.test('single sign-on in the browser: through the provider’s pages and back, a key made, then locked out', async (t) => {
  const { daemon, owner, dev } = await singleSignOnDaemon(t, { dev: { email: 'dev@example.com', email_verified: true, name: 'Dev' } });
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  await page.goto(`${daemon.url}/sign-in?next=%2Fsettings%2Fapi-keys`);
  await page.waitForSelector('#single-sign-on');
  t.equal(await page.textContent('#single-sign-on'), 'Sign in with Test IdP');
  await page.click('#single-sign-on');
  await page.waitForSelector('input[name=login]');
  t.ok(page.url().startsWith(new URL(daemon.url).origin) === false, 'on the provider’s own page');
  await page.fill('input[name=login]', 'dev');
  await page.fill('input[name=password]', 'anything');
  await page.click('button[type=submit]');
  await page.waitForSelector('button:text("Continue")');
  await page.click('button:text("Continue")');
  await page.waitForSelector('#settings-api-keys');
  t.equal(new URL(page.url()).pathname, '/settings/api-keys', 'back in Settings, signed in');
  t.equal(await page.textContent('#signed-in-as'), 'dev@example.com');

  await page.fill('#create-key input[name=name]', 'sso laptop');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#new-key');
  const key = (await page.textContent('#new-key'))!;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: daemon.url });
  await page.click('#copy-key');
  await page.waitForSelector('#copy-key:has-text("Copied")');
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'Copy key copies the new key');
  t.equal((await fetch(`${daemon.url}/api/repos`, { headers: bearer(key) })).status, 200, 'the key works outside the browser');

  t.equal((await fetch(`${daemon.url}/api/ee/user?userId=${dev.id}`, { method: 'DELETE', headers: bearer(owner.key) })).status, 200);
  await page.click('.settings-nav a:text-is("Sessions")');
  await page.waitForSelector('#sign-in');
  t.pass('removed, the browser is sent to sign in on its next request');
});
