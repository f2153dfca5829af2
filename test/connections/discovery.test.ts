import t from 'tap';
import { validateConfig } from '../../src/config/config.js';
import { ConnectionError, RateLimitedError } from '../../src/connections/errors.js';
import { discover } from '../../src/connections/hosts/index.js';
import { azureDevops } from './fixtures/azuredevops.js';
import { bitbucketCloud, bitbucketServer } from './fixtures/bitbucket.js';
import { gerrit } from './fixtures/gerrit.js';
import { gitea } from './fixtures/gitea.js';
import { github } from './fixtures/github.js';
import { gitlab } from './fixtures/gitlab.js';
import { startFixture, type FixtureRepo, type HostHandler } from './fixtures/server.js';

// Discovery through each host's API, against fixtures answering the documented shapes (test/connections/fixtures/).

const TOKEN = 'host-token-123';
const REPOS: FixtureRepo[] = [
  { id: 11, owner: 'acme', name: 'api', topics: ['backend'] },
  { id: 12, owner: 'acme', name: 'web', topics: ['frontend'] },
  { id: 13, owner: 'acme', name: 'old', archived: true },
  { id: 14, owner: 'acme', name: 'copy', fork: true },
  { id: 15, owner: 'acme', name: 'tools' },
];

function connectionOf(settings: Record<string, unknown>) {
  return validateConfig({ connections: { host: settings } }, 'test').connections[0]!;
}

const run = (settings: Record<string, unknown>, options: { token?: string; maxRepositories?: number } = {}) =>
  discover(connectionOf(settings), {
    token: options.token,
    timeoutMs: 5000,
    maxRepositories: options.maxRepositories ?? 10_000,
    signal: new AbortController().signal,
  });

interface HostCase {
  host: string;
  handler: HostHandler;
  settings: (origin: string) => Record<string, unknown>;
  /** The trawl name of acme/api on this host. */
  apiName: (origin: string) => string;
  anonymous?: boolean;
  /** Gerrit's clone URL is the host's plus the project; the others give `/git/{owner}/{name}.git` here. */
  gerritClone?: boolean;
  /** Bitbucket Cloud has no archived flag: only the glob leaves a repository out. */
  noArchived?: boolean;
}

