/**
 * trawl as a drop-in for Sourcebot's clients: every endpoint both have is
 * driven with the request shapes Sourcebot's clients send (the key in
 * X-Sourcebot-Api-Key, filters appended in parentheses, `repoIds`, relative
 * dates), and every answer — success and error bodies, paging headers — is
 * checked against what Sourcebot's published OpenAPI document requires
 * (./sourcebot-document.ts).
 */
import t, { type Test } from 'tap';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { execFileSync } from 'node:child_process';
import { commitAll, git, writeFiles } from '../helpers/git.js';
import { LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { startDaemon, waitFor } from '../helpers/daemon.js';
import { fixtureRepository } from '../server/fixture.js';
import * as doc from './sourcebot-document.js';

const PUBLIC = 'example.com/acme/widgets';
const PRIVATE = 'example.com/acme/secret';

/** Asserts `value` fits the document's `schema`, naming the first problem. */
function fits(t: Test, schema: TSchema, value: unknown, what: string): void {
  const problem = TypeCompiler.Compile(schema).Errors(value).First();
  t.notOk(
    problem,
    problem ? `${what}: ${problem.path} ${problem.message} (got ${JSON.stringify(problem.value)?.slice(0, 80)})` : `${what} fits Sourcebot's document`,
  );
}

/** Asserts the response is the document's error object with this status and code. */
async function failsWith(t: Test, response: Response, status: number, errorCode: string, what: string): Promise<void> {
  t.equal(response.status, status, `${what}: status ${status}`);
  const body = await response.json();
  fits(t, doc.ServiceError, body, `${what}: error body`);
  t.same([body.statusCode, body.errorCode], [status, errorCode], `${what}: ${errorCode}`);
}

t.test("Sourcebot's clients against trawl, endpoint by endpoint", async (t) => {
  const widgets = fixtureRepository(t, PUBLIC);
  const secret = fixtureRepository(t, PRIVATE);
  // A third commit by another author, an hour later than the rest: the newest of both repositories.
  writeFiles(widgets.root, { 'src/parser.c': '#include "parser.h"\n\nint parse_expression(const char *text) {\n  return text[0] == \'[\';\n}\n' });
  const later = new Date(Date.now() + 3_600_000).toISOString();
  execFileSync('git', ['commit', '-qam', 'Parse brackets'], {
    cwd: widgets.root,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ann Smith',
      GIT_AUTHOR_EMAIL: 'ann@example.com',
      GIT_COMMITTER_NAME: 'Ann Smith',
      GIT_COMMITTER_EMAIL: 'ann@example.com',
      GIT_AUTHOR_DATE: later,
      GIT_COMMITTER_DATE: later,
    },
  });
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    { repos: [widgets.config, { ...secret.config, public: false, codeHostType: 'gitlab' }], auth: { anonymousAccess: false } },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) =>
        void (users = await seedUsers(configFile, [
          { email: 'owner@example.com', role: 'owner' },
          { email: 'member@example.com', role: 'member' },
        ])),
    },
  );
  const owner = users['owner@example.com']!;
  const member = users['member@example.com']!;
  /** A request as Sourcebot's clients make it: the key in X-Sourcebot-Api-Key only. */
  const sourcebot = (path: string, init: RequestInit = {}, key = owner.key) =>
    daemon.fetch(path, {
      ...init,
      headers: { 'Content-Type': 'application/json', 'X-Sourcebot-Client-Source': 'mcp', 'X-Sourcebot-Api-Key': key, ...(init.headers as object) },
    });
  const post = (path: string, body: unknown, key?: string) => sourcebot(path, { method: 'POST', body: JSON.stringify(body) }, key);
  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

  t.test('credentials: X-Sourcebot-Api-Key is read as X-Service-Api-Key', async (t) => {
    const repos = await (await sourcebot('/api/repos')).json();
    t.same(repos.map((repo: { repoName: string }) => repo.repoName).sort(), [PRIVATE, PUBLIC], "the owner's key reaches the private repository");
    await failsWith(t, await daemon.fetch('/api/repos'), 401, 'NOT_AUTHENTICATED', 'no key');
    await failsWith(t, await sourcebot('/api/repos', {}, `trawl_ak_${'0'.repeat(64)}`), 401, 'NOT_AUTHENTICATED', 'an unknown key');
    const token = await (await post('/api/ee/scoped_access_token', { repos: [PUBLIC] })).json();
    await failsWith(t, await sourcebot('/api/repos', {}, token.token), 401, 'NOT_AUTHENTICATED', 'a scoped token in the API key header');
    t.equal((await daemon.fetch('/api/repos', { headers: { Authorization: `Bearer ${token.token}` } })).status, 200, 'the same token as a bearer');
  });

  t.test('POST /api/search with the query forms the clients build', async (t) => {
    const literal = await (
      await post('/api/search', { query: `"parse_expression" (repo:${PUBLIC.replace(/\./g, '\\.')}) (lang:C) (file:src/)`, matches: 100, contextLines: 5 })
    ).json();
    fits(t, doc.SearchResponse, literal, 'literal search');
    t.same([...new Set(literal.files.map((file: { fileName: { text: string } }) => file.fileName.text))].sort(), ['src/parser.c', 'src/parser.h']);
    const regex = await (
      await post('/api/search', {
        query: `"parse_(expression|x)\\\\(" (repo:${PUBLIC.replace(/\./g, '\\.')}) -(file:\\.h$)`,
        matches: 100,
        isRegexEnabled: true,
      })
    ).json();
    fits(t, doc.SearchResponse, regex, 'regex search');
    t.same(
      regex.files.map((file: { fileName: { text: string } }) => file.fileName.text),
      ['src/parser.c'],
      'regex mode keeps the filters in parentheses',
    );
    t.equal(regex.stats.flushReason, 'FLUSH_REASON_FINAL_FLUSH');
    const onMain = await (await post('/api/search', { query: '"parse_expression" ( rev:main )', matches: 100 })).json();
    t.ok(
      onMain.files.length > 0 && onMain.files.every((file: { branches: string[] }) => file.branches.includes('main')),
      "the clients' ( rev:main ) finds the default branch by its name",
    );
    t.same((await (await post('/api/search', { query: '"parse_expression" ( rev:nope )', matches: 100 })).json()).files, [], 'and no other branch');
    const capped = await (await post('/api/search', { query: 'parse_expression', matches: 1 })).json();
    t.same([capped.isSearchExhaustive, capped.stats.flushReason], [false, 'FLUSH_REASON_MAX_SIZE'], "a capped search says so in Zoekt's words");
    t.ok(capped.repositoryInfo.every((info: { codeHostType: string }) => ['github', 'gitlab'].includes(info.codeHostType)));
    await failsWith(t, await post('/api/search', { query: 5 }), 400, 'INVALID_REQUEST_BODY', 'search with a bad body');
    await failsWith(t, await sourcebot('/api/search', { method: 'POST', body: '{bad' }), 400, 'INVALID_REQUEST_BODY', 'search with malformed JSON');
  });

  t.test('find_references and find_definitions', async (t) => {
    for (const path of ['/api/find_references', '/api/find_definitions']) {
      const found = await (await post(path, { symbolName: 'parse_expression', language: 'C', repoName: PUBLIC, revisionName: 'HEAD' })).json();
      fits(t, doc.FindSymbolsResponse, found, path);
      t.ok(found.files.length > 0, `${path} finds it`);
      t.same(
        found.repositoryInfo.map((info: { codeHostType: string }) => info.codeHostType),
        ['github'],
        `${path}: repositoryInfo carries codeHostType`,
      );
      await failsWith(t, await post(path, { language: 'C' }), 400, 'INVALID_REQUEST_BODY', `${path} without symbolName`);
    }
  });

  t.test('GET /api/repos and /api/connections', async (t) => {
    const response = await sourcebot('/api/repos?perPage=1&sort=pushed&direction=desc');
    const repos = await response.json();
    fits(t, doc.ListReposResponse, repos, 'repos');
    t.equal(response.headers.get('x-total-count'), '2');
    t.match(response.headers.get('link'), /rel="next"/);
    t.equal(repos[0].repoName, PUBLIC, "sort=pushed: the default branch's newest commit first");
    t.equal(repos[0].defaultBranch, 'main', "defaultBranch is the branch's name");
    t.equal(
      repos[0].pushedAt,
      new Date(Number(git(widgets.root, 'log', '-1', '--format=%ct').trim()) * 1000).toISOString(),
      "pushedAt is the head commit's time",
    );
    await failsWith(t, await sourcebot('/api/repos?perPage=0'), 400, 'INVALID_QUERY_PARAMS', 'repos with perPage 0');

    const connections = await (await sourcebot('/api/connections')).json();
    fits(t, doc.ListConnectionsResponse, connections, 'connections');
    t.same(
      connections.map((connection: { name: string; connectionType: string }) => [connection.name, connection.connectionType]),
      [
        ['github', 'github'],
        ['gitlab', 'gitlab'],
      ],
    );
    const gitlab = connections.find((connection: { name: string }) => connection.name === 'gitlab');
    const onGitlab = await (await sourcebot(`/api/repos?connectionId=${gitlab.id}`)).json();
    t.same(
      onGitlab.map((repo: { repoName: string }) => repo.repoName),
      [PRIVATE],
      'connectionId filters /api/repos',
    );
    t.same(await (await sourcebot('/api/connections', {}, member.key)).json(), [connections[0]], 'a member sees the connections of what it can see');
    await failsWith(t, await daemon.fetch('/api/connections'), 401, 'NOT_AUTHENTICATED', 'connections without a key');
  });

  t.test('GET /api/source, /api/blame and POST /api/tree', async (t) => {
    const source = await (await sourcebot(`/api/source?${q({ repo: PUBLIC, path: 'src/parser.c' })}`)).json();
    fits(t, doc.FileSourceResponse, source, 'source');
    await failsWith(t, await sourcebot(`/api/source?${q({ repo: PUBLIC })}`), 400, 'MISSING_REQUIRED_QUERY_PARAMETER', 'source without path');
    await failsWith(t, await sourcebot(`/api/source?${q({ repo: PUBLIC, path: 'nope.c' })}`), 404, 'FILE_NOT_FOUND', 'source of a missing file');

    const blame = await (await sourcebot(`/api/blame?${q({ repo: PUBLIC, path: 'src/parser.c' })}`)).json();
    fits(t, doc.FileBlameResponse, blame, 'blame');
    t.same(
      blame.ranges.map((range: { startLine: number; lineCount: number }) => [range.startLine, range.lineCount]),
      [
        [1, 3],
        [4, 1],
        [5, 1],
      ],
      'contiguous ranges over the five lines',
    );
    t.equal(blame.commits[blame.ranges[1].hash].authorName, 'Ann Smith', 'the changed line is hers');
    t.equal(blame.commits[blame.ranges[1].hash].message, 'Parse brackets');
    t.same(blame.commits[blame.ranges[1].hash].previous, { hash: widgets.second, path: 'src/parser.c' }, 'previous: where the line was before');
    const older = await (await sourcebot(`/api/blame?${q({ repo: PUBLIC, path: 'src/parser.c', ref: 'v1.0' })}`)).json();
    t.same(Object.keys(older.commits), [widgets.first], 'blame at a tag');
    await failsWith(t, await sourcebot(`/api/blame?${q({ repo: PUBLIC, path: 'src' })}`), 404, 'FILE_NOT_FOUND', 'blame of a directory');
    await failsWith(
      t,
      await sourcebot(`/api/blame?${q({ repo: PUBLIC, path: 'src/parser.c', ref: 'HEAD^{/Parse}' })}`),
      400,
      'INVALID_GIT_REF',
      'blame at a message-search revision',
    );
    await failsWith(t, await sourcebot(`/api/blame?${q({ repo: 'example.com/acme/none', path: 'x' })}`), 404, 'NOT_FOUND', 'blame in an unknown repository');
    await failsWith(t, await sourcebot(`/api/blame?${q({ path: 'x' })}`), 400, 'MISSING_REQUIRED_QUERY_PARAMETER', 'blame without repo');

    const tree = await (await post('/api/tree', { repoName: PUBLIC, revisionName: 'HEAD', paths: ['src'] })).json();
    fits(t, doc.TreeResponse, tree, 'tree');
    await failsWith(t, await post('/api/tree', { repoName: PUBLIC, revisionName: 'HEAD', paths: ['nope'] }), 404, 'FILE_NOT_FOUND', 'tree of a missing path');
    await failsWith(t, await post('/api/tree', { repoName: PUBLIC }), 400, 'INVALID_REQUEST_BODY', 'tree without revisionName');
  });

  t.test('GET /api/commits, /api/commits/authors, /api/commit and /api/diff', async (t) => {
    const response = await sourcebot(`/api/commits?${q({ repo: PUBLIC, since: '30 years ago' })}`);
    const commits = await response.json();
    fits(t, doc.ListCommitsResponse, commits, 'commits');
    t.equal(response.headers.get('x-total-count'), '3', 'relative dates are understood');
    t.same(
      commits.map((commit: { refs: string }) => commit.refs),
      git(widgets.root, 'log', '--format=%D').replace(/\n$/, '').split('\n'),
      "refs is git's %D decoration",
    );
    t.ok(
      commits.every((commit: Record<string, string>) => commit.author_name === commit.authorName && commit.author_email === commit.authorEmail),
      'author_name and author_email for older clients',
    );
    const byAuthor = await (await sourcebot(`/api/commits?${q({ repo: PUBLIC, author: 'ann.*SMITH' })}`)).json();
    t.same(
      byAuthor.map((commit: { message: string }) => commit.message),
      ['Parse brackets'],
      'author is a case-insensitive regex',
    );
    const byMessage = await (await sourcebot(`/api/commits?${q({ repo: PUBLIC, query: '^add THE' })}`)).json();
    t.same(
      byMessage.map((commit: { message: string }) => commit.message),
      ['Add the lexer'],
      'query is a case-insensitive regex',
    );
    t.same(await (await sourcebot(`/api/commits?${q({ repo: PUBLIC, until: 'yesterday' })}`)).json(), [], 'until yesterday: none yet');
    await failsWith(t, await sourcebot(`/api/commits?${q({ repo: PUBLIC, since: 'a while back' })}`), 400, 'INVALID_QUERY_PARAMS', 'an unreadable date');
    await failsWith(t, await sourcebot(`/api/commits?${q({ repo: PUBLIC, author: '(' })}`), 400, 'INVALID_QUERY_PARAMS', 'an invalid author regex');
    await failsWith(t, await sourcebot(`/api/commits?${q({ repo: 'example.com/acme/none' })}`), 404, 'NOT_FOUND', 'commits of an unknown repository');

    const authorsResponse = await sourcebot(`/api/commits/authors?${q({ repo: PUBLIC, perPage: '1' })}`);
    const authors = await authorsResponse.json();
    fits(t, doc.ListCommitAuthorsResponse, authors, 'authors');
    t.same(authors, [{ name: 'Test Author', email: 'author@example.com', commitCount: 2 }], 'most commits first');
    t.equal(authorsResponse.headers.get('x-total-count'), '2');
    t.match(authorsResponse.headers.get('link'), /rel="last"/);
    const ofLexer = await (await sourcebot(`/api/commits/authors?${q({ repo: PUBLIC, path: 'src/parser.c' })}`)).json();
    t.same(
      ofLexer.map((author: { name: string; commitCount: number }) => [author.name, author.commitCount]),
      [
        ['Ann Smith', 1],
        ['Test Author', 1],
      ],
      'authors of one path',
    );
    await failsWith(t, await sourcebot(`/api/commits/authors?${q({ repo: PUBLIC, ref: 'nope' })}`), 400, 'INVALID_GIT_REF', 'authors from an unknown ref');

    const detail = await (await sourcebot(`/api/commit?${q({ repo: PUBLIC, ref: 'v1.0' })}`)).json();
    fits(t, doc.CommitDetail, detail, 'commit');
    await failsWith(t, await sourcebot(`/api/commit?${q({ repo: PUBLIC, ref: 'no-such-branch' })}`), 404, 'NOT_FOUND', 'an unknown revision');
    await failsWith(t, await sourcebot(`/api/commit?${q({ repo: PUBLIC, ref: ':/lexer' })}`), 400, 'INVALID_GIT_REF', 'a message-search revision');
    await failsWith(t, await sourcebot(`/api/commit?${q({ repo: PUBLIC, ref: 'HEAD@{1}' })}`), 400, 'INVALID_GIT_REF', 'a reflog revision');

    const diff = await (await sourcebot(`/api/diff?${q({ repo: PUBLIC, base: widgets.first, head: 'HEAD' })}`)).json();
    fits(t, doc.DiffResponse, diff, 'diff');
    await failsWith(t, await sourcebot(`/api/diff?${q({ repo: PUBLIC, base: '-x', head: 'HEAD' })}`), 400, 'INVALID_GIT_REF', 'diff from a bad ref');
  });

  t.test('scoped access tokens: repoIds, and a second revocation is 404', async (t) => {
    const [repo] = await (await sourcebot(`/api/repos?${q({ query: 'widgets' })}`)).json();
    const created = await post('/api/ee/scoped_access_token', { repoIds: [repo.repoId] });
    t.equal(created.status, 201);
    const token = await created.json();
    fits(t, doc.CreateScopedAccessTokenResponse, token, 'created token');
    t.same([token.repoIds, token.repos], [[repo.repoId], [{ id: repo.repoId, name: PUBLIC }]], 'both forms of the scope');
    t.same(
      (await (await daemon.fetch('/api/repos', { headers: { Authorization: `Bearer ${token.token}` } })).json()).map((r: { repoName: string }) => r.repoName),
      [PUBLIC],
    );
    await failsWith(
      t,
      await post('/api/ee/scoped_access_token', { repoIds: [repo.repoId], repos: [PUBLIC] }),
      400,
      'INVALID_REQUEST_BODY',
      'both repoIds and repos',
    );
    await failsWith(t, await post('/api/ee/scoped_access_token', { repoIds: [0] }), 400, 'INVALID_REQUEST_BODY', 'a non-positive id');
    await failsWith(t, await post('/api/ee/scoped_access_token', { repoIds: [999] }), 400, 'INVALID_REPOSITORY_SCOPE', 'an unknown id');
    const [hidden] = await (await sourcebot(`/api/repos?${q({ query: 'secret' })}`)).json();
    await failsWith(
      t,
      await post('/api/ee/scoped_access_token', { repoIds: [hidden.repoId] }, member.key),
      400,
      'INVALID_REPOSITORY_SCOPE',
      "an id the member can't see",
    );
    t.equal((await sourcebot(`/api/ee/scoped_access_token/${token.id}`, { method: 'DELETE' })).status, 204, 'revoked');
    await failsWith(t, await sourcebot(`/api/ee/scoped_access_token/${token.id}`, { method: 'DELETE' }), 404, 'SCOPED_ACCESS_TOKEN_NOT_FOUND', 'revoked again');
    await failsWith(t, await sourcebot('/api/ee/scoped_access_token/%zz', { method: 'DELETE' }), 404, 'SCOPED_ACCESS_TOKEN_NOT_FOUND', 'a malformed id');
    await failsWith(
      t,
      await sourcebot('/api/ee/scoped_access_token/x', { method: 'DELETE' }, `trawl_ak_${'1'.repeat(64)}`),
      401,
      'NOT_AUTHENTICATED',
      'revoking without a valid key',
    );
  });

  t.test('users and the audit log', async (t) => {
    const list = await (await sourcebot('/api/ee/users')).json();
    fits(t, doc.EeUsersResponse, list, 'users');
    t.same(list.map((user: { role: string }) => user.role).sort(), ['MEMBER', 'OWNER']);
    const one = await (await sourcebot(`/api/ee/user?${q({ userId: member.id })}`)).json();
    fits(t, doc.EeUser, one, 'user');
    await failsWith(t, await sourcebot('/api/ee/user'), 400, 'MISSING_REQUIRED_QUERY_PARAMETER', 'user without userId');
    await failsWith(t, await sourcebot(`/api/ee/user?${q({ userId: 'nobody' })}`), 404, 'NOT_FOUND', 'an unknown user');
    await failsWith(t, await sourcebot('/api/ee/users', {}, member.key), 403, 'INSUFFICIENT_PERMISSIONS', 'users as a member');

    const audit = await sourcebot('/api/ee/audit?perPage=5');
    const records = await audit.json();
    fits(t, doc.EeAuditResponse, records, 'audit records');
    t.ok(Number(audit.headers.get('x-total-count')) > 5, 'X-Total-Count');
    t.match(audit.headers.get('link'), /rel="next"/);
    await failsWith(t, await sourcebot('/api/ee/audit?since=soon'), 400, 'INVALID_QUERY_PARAMS', 'audit with a bad since');

    const removed = await sourcebot(`/api/ee/user?${q({ userId: member.id })}`, { method: 'DELETE' });
    fits(t, doc.EeDeleteUserResponse, await removed.json(), 'user removal');
    await failsWith(t, await sourcebot(`/api/ee/user?${q({ userId: member.id })}`, { method: 'DELETE' }), 404, 'NOT_FOUND', 'removing again');
  });

  t.test('health and version', async (t) => {
    fits(t, doc.HealthResponse, await (await daemon.fetch('/api/health')).json(), 'health');
    fits(t, doc.VersionResponse, await (await daemon.fetch('/api/version')).json(), 'version');
  });
});

t.test('a commit to the default branch moves pushedAt and the default branch name follows HEAD', async (t) => {
  const widgets = fixtureRepository(t, PUBLIC);
  const daemon = await startDaemon(t, { repos: [widgets.config], auth: { anonymousAccess: true } });
  const listed = async () => (await (await daemon.fetch('/api/repos')).json())[0] as { defaultBranch: string; pushedAt: string };
  t.equal((await listed()).defaultBranch, 'main');
  git(widgets.root, 'checkout', '-q', '-b', 'trunk');
  writeFiles(widgets.root, { 'NEW.md': 'new\n' });
  const head = commitAll(widgets.root, 'On trunk');
  const expected = new Date(Number(git(widgets.root, 'log', '-1', '--format=%ct', head).trim()) * 1000).toISOString();
  await waitFor(async () => (await listed()).defaultBranch === 'trunk', 60_000, 'the watcher to re-index the new branch');
  const after = await listed();
  t.same([after.defaultBranch, after.pushedAt], ['trunk', expected], 'the re-index reads HEAD again');
});
