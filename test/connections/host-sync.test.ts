import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { bearer, type SeededUser } from '../helpers/auth.js';
import { waitFor, type Daemon } from '../helpers/daemon.js';
import { connectionStatuses, daemonWithUsers, githubHost, searchFiles, type ConnectionStatus } from './helpers.js';

// A GitHub Enterprise-like host end to end: its API (the fixture, behind the same nginx) lists the
// repositories, git http-backend serves them with the token as password, the daemon mirrors and indexes them.

const TOKEN = 'ghs_fixture_token_0123456789';

interface Repo {
  repoId: number;
  repoName: string;
  isPublic: boolean;
  externalWebUrl?: string;
  syncState?: { connectionName: string; goneSince?: string };
}

t.test('a github connection: listed through the API, cloned with the token, renamed and vanished repositories', async (t) => {
  const { fixture, host } = await githubHost(t, TOKEN, [
    { id: 501, owner: 'acme', name: 'api', files: { 'api.go': 'package api // trawl_api_marker\n' } },
    { id: 502, owner: 'acme', name: 'web', files: { 'web.ts': 'export const trawl_web_marker = 1;\n' } },
    { id: 503, owner: 'acme', name: 'gone', files: { 'gone.txt': 'trawl_gone_marker\n' } },
  ]);

  const { daemon, owner } = await daemonWithUsers(
    t,
    {
      auth: { anonymousAccess: true },
      sync: { removeAfterHours: 0 },
      connections: { ghe: { type: 'github', url: host.origin, orgs: ['acme'], token: { env: 'GHE_TOKEN' }, publicRepos: ['*/acme/web'] } },
    },
    { GHE_TOKEN: TOKEN },
  );
  const hostName = new URL(host.origin).host;
  const repos = async (headers: Record<string, string> = bearer(owner.key)) => (await (await daemon.fetch('/api/repos', { headers })).json()) as Repo[];
  await waitFor(async () => (await repos()).length === 3, 30_000, 'three repositories mirrored');
  t.same(
    (await repos()).map((repo) => repo.repoName),
    [`${hostName}/acme/api`, `${hostName}/acme/gone`, `${hostName}/acme/web`],
  );
  t.equal(
    (await repos()).find((repo) => repo.repoName.endsWith('/api'))!.externalWebUrl,
    `${host.origin}/acme/api`,
    "the host's web address is kept for links",
  );
  t.same(
    (await repos({})).map((repo) => repo.repoName),
    [`${hostName}/acme/web`],
    'anonymous callers see only what publicRepos makes public',
  );
  t.ok(
    fixture.state.requests.some((request) => request.startsWith('/api/v3/orgs/acme/repos')),
    'listed through the Enterprise Server API path',
  );
  await waitFor(async () => (await search(daemon, owner, 'trawl_api_marker')).length === 1, 30_000, 'the api repository indexed');
  const apiId = (await repos()).find((repo) => repo.repoName.endsWith('/api'))!.repoId;

  // The host renames acme/api (same id) and drops acme/gone.
  fixture.state.repos[0]!.name = 'api-v2';
  fs.renameSync(path.join(host.root, 'acme', 'api.git'), path.join(host.root, 'acme', 'api-v2.git'));
  fixture.state.repos.splice(2, 1);
  const [connection] = await connectionStatuses(daemon, owner);
  t.equal((await daemon.fetch(`/api/connections/${connection!.id}/sync`, { method: 'POST', headers: bearer(owner.key) })).status, 202);
  await waitFor(
    async () => (await repos()).map((repo) => repo.repoName).join() === [`${hostName}/acme/api-v2`, `${hostName}/acme/web`].join(),
    30_000,
    'the rename and the removal',
  );
  await waitFor(
    async () => (await search(daemon, owner, 'trawl_api_marker')).join() === `${hostName}/acme/api-v2`,
    30_000,
    'the renamed repository searchable under its new name',
  );
  const renamed = (await repos()).find((repo) => repo.repoName.endsWith('/api-v2'))!;
  t.equal(renamed.repoId, apiId, 'a renamed repository keeps its id (and so its grants)');
  t.same(await search(daemon, owner, 'trawl_gone_marker'), [], 'a repository gone from the host is dropped from the index (removeAfterHours 0)');
  const mirrors = fs.readdirSync(path.join(path.dirname(daemon.configFile), 'data', 'mirrors', 'ghe'));
  t.equal(mirrors.length, 2, 'and its mirror removed; the renamed one kept its mirror');
  t.notOk(daemon.stderr().includes(TOKEN), 'the token is in no log line');
});

t.test('a listing that fails keeps every repository already mirrored', async (t) => {
  const { fixture, host } = await githubHost(t, TOKEN, [{ id: 601, owner: 'acme', name: 'kept', files: { 'kept.txt': 'trawl_kept_marker\n' } }]);
  const { daemon, owner } = await daemonWithUsers(
    t,
    { sync: { removeAfterHours: 0 }, connections: { ghe: { type: 'github', url: host.origin, orgs: ['acme'], token: { env: 'GHE_TOKEN' } } } },
    { GHE_TOKEN: TOKEN },
  );
  await waitFor(async () => (await search(daemon, owner, 'trawl_kept_marker')).length === 1, 30_000, 'the first sync');
  fixture.state.token = 'rotated-elsewhere';
  const [connection] = await connectionStatuses(daemon, owner);
  await daemon.fetch(`/api/connections/${connection!.id}/sync`, { method: 'POST', headers: bearer(owner.key) });
  let state: ConnectionStatus['syncState'] | undefined;
  await waitFor(
    async () => {
      state = (await connectionStatuses(daemon, owner))[0]!.syncState;
      return state?.status === 'failed';
    },
    30_000,
    'the failed sync',
  );
  t.match(state, { error: /HTTP 401: the host refused the credentials/, repoCount: 1 }, 'the error is on the connection');
  t.same(await search(daemon, owner, 'trawl_kept_marker'), [`${new URL(host.origin).host}/acme/kept`], 'nothing already indexed is lost');
  const metrics = await (await daemon.fetch('/metrics', { headers: bearer(owner.key) })).text();
  t.match(metrics, /trawl_connection_sync_failures_total\{connection="ghe"\} 1/, 'the failure is counted');
  t.match(metrics, /trawl_connection_syncs_total\{connection="ghe"\} 2/);
  t.match(metrics, /trawl_connection_fetched_bytes_total\{connection="ghe"\} [1-9]/);
});

/** The repositories a search finds files in. */
async function search(daemon: Daemon, user: SeededUser, query: string): Promise<string[]> {
  return [...new Set((await searchFiles(daemon, user, query)).map((file) => file.repository))].sort();
}
