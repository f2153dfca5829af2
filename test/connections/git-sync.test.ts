import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { bearer, type SeededUser } from '../helpers/auth.js';
import { waitFor, type Daemon } from '../helpers/daemon.js';
import { commitAll, git, writeFiles } from '../helpers/git.js';
import { createServedRepository, freePort, startGitDaemon, startGitHttpHost } from '../helpers/git-host.js';
import { tempDir } from '../helpers/tmp.js';
import { connectionStatuses, daemonWithUsers, searchFiles, type ConnectionStatus } from './helpers.js';

const PASSWORD = 'correct-horse-battery-staple';

function secretFile(t: Parameters<typeof tempDir>[0], content: string): string {
  const file = path.join(tempDir(t, 'trawl-secret-'), 'token');
  fs.writeFileSync(file, `${content}\n`, { mode: 0o600 });
  return file;
}

/** Asks for a sync of connection `name` and waits until one that started after the request has ended. */
async function syncNow(daemon: Daemon, owner: SeededUser, name: string): Promise<ConnectionStatus> {
  const before = (await connectionStatuses(daemon, owner)).find((status) => status.name === name)!;
  const response = await daemon.fetch(`/api/connections/${before.id}/sync`, { method: 'POST', headers: bearer(owner.key) });
  if (response.status !== 202) throw new Error(`sync answered ${response.status}: ${await response.text()}`);
  let after: ConnectionStatus | undefined;
  await waitFor(
    async () => {
      after = (await connectionStatuses(daemon, owner)).find((status) => status.name === name);
      return after?.syncState.status !== 'syncing' && after?.syncState.lastSyncedAt !== before.syncState.lastSyncedAt;
    },
    30_000,
    `a sync of ${name}`,
  );
  return after!;
}

