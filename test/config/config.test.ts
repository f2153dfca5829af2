import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, validateConfig } from '../../src/config/config.js';
import { loadConfigFile, zeroConfig } from '../../src/config/load.js';
import { parseQuery } from '../../src/query/parser.js';
import { checkContexts } from '../../src/query/plan.js';
import { tempDir } from '../helpers/tmp.js';

const example = {
  dataDir: './data',
  listen: { host: '127.0.0.1', port: 6070 },
  publicUrl: 'http://127.0.0.1:6070',
  repos: [
    {
      name: 'github.com/acme/api',
      path: '/srv/git/api.git',
      branches: ['main', 'release/*'],
      codeHostType: 'github',
      webUrl: 'https://github.com/acme/api',
      displayName: 'acme/api',
      public: true,
      archived: false,
      fork: false,
    },
  ],
  contexts: { backend: { include: ['github.com/acme/*'], exclude: [] } },
  auth: { anonymousAccess: false },
};

t.test('the documented example validates, with defaults filled in', async (t) => {
  const config = validateConfig(example, 'example');
  t.same(config.repos[0], example.repos[0]);
  t.same(config.contexts, example.contexts);
  t.same(config.index, { maxFileBytes: 1 << 20, maxShardContentBytes: 100 << 20, ctagsCommand: 'ctags', ctagsProcesses: 2, maxWatchedDirectories: 10_000 });
  const minimal = validateConfig({ repos: [{ name: 'r', path: '.' }] }, 'minimal');
  t.same(minimal.repos[0], { name: 'r', path: '.', branches: [], codeHostType: 'genericGitHost', public: false, archived: false, fork: false });
  t.equal(minimal.publicUrl, 'http://127.0.0.1:6070');
  t.equal(validateConfig({ repos: [], listen: { host: '::' } }, 'ipv6').publicUrl, 'http://[::]:6070', 'an IPv6 listen address bracketed');
  t.equal(minimal.auth.anonymousAccess, false, 'anonymous access is off by default');
});

t.test('connections: a configuration may hold only connections; defaults follow the public hosts', async (t) => {
  const config = validateConfig(
    { connections: { gh: { type: 'github', orgs: ['acme'], token: { env: 'GITHUB_TOKEN' } }, plain: { type: 'git', url: 'git://git.example.com/x.git' } } },
    'c',
  );
  t.same(config.repos, []);
  t.match(config.connections, [
    { name: 'gh', type: 'github', url: 'https://github.com', orgs: ['acme'], token: { env: 'GITHUB_TOKEN' }, public: false, syncIntervalMinutes: 60 },
    { name: 'plain', type: 'git', url: 'git://git.example.com/x.git' },
  ]);
  t.match(config.sync, { processes: 2, removeAfterHours: 24, maxRepositories: 10_000 });
});