const hostOf = (origin: string) => new URL(origin).host;
const CASES: HostCase[] = [
  {
    host: 'github',
    handler: github,
    settings: (origin) => ({ type: 'github', url: origin, orgs: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
  },
  {
    host: 'gitlab',
    handler: gitlab,
    settings: (origin) => ({ type: 'gitlab', url: origin, groups: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
  },
  {
    host: 'gitea',
    handler: gitea,
    settings: (origin) => ({ type: 'gitea', url: origin, orgs: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
  },
  {
    host: 'gerrit',
    handler: gerrit,
    settings: (origin) => ({ type: 'gerrit', url: origin }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
    anonymous: true,
    gerritClone: true,
  },
  {
    host: 'bitbucket cloud',
    handler: bitbucketCloud,
    settings: (origin) => ({ type: 'bitbucket', url: `${origin}/2.0`, workspaces: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
    noArchived: true,
  },
  {
    host: 'bitbucket server',
    handler: bitbucketServer,
    settings: (origin) => ({ type: 'bitbucket', deploymentType: 'server', url: origin, projects: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/api`,
  },
  {
    host: 'azure devops',
    handler: azureDevops,
    settings: (origin) => ({ type: 'azuredevops', url: origin, orgs: ['acme'], token: { env: 'X' } }),
    apiName: (origin) => `${hostOf(origin)}/acme/acme/api`,
  },
];

for (const host of CASES) {
  t.test(`${host.host}: every repository across pages, exclusions, and the host's refusals`, async (t) => {
    const fixture = await startFixture(t, host.handler, { repos: REPOS, token: host.anonymous ? undefined : TOKEN });
    const all = await run(host.settings(fixture.origin), { token: host.anonymous ? undefined : TOKEN });
    t.equal(all.repositories.length, 5, 'all five, read two a page');
    const api = all.repositories.find((repo) => repo.name === host.apiName(fixture.origin));
    t.ok(api, `acme/api is named ${host.apiName(fixture.origin)}`);
    t.equal(api?.cloneUrl, host.gerritClone ? `${fixture.origin}/acme/api` : `${fixture.origin}/git/acme/api.git`, 'its clone URL, with no user name in it');
    t.ok(fixture.state.requests.length >= (host.host === 'azure devops' ? 1 : 3), `paged (${fixture.state.requests.length} requests)`);

    const excluding = await run(
      {
        ...host.settings(fixture.origin),
        exclude:
          host.host === 'gerrit'
            ? { readOnly: true, projects: ['acme/t*'] }
            : host.host === 'azure devops'
              ? { disabled: true, repos: ['acme/acme/t*'] }
              : { archived: true, ...(host.host === 'gitlab' ? { projects: ['acme/t*'] } : { repos: ['acme/t*'] }) },
      },
      { token: TOKEN },
    );
    const names = excluding.repositories.map((repo) => repo.path.split('/').at(-1)).sort();
    t.same(names, host.noArchived ? ['api', 'copy', 'old', 'web'] : ['api', 'copy', 'web'], 'archived (read-only, disabled) and excluded globs left out');

    if (!host.anonymous) {
      await t.rejects(
        run(host.settings(fixture.origin), { token: 'wrong' }),
        { name: 'ConnectionError', message: /HTTP 401: the host refused the credentials/ },
        'a wrong token: a clear error',
      );
      const unknown = host.settings(fixture.origin);
      for (const key of ['orgs', 'groups', 'workspaces', 'projects']) if (key in unknown) unknown[key] = ['nobody'];
      await t.rejects(run(unknown, { token: TOKEN }), { name: 'ConnectionError', message: /HTTP 404: no such/ }, 'an unknown organisation: a clear error');
    }
  });
}

t.test('github: topics, forks, single repositories, and rate limits waited out or reported', async (t) => {
  const fixture = await startFixture(t, github, { repos: REPOS, token: TOKEN });
  const settings = { type: 'github', url: fixture.origin, orgs: ['acme'], token: { env: 'X' } };
  const byTopic = await run({ ...settings, topics: ['back*'] }, { token: TOKEN });
  t.same(
    byTopic.repositories.map((repo) => repo.path),
    ['acme/api'],
    'topics narrow the listing',
  );
  const noForks = await run({ ...settings, exclude: { forks: true, topics: ['frontend'] } }, { token: TOKEN });
  t.notOk(
    noForks.repositories.some((repo) => repo.path === 'acme/copy' || repo.path === 'acme/web'),
    'forks and excluded topics left out',
  );
  const single = await run({ type: 'github', url: fixture.origin, repos: ['acme/web'], token: { env: 'X' } }, { token: TOKEN });
  t.same(
    single.repositories.map((repo) => [repo.path, repo.hostId]),
    [['acme/web', '12']],
    'a single repository, with its stable id',
  );
  const bySize = await run({ ...settings, exclude: { size: { max: 5 * 1024 } } }, { token: TOKEN });
  t.same(bySize.repositories, [], 'a size bound (GitHub reports KiB)');

  fixture.state.rateLimitNext = { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 1) } };
  t.equal((await run(settings, { token: TOKEN })).repositories.length, 5, 'a primary rate limit ending in a second is waited out');
  fixture.state.rateLimitNext = { status: 429, headers: { 'retry-after': '1' } };
  t.equal((await run(settings, { token: TOKEN })).repositories.length, 5, 'a 429 with Retry-After is waited out');
  fixture.state.rateLimitNext = { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 3600) } };
  const error = await run(settings, { token: TOKEN }).catch((thrown: unknown) => thrown);
  t.ok(error instanceof RateLimitedError, 'a limit an hour long fails the sync');
  t.ok(Math.abs((error as RateLimitedError).until.getTime() - (Date.now() + 3_600_000)) < 5000, 'and says when it may resume');
});

t.test('hostile hosts: bad names, 100,000 repositories, local and foreign clone URLs, redirects elsewhere', async (t) => {
  const hostile: FixtureRepo[] = [
    { id: 1, owner: 'acme', name: 'good' },
    { id: 2, owner: 'acme', name: '..' },
    { id: 3, owner: 'acme', name: 'bell\u0007name' },
    { id: 4, owner: 'acme', name: 'x'.repeat(10_000) },
    { id: 5, owner: 'acme', name: 'local', cloneUrl: 'file:///etc' },
    { id: 6, owner: 'acme', name: 'path', cloneUrl: '/var/lib/secret.git' },
    { id: 7, owner: 'acme', name: 'elsewhere', cloneUrl: 'https://evil.example.com/acme/x.git' },
    { id: 8, owner: 'acme', name: 'ssh', cloneUrl: 'ssh://git@127.0.0.1/acme/x.git' },
  ];
  const fixture = await startFixture(t, gitea, { repos: hostile, pageSize: 50 });
  const settings = { type: 'gitea', url: fixture.origin, orgs: ['acme'] };
  const listed = await run(settings);
  t.same(
    listed.repositories.map((repo) => repo.path),
    ['acme/good'],
    'only the well-named repository on the host itself',
  );
  t.equal(listed.warnings.length, 7, 'each one left out is reported');
  t.match(
    listed.warnings.join('\n'),
    /`\.\.` segment[\s\S]*control characters[\s\S]*over 1024 characters[\s\S]*file:[\s\S]*not a URL[\s\S]*evil\.example\.com[\s\S]*ssh:/,
  );
  t.ok(
    listed.warnings.every((warning) => warning.length < 400),
    'warnings are short even for a 10,000-character name',
  );

  const big = await startFixture(t, gitea, { generated: 100_000, pageSize: 50 });
  await t.rejects(run({ type: 'gitea', url: big.origin, orgs: ['big'] }, { maxRepositories: 500 }), {
    name: 'ConnectionError',
    message: /more than 500 repositories \(sync\.maxRepositories\)/,
  });
  t.ok(big.state.requests.length <= 12, `listing stopped at the bound (${big.state.requests.length} pages read of 2,000)`);

  const other = await startFixture(t, gitea, { repos: REPOS });
  fixture.state.redirectTo = other.origin;
  await t.rejects(
    run(settings),
    { name: 'ConnectionError', message: /sent trawl to http:\/\/127\.0\.0\.1:\d+, not .*; not followed/ },
    'a redirect to another host is not followed',
  );
  t.same(other.state.requests, [], 'the other host was never asked');
});

t.test('a host that never answers is ended by sync.apiTimeoutSeconds', async (t) => {
  const net = await import('node:net');
  const sockets = new Set<import('node:net').Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as import('node:net').AddressInfo).port;
  const connection = connectionOf({ type: 'gitlab', url: `http://127.0.0.1:${port}`, all: true });
  const error = await discover(connection, { token: undefined, timeoutMs: 300, maxRepositories: 10, signal: new AbortController().signal }).catch(
    (thrown: unknown) => thrown,
  );
  t.ok(error instanceof ConnectionError, 'a ConnectionError');
  t.match((error as Error).message, /no answer within 0\.3 s/);
});
