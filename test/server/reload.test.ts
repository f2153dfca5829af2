import t from 'tap';
import fs from 'node:fs';
import { startDaemon, waitFor, type Daemon } from '../helpers/daemon.js';
import { fixtureRepository } from './fixture.js';

function rewriteConfig(daemon: Daemon, change: (config: Record<string, unknown>) => Record<string, unknown>): void {
  fs.writeFileSync(daemon.configFile, JSON.stringify(change(JSON.parse(fs.readFileSync(daemon.configFile, 'utf8')))));
}

t.test('SIGHUP reloads the configuration: repositories come and go without a restart', async (t) => {
  const first = fixtureRepository(t, 'example.com/acme/first');
  const second = fixtureRepository(t, 'example.com/acme/second');
  const daemon = await startDaemon(t, { repos: [first.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const repoNames = async () =>
    ((await (await daemon.fetch('/api/repos')).json()) as { repoName: string; indexState: string }[]).map((repo) => `${repo.repoName}:${repo.indexState}`);
  const searched = async () =>
    [
      ...new Set(
        ((await (await daemon.post('/api/search', { query: 'parse_expression', matches: 100 })).json()).files as { repository: string }[]).map(
          (file) => file.repository,
        ),
      ),
    ].sort();
  t.same(await repoNames(), ['example.com/acme/first:ready']);

  rewriteConfig(daemon, (config) => ({ ...config, repos: [first.config, second.config] }));
  daemon.process.kill('SIGHUP');
  await waitFor(async () => (await repoNames()).includes('example.com/acme/second:ready'), 20_000, 'the added repository to be indexed');
  t.same(await searched(), ['example.com/acme/first', 'example.com/acme/second'], 'an added repository is searched');

  rewriteConfig(daemon, (config) => ({ ...config, repos: [second.config] }));
  daemon.process.kill('SIGHUP');
  await waitFor(async () => (await repoNames()).length === 1, 20_000, 'the removed repository to go');
  t.same(await searched(), ['example.com/acme/second'], 'a removed repository is no longer searched');
  t.equal((await daemon.post('/api/tree', { repoName: 'example.com/acme/first', revisionName: 'HEAD', paths: [] })).status, 404, 'nor served');

  fs.writeFileSync(daemon.configFile, '{ not json');
  daemon.process.kill('SIGHUP');
  await daemon.waitForLog(/the configuration is invalid; keeping the running one/, 'the reload to be refused');
  t.same(await searched(), ['example.com/acme/second'], 'an invalid file changes nothing');
});
