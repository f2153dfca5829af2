import t from 'tap';
import { launchBrowser } from '../helpers/browser.js';
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { bearer, teamDaemon } from '../helpers/auth.js';
import { waitFor } from '../helpers/daemon.js';
import { createServedRepository } from '../helpers/git-host.js';
import { tempDir } from '../helpers/tmp.js';
import { connectionStatuses } from '../connections/helpers.js';

const PASSWORD = 'correct horse battery';

/** A page signed in as `email`, on the home page. */
async function signedIn(browser: Browser, url: string, email: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${url}/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#sign-out');
  await page.goto(`${url}/`);
  await page.waitForSelector('#repos-table tbody tr');
  return { page, errors };
}

/** The text of the repository table's row for `name`. */
const rowText = (page: Page, name: string) =>
  page.$$eval(
    '#repos-table tbody tr',
    (rows, wanted) => (rows as HTMLTableRowElement[]).find((row) => row.cells[0]?.textContent === wanted)?.textContent ?? null,
    name,
  );

const repositoryNames = (page: Page) => page.$$eval('#repos-table tbody tr td:first-child', (cells) => cells.map((cell) => cell.textContent));

t.test('the home page lists repositories with their sync state, filters them, and lets owners sync connections', async (t) => {
  const root = tempDir(t, 'trawl-served-');
  createServedRepository(t, root, 'alpha', { 'alpha.txt': 'alpha_marker\n' });
  createServedRepository(t, root, 'beta', { 'beta.txt': 'beta_marker\n' });
  const { daemon, owner } = await teamDaemon(t, {
    password: PASSWORD,
    configure: (configFile) => {
      const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
      config.connections = {
        alpha: { type: 'git', url: `file://${root}/alpha.git`, public: true },
        beta: { type: 'git', url: `file://${root}/beta.git`, public: true },
      };
      fs.writeFileSync(configFile, JSON.stringify(config));
    },
  });
  const synced = async () => (await connectionStatuses(daemon, owner)).filter((status) => status.syncState?.repoCount === 1).length === 2;
  await waitFor(synced, 30_000, 'both connections synced');
  const browser = await launchBrowser(t);

  const { page, errors } = await signedIn(browser, daemon.url, 'owner@example.com');
  await page.waitForSelector('#connections-table tbody tr');
  await waitFor(async () => (await repositoryNames(page)).length === 3 || (await page.reload(), false), 30_000, 'every repository listed');
  t.same(
    new Set(await repositoryNames(page)),
    new Set(['example.com/acme/widgets', 'local/alpha', 'local/beta']),
    'the configured repository and both mirrors',
  );
  const alphaRow = await rowText(page, 'local/alpha');
  t.match(alphaRow, /genericGitHost/, 'a mirror shows its code host');
  t.match(alphaRow, /fetched .* ago/, 'and when its last fetch completed');
  t.match(await rowText(page, 'example.com/acme/widgets'), /—$/, 'a configured repository has no sync state');
  t.same(
    await page.$$eval('#connections-table tbody tr', (rows) => rows.map((row) => row.getAttribute('data-name'))),
    ['alpha', 'beta'],
    'both connections are listed',
  );
  t.match(await page.textContent('#connections-table tr[data-name=alpha]'), /alpha\s*git\s*synced/, 'with their type and status');

  await page.fill('#repo-filter', 'alph');
  await page.waitForFunction(() => document.querySelectorAll('#repos-table tbody tr').length === 1);
  t.same(await repositoryNames(page), ['local/alpha'], 'the filter keeps the names that hold it');
  await page.fill('#repo-filter', 'no such repository');
  await page.waitForSelector('#repo-scope:has-text("No repository matches")');
  await page.fill('#repo-filter', '');
  await page.waitForFunction(() => document.querySelectorAll('#repos-table tbody tr').length === 3);

  await page.click('#connections-table tr[data-name=beta] button[data-connection]');
  await page.waitForSelector('#all-connections');
  t.same(await repositoryNames(page), ['local/beta'], "a connection's count shows its repositories only");
  t.match(await page.textContent('#repo-scope'), /Connection beta only/);
  await page.click('#all-connections');
  await page.waitForFunction(() => document.querySelectorAll('#repos-table tbody tr').length === 3);

  const apiOrder = ((await (await daemon.fetch('/api/repos?sort=pushed&direction=desc', { headers: bearer(owner.key) })).json()) as { repoName: string }[]).map(
    (repo) => repo.repoName,
  );
  await page.selectOption('#repo-sort', 'pushed desc');
  await page.waitForFunction(
    (expected) => [...document.querySelectorAll('#repos-table tbody tr td:first-child')].map((cell) => cell.textContent).join() === expected.join(),
    apiOrder,
  );
  t.same(await repositoryNames(page), apiOrder, 'sorted by the last push as the API sorts them');

  const before = (await connectionStatuses(daemon, owner)).find((status) => status.name === 'alpha')!.syncState.lastSyncedAt;
  await page.click('#connections-table tr[data-name=alpha] .sync-now');
  await page.waitForSelector('#connections-table tr[data-name=alpha] .sync-now:has-text("Queued")');
  await waitFor(
    async () => (await connectionStatuses(daemon, owner)).find((status) => status.name === 'alpha')!.syncState.lastSyncedAt !== before,
    30_000,
    'the sync the button asked for ran',
  );
  const audit = (await (await daemon.fetch('/api/ee/audit?perPage=100', { headers: bearer(owner.key) })).json()) as { action: string }[];
  t.ok(
    audit.some((record) => record.action === 'connection.sync'),
    'and was audited',
  );
  t.same(errors, [], 'no script error');

  const member = await signedIn(browser, daemon.url, 'dev@example.com');
  await member.page.waitForSelector('#connections-table tbody tr');
  t.equal(await member.page.$('.sync-now'), null, 'a member sees the connections but cannot sync them');
  t.same(member.errors, [], 'no script error for the member either');
});