t.test('connections fetch from git http-backend behind nginx with basic auth, and from git daemon', async (t) => {
  const host = await startGitHttpHost(t, { user: 'alice', password: PASSWORD });
  const work = host.createRepository('team/app', { 'src/main.c': 'int trawl_first_marker = 1;\n' });
  git(work, 'checkout', '-q', '-b', 'feature');
  writeFiles(work, { 'src/feature.c': 'int trawl_feature_marker = 2;\n' });
  commitAll(work, 'feature');
  git(work, 'push', '-q', 'origin', 'feature');
  git(work, 'checkout', '-q', 'main');
  createServedRepository(t, host.root, 'other/lib', { 'lib.c': 'int trawl_daemon_marker = 3;\n' });
  const gitDaemon = await startGitDaemon(t, host.root);
  // A host that accepts connections and never answers.
  const held = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  const silentPort = await freePort();
  await new Promise<void>((resolve) => silent.listen(silentPort, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of held) socket.destroy();
    return new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  const { daemon, owner, member } = await daemonWithUsers(
    t,
    {
      sync: { fetchTimeoutSeconds: 5 },
      connections: {
        team: {
          type: 'git',
          url: `${host.origin}/git/team/app.git`,
          user: 'alice',
          token: { file: secretFile(t, PASSWORD) },
          revisions: { branches: ['feature'] },
        },
        wrong: { type: 'git', url: `${host.origin}/git/other/lib.git`, user: 'alice', token: { env: 'WRONG_TOKEN' } },
        daemon: { type: 'git', url: `${gitDaemon}/other/lib.git` },
        hang: { type: 'git', url: `http://127.0.0.1:${silentPort}/stuck.git` },
        moved: { type: 'git', url: `${host.origin}/moved/git/team/app.git`, user: 'alice', token: { file: secretFile(t, PASSWORD) } },
      },
    },
    { WRONG_TOKEN: 'not-the-password' },
  );
  const search = async (query: string) => (await searchFiles(daemon, owner, query)).map((file) => `${file.repository}:${file.fileName.text}`).sort();
  const teamRepo = `127.0.0.1:${new URL(host.origin).port}/git/team/app`;

  await waitFor(async () => (await search('trawl_first_marker')).length === 1, 30_000, 'the first fetch to be indexed');
  t.same(await search('trawl_first_marker'), [`${teamRepo}:src/main.c`], 'the repository cloned over http with basic auth is searchable under host/path');
  t.same(await search('trawl_feature_marker rev:feature'), [`${teamRepo}:src/feature.c`], 'a branch the globs name is fetched and indexed');
  await waitFor(async () => (await search('trawl_daemon_marker')).length === 1, 30_000, 'the git daemon repository');
  t.same(await search('trawl_daemon_marker'), [`127.0.0.1:${new URL(gitDaemon).port}/other/lib:lib.c`], 'a git:// URL is fetched from git daemon');

  await waitFor(
    async () => (await connectionStatuses(daemon, owner)).every((status) => status.syncState.status !== 'syncing' && status.syncState.status !== 'pending'),
    30_000,
    'every first sync',
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; the connections then: ${JSON.stringify(await connectionStatuses(daemon, owner))}`);
  });
  const statuses = await connectionStatuses(daemon, owner);
  const byName = Object.fromEntries(statuses.map((status) => [status.name, status]));
  t.ok(
    statuses.every((status) => status.id >= 100 && status.connectionType === 'git'),
    'configured connections have ids of their own',
  );
  t.equal(byName.team!.syncState.repoCount, 1);
  t.equal(byName.team!.syncState.failedRepoCount, 0);
  t.match(byName.wrong!.syncState.failedRepos, [{ error: /refused the credentials/ }], 'a wrong password is a clear error on its connection');
  t.equal(byName.wrong!.syncState.repoCount, 0);
  t.match(byName.moved!.syncState.failedRepos, [{ error: /fetching|listing the refs/ }], 'git follows no redirect (followed, this one would have worked)');
  t.equal(byName.moved!.syncState.repoCount, 0);
  t.match(byName.hang!.syncState.failedRepos, [{ error: /ran past 5 s/ }], 'a host that never answers is ended by the time budget');
  const text = JSON.stringify(statuses) + daemon.stderr();
  t.notOk(text.includes(PASSWORD) || text.includes('not-the-password'), 'no secret in the API or the log');
  const memberView = await connectionStatuses(daemon, member);
  t.same(memberView, [], 'a member sees no connection of repositories they cannot see (private by default)');
  const denied = await daemon.fetch(`/api/connections/${byName.team!.id}/sync`, { method: 'POST', headers: bearer(member.key) });
  t.equal(denied.status, 403, 'only owners start a sync');
  const unknown = await daemon.fetch('/api/connections/99999/sync', { method: 'POST', headers: bearer(owner.key) });
  t.match(await unknown.json(), { statusCode: 404, errorCode: 'NOT_FOUND' });

  const mirrors = path.join(path.dirname(daemon.configFile), 'data', 'mirrors', 'team');
  for (const mirror of fs.readdirSync(mirrors))
    t.notOk(fs.readFileSync(path.join(mirrors, mirror, 'config'), 'utf8').includes(PASSWORD), 'the mirror keeps no credential');

  // A push becomes searchable one fetch later.
  writeFiles(work, { 'src/pushed.c': 'int trawl_pushed_marker = 4;\n' });
  commitAll(work, 'pushed');
  git(work, 'push', '-q', 'origin', 'main');
  await syncNow(daemon, owner, 'team');
  await waitFor(async () => (await search('trawl_pushed_marker')).length === 1, 30_000, 'the pushed commit to be indexed');
  t.pass('a pushed commit is searchable after the next sync');

  // A force-push replaces history; a deleted branch goes from the index.
  git(work, 'reset', '-q', '--hard', 'HEAD~1');
  writeFiles(work, { 'src/rewritten.c': 'int trawl_rewritten_marker = 5;\n' });
  commitAll(work, 'rewritten');
  git(work, 'push', '-q', '-f', 'origin', 'main');
  git(work, 'push', '-q', 'origin', '--delete', 'feature');
  await syncNow(daemon, owner, 'team');
  await waitFor(async () => (await search('trawl_rewritten_marker')).length === 1, 30_000, 'the force-pushed commit');
  await waitFor(async () => (await search('trawl_feature_marker rev:*')).length === 0, 30_000, 'the deleted branch to leave the index');
  t.same(await search('trawl_pushed_marker'), [], 'what the force-push dropped is gone');
  const repos = (await (await daemon.fetch('/api/repos', { headers: bearer(owner.key) })).json()) as {
    repoName: string;
    branches: string[];
    connectionId: number;
    syncState: { connectionName: string };
  }[];
  const team = repos.find((repo) => repo.repoName === teamRepo)!;
  t.same(team.branches, ['HEAD', 'main'], 'the deleted branch is no longer listed');
  t.equal(team.connectionId, byName.team!.id);
  t.equal(team.syncState.connectionName, 'team');
  const filtered = (await (await daemon.fetch(`/api/repos?connectionId=${byName.team!.id}`, { headers: bearer(owner.key) })).json()) as { repoName: string }[];
  t.same(
    filtered.map((repo) => repo.repoName),
    [teamRepo],
    'connectionId filters /api/repos',
  );
  t.equal((await daemon.fetch('/api/health')).status, 200, 'the daemon kept serving throughout');
});