const invalid: [what: string, config: unknown, message: RegExp][] = [
  ['not an object', [], /the configuration: must be an object/],
  ['repos missing', {}, /repos: must be an array of repositories/],
  ['unknown top-level option', { repos: [], dataDri: 'x' }, /dataDri: unknown option/],
  ['unknown repo option', { repos: [{ name: 'a', path: '.', brnaches: [] }] }, /repos\[0\]\.brnaches: unknown option/],
  ['repo name missing', { repos: [{ path: '.' }] }, /repos\[0\]\.name: must be a non-empty string/],
  ['repo path wrong type', { repos: [{ name: 'a', path: 3 }] }, /repos\[0\]\.path: must be a non-empty string/],
  ['bad code host', { repos: [{ name: 'a', path: '.', codeHostType: 'svn' }] }, /repos\[0\]\.codeHostType: must be one of github, gitlab/],
  ['branches not strings', { repos: [{ name: 'a', path: '.', branches: ['main', 4] }] }, /repos\[0\]\.branches\[1\]: must be a non-empty string/],
  ['public not boolean', { repos: [{ name: 'a', path: '.', public: 'yes' }] }, /repos\[0\]\.public: must be true or false/],
  [
    'duplicate names',
    {
      repos: [
        { name: 'a', path: '.' },
        { name: 'a', path: '..' },
      ],
    },
    /repos\[1\]\.name: duplicate repository name "a"/,
  ],
  ['port out of range', { repos: [], listen: { port: 70000 } }, /listen\.port: must be an integer from 0 to 65535/],
  ['relative publicUrl', { repos: [], publicUrl: 'localhost:6070' }, /publicUrl: must be an absolute http\(s\) URL/],
  ['unparsable publicUrl', { repos: [], publicUrl: 'http://:::6070' }, /publicUrl: must be an absolute http\(s\) URL/],
  ['bad webUrl', { repos: [{ name: 'a', path: '.', webUrl: 'ftp://x' }] }, /repos\[0\]\.webUrl: must be an absolute http\(s\) URL/],
  ['context include not array', { repos: [], contexts: { be: { include: 'x' } } }, /contexts\.be\.include: must be an array of strings/],
  ['anonymousAccess wrong type', { repos: [], auth: { anonymousAccess: 1 } }, /auth\.anonymousAccess: must be true or false/],
  ['maxFileBytes zero', { repos: [], index: { maxFileBytes: 0 } }, /index\.maxFileBytes: must be an integer/],
  [
    'a token written in the config',
    { connections: { gh: { type: 'github', orgs: ['a'], token: 'ghp_secret' } } },
    /connections\.gh\.token: a token is never written in the configuration/,
  ],
  [
    'a token with both sources',
    { connections: { gh: { type: 'github', token: { env: 'A', file: 'b' } } } },
    /connections\.gh\.token: give exactly one of "env" and "file"/,
  ],
  [
    "another host type's option",
    { connections: { gh: { type: 'github', groups: ['a'] } } },
    /connections\.gh\.groups: unknown option \(expected one of type, url/,
  ],
  ['a connection without a type', { connections: { x: { url: 'https://git.example.com/r.git' } } }, /connections\.x\.type: required/],
  [
    'a connection name with a space',
    { connections: { 'a b': { type: 'git', url: 'https://git.example.com/r.git' } } },
    /connections\.a b: a connection name is 1–64 letters/,
  ],
  [
    'a git URL with a password',
    { connections: { x: { type: 'git', url: 'https://u:hunter2@git.example.com/r.git' } } },
    /connections\.x\.url: must not hold a password/,
  ],
  [
    'a git URL that is a path',
    { connections: { x: { type: 'git', url: '/srv/repo' } } },
    /connections\.x\.url: must be an https:\/\/, http:\/\/, ssh:\/\/, git:\/\/ or file:\/\/ URL/,
  ],
  ['gerrit without a URL', { connections: { x: { type: 'gerrit' } } }, /connections\.x\.url: required for a gerrit connection/],
  ['a sync bound out of range', { connections: {}, repos: [], sync: { processes: 0 } }, /sync\.processes: must be an integer from 1 to 64/],
  ['a cluster without etcd', { repos: [], cluster: { node: 'a', keyFile: 'k' } }, /cluster\.etcd: must list at least one etcd client URL/],
  [
    'an etcd endpoint that is not a URL',
    { repos: [], cluster: { etcd: ['127.0.0.1:2379'], node: 'a', keyFile: 'k' } },
    /cluster\.etcd\[0\]: must be an absolute http\(s\) URL/,
  ],
  [
    'a node name with a slash',
    { repos: [], cluster: { etcd: ['http://127.0.0.1:2379'], node: 'a/b', keyFile: 'k' } },
    /cluster\.node: must be 1 to 64 letters/,
  ],
  ['a cluster without its key file', { repos: [], cluster: { etcd: ['http://127.0.0.1:2379'], node: 'a' } }, /cluster\.keyFile: must be a non-empty string/],
  [
    'a cluster node on every address with no advertised URL',
    { repos: [], listen: { host: '0.0.0.0' }, cluster: { etcd: ['http://127.0.0.1:2379'], node: 'a', keyFile: 'k' } },
    /cluster\.advertiseUrl: must be given when the daemon listens on every address/,
  ],
  [
    'no partitions',
    { repos: [], cluster: { etcd: ['http://127.0.0.1:2379'], node: 'a', keyFile: 'k', partitions: 0 } },
    /cluster\.partitions: must be an integer from 1 to 4096/,
  ],
  [
    'an unknown cluster option',
    { repos: [], cluster: { etcd: ['http://127.0.0.1:2379'], node: 'a', keyFile: 'k', replica: 2 } },
    /cluster\.replica: unknown option/,
  ],
];

for (const [what, config, message] of invalid) {
  t.test(`rejects: ${what}`, async (t) => {
    t.throws(() => validateConfig(config, 'test.json'), ConfigError);
    t.throws(() => validateConfig(config, 'test.json'), { message });
  });
}

t.test('a cluster node: defaults, and its key file resolved against the config file', async (t) => {
  t.equal(validateConfig({ repos: [] }, 'single.json').cluster, null, 'no `cluster`: a single node');
  const dir = tempDir(t);
  const file = path.join(dir, 'trawl.json');
  fs.writeFileSync(file, JSON.stringify({ repos: [], cluster: { etcd: ['http://10.0.0.1:2379/'], node: 'search-1', keyFile: 'cluster.key' } }));
  t.same(loadConfigFile(file).cluster, {
    etcd: ['http://10.0.0.1:2379'],
    node: 'search-1',
    keyFile: path.join(dir, 'cluster.key'),
    partitions: 64,
    replicas: 2,
    strict: false,
    keyPrefix: '',
    snapshotAfterChanges: 10_000,
    placementFloorBytes: 256 << 20,
  });
  const prefixed = (keyPrefix: unknown) => () =>
    validateConfig({ repos: [], cluster: { etcd: ['http://10.0.0.1:2379'], node: 'n', keyFile: '/k', keyPrefix } }, 'prefix.json').cluster!.keyPrefix;
  t.equal(prefixed('search-a/')(), 'search-a/', 'a key prefix is taken as it is');
  t.throws(prefixed('a b'), /cluster\.keyPrefix: must be at most 128 printable ASCII characters/, 'a prefix with a space is refused');
  t.throws(prefixed('x'.repeat(129)), /cluster\.keyPrefix/, 'so is one over 128 characters');
});

t.test('every problem is reported at once', async (t) => {
  try {
    validateConfig({ repos: [{ name: '', path: 1, codeHostType: 'x' }], listen: { port: -1 } }, 'many.json');
    t.fail('should throw');
  } catch (error) {
    t.equal((error as ConfigError).problems.length, 4);
    t.match((error as Error).message, /^invalid configuration in many\.json:/);
  }
});

t.test('config files: relative paths resolve against the file, bad JSON is named', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'trawl.json');
  fs.writeFileSync(file, JSON.stringify({ dataDir: 'state', repos: [{ name: 'x', path: '../repo' }] }));
  const config = loadConfigFile(file);
  t.equal(config.dataDir, path.join(dir, 'state'));
  t.equal(config.repos[0]!.path, path.resolve(dir, '../repo'));
  fs.writeFileSync(file, '{"repos": [');
  t.throws(() => loadConfigFile(file), { name: 'ConfigError', message: /trawl\.json:\n  - not valid JSON/ });
  t.throws(() => loadConfigFile(path.join(dir, 'missing.json')), { name: 'ConfigError', message: /cannot read the file/ });
});

