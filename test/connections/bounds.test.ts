import t from 'tap';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { trawl } from '../helpers/cli.js';
import { bearer } from '../helpers/auth.js';
import { waitFor } from '../helpers/daemon.js';
import { commitAll, git, writeFiles } from '../helpers/git.js';
import { createServedRepository } from '../helpers/git-host.js';
import { tempDir } from '../helpers/tmp.js';
import { connectionStatuses, daemonWithUsers, repositoryNames, searchFiles } from './helpers.js';

t.test('a repository past sync.maxRepositoryMegabytes is refused; the others sync', async (t) => {
  const root = tempDir(t, 'trawl-served-');
  createServedRepository(t, root, 'big', { 'noise.bin': crypto.randomBytes(3 << 20).toString('base64') });
  createServedRepository(t, root, 'small', { 'small.txt': 'trawl_small_marker\n' });
  const { daemon, owner } = await daemonWithUsers(t, {
    sync: { maxRepositoryMegabytes: 1 },
    connections: { big: { type: 'git', url: `file://${root}/big.git` }, small: { type: 'git', url: `file://${root}/small.git` } },
  });
  await waitFor(
    async () => (await connectionStatuses(daemon, owner)).every((status) => status.syncState.status !== 'pending' && status.syncState.status !== 'syncing'),
    30_000,
    'both syncs',
  );
  const [big, small] = await connectionStatuses(daemon, owner);
  t.match(
    big!.syncState.failedRepos,
    [{ repo: /local\/big$/, error: /grew past 1 MiB \(sync\.maxRepositoryMegabytes\)/ }],
    'the big one is refused with a clear error',
  );
  t.equal(big!.syncState.repoCount, 0, 'and not mirrored');
  t.equal(small!.syncState.repoCount, 1, 'the small one is');
  const mirrors = path.join(path.dirname(daemon.configFile), 'data', 'mirrors', 'big');
  t.same(fs.existsSync(mirrors) ? fs.readdirSync(mirrors) : [], [], 'the partial fetch left nothing on disk');
  await waitFor(async () => (await repositoryNames(daemon, owner)).length === 1, 30_000, 'the small repository listed');
  t.same(await repositoryNames(daemon, owner), ['local/small']);
});

t.test('SIGHUP adds and drops connections, and syncs them', async (t) => {
  const root = tempDir(t, 'trawl-served-');
  createServedRepository(t, root, 'first', { 'one.txt': 'trawl_first_connection\n' });
  createServedRepository(t, root, 'second', { 'two.txt': 'trawl_second_connection\n' });
  const { daemon, owner } = await daemonWithUsers(t, { connections: { first: { type: 'git', url: `file://${root}/first.git` } } });
  await waitFor(async () => (await repositoryNames(daemon, owner)).join() === 'local/first', 30_000, 'the first connection');
  const config = JSON.parse(fs.readFileSync(daemon.configFile, 'utf8')) as { connections: Record<string, unknown> };
  config.connections = { second: { type: 'git', url: `file://${root}/second.git` } };
  fs.writeFileSync(daemon.configFile, JSON.stringify(config));
  daemon.process.kill('SIGHUP');
  await waitFor(async () => (await repositoryNames(daemon, owner)).join() === 'local/second', 30_000, 'the second connection in place of the first');
  t.same(
    (await connectionStatuses(daemon, owner)).map((status) => status.name),
    ['second'],
    'the removed connection is no longer listed',
  );
  t.same(fs.readdirSync(path.join(path.dirname(daemon.configFile), 'data', 'mirrors', 'first')), [], "the removed connection's mirror is deleted");
});

t.test('tags the globs name are fetched and indexed as branches of their name; others are not fetched', async (t) => {
  const root = tempDir(t, 'trawl-served-');
  const work = createServedRepository(t, root, 'tagged', { 'v.txt': 'trawl_tagged_release_one\n' });
  git(work, 'tag', '-a', 'v1.0', '-m', 'release');
  git(work, 'tag', 'nightly');
  writeFiles(work, { 'v.txt': 'trawl_tagged_head\n' });
  commitAll(work, 'after the release');
  git(work, 'push', '-q', '--tags', 'origin', 'main');
  const { daemon, owner } = await daemonWithUsers(t, {
    connections: { tagged: { type: 'git', url: `file://${root}/tagged.git`, revisions: { tags: ['v*'] } } },
  });
  await waitFor(async () => (await repositoryNames(daemon, owner)).length === 1, 30_000, 'the mirror');
  const search = async (query: string) => (await searchFiles(daemon, owner, query)).map((file) => file.branches ?? []);
  await waitFor(async () => (await search('trawl_tagged_head')).length === 1, 30_000, 'the index');
  t.same(await search('trawl_tagged_release_one rev:v1.0'), [['v1.0']], 'the annotated tag, peeled to its commit, is searchable as a branch');
  const repo = ((await (await daemon.fetch('/api/repos', { headers: bearer(owner.key) })).json()) as { branches: string[] }[])[0]!;
  t.same(repo.branches, ['HEAD', 'main', 'v1.0'], 'a tag no glob names is not fetched');
});

t.test('trawl index, run offline, indexes the mirrors the daemon fetched and drops none of them', async (t) => {
  const root = tempDir(t, 'trawl-served-');
  createServedRepository(t, root, 'kept', { 'kept.txt': 'trawl_offline_marker\n' });
  const { daemon, owner } = await daemonWithUsers(t, { connections: { kept: { type: 'git', url: `file://${root}/kept.git` } } });
  await waitFor(async () => (await repositoryNames(daemon, owner)).length === 1, 30_000, 'the mirror');
  const manifestFile = path.join(path.dirname(daemon.configFile), 'data', 'manifest.json');
  await waitFor(async () => fs.existsSync(manifestFile) && fs.readFileSync(manifestFile, 'utf8').includes('local/kept'), 30_000, 'the index');
  t.equal(await daemon.stop(), 0);
  const run = trawl(['index', '--config', daemon.configFile]);
  t.equal(run.status, 0, run.stderr);
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { repositories: Record<string, { state: string }> };
  t.same(Object.keys(manifest.repositories), ['local/kept'], 'the mirrored repository is still in the index');
  t.equal(manifest.repositories['local/kept']!.state, 'ready');
});