t.test('zero-config indexes the given directory, anonymously readable on 127.0.0.1', async (t) => {
  const config = zeroConfig('/srv/some/checkout');
  t.equal(config.repos.length, 1);
  t.equal(config.repos[0]!.path, '/srv/some/checkout');
  t.equal(config.repos[0]!.public, true);
  t.equal(config.auth.anonymousAccess, true);
  t.equal(config.listen.host, '127.0.0.1');
  t.match(config.dataDir, /trawl[/\\]checkout-[0-9a-f]{8}$/);
});

t.test('a search context that no configured repository is in is marked empty, and a search with it says so', async (t) => {
  const config = validateConfig(
    {
      repos: [{ name: 'github.com/acme/api', path: '/srv/git/api' }],
      contexts: {
        backend: { include: ['github.com/acme/*'] },
        typo: { include: ['github.com/acmee/*'] },
        none: { include: ['github.com/*'], exclude: ['**'] },
      },
    },
    'test',
  );
  t.equal(config.contexts.backend!.empty, undefined);
  t.equal(config.contexts.typo!.empty, true, 'its include globs match no repository');
  t.equal(config.contexts.none!.empty, true, 'its exclude globs take every repository out');
  t.throws(() => checkContexts(parseQuery('context:typo handler', { regex: false, caseSensitive: false }), config.contexts), {
    name: 'UnknownSearchContextError',
    message: /search context "typo" holds no repository: no configured repository matches its include globs \["github\.com\/acmee\/\*"\]/,
  });
  t.doesNotThrow(() => checkContexts(parseQuery('context:backend handler', { regex: false, caseSensitive: false }), config.contexts));
});

t.test('zero-config in a subdirectory of a repository is the whole repository, as git finds it', async (t) => {
  const root = path.join(tempDir(t), 'project');
  fs.mkdirSync(path.join(root, '.git'), { recursive: true });
  fs.mkdirSync(path.join(root, 'src', 'deep'), { recursive: true });
  t.same(
    zeroConfig(path.join(root, 'src', 'deep')).repos.map((repo) => [repo.name, repo.path]),
    [['local/project', root]],
  );
  const plain = path.join(tempDir(t), 'plain');
  fs.mkdirSync(plain);
  t.equal(zeroConfig(plain).repos[0]!.path, plain, 'a directory in no repository is itself');
});
