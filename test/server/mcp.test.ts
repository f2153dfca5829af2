import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer, LICENSE_ENV, seedUsers, type SeededUser } from '../helpers/auth.js';
import { startDaemon } from '../helpers/daemon.js';
import { execFileSync } from 'node:child_process';
import { git } from '../helpers/git.js';
import { expectError } from '../helpers/schema.js';
import { tempDir } from '../helpers/tmp.js';
import { fixtureRepository } from './fixture.js';

type TextResult = { content: { type: string; text: string }[]; isError?: boolean };
const text = (result: unknown) => (result as TextResult).content.map((part) => part.text).join('');

t.test('MCP: the SDK client lists and calls every tool over Streamable HTTP', async (t) => {
  const repo = fixtureRepository(t);
  const hidden = { ...fixtureRepository(t, 'example.com/acme/secret').config, public: false };
  // A repository with no commit yet: configured, never indexed.
  const empty = tempDir(t);
  git(empty, 'init', '-q');
  const daemon = await startDaemon(t, {
    repos: [repo.config, hidden, { name: 'example.com/acme/empty', path: empty, public: true, codeHostType: 'github' }],
    auth: { anonymousAccess: true },
  });
  const client = new Client({ name: 'trawl-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`));
  await client.connect(transport);
  t.teardown(() => client.close());
  t.ok(transport.sessionId, 'a session was opened');

  const { tools } = await client.listTools();
  t.same(tools.map((tool) => tool.name).sort(), [
    'blame_file',
    'find_symbol_definitions',
    'find_symbol_references',
    'get_diff',
    'glob',
    'grep',
    'list_branches',
    'list_commit_authors',
    'list_commits',
    'list_connections',
    'list_repos',
    'list_tree',
    'read_file',
    'search_code',
  ]);

  const name = 'example.com/acme/widgets';
  const search = text(await client.callTool({ name: 'search_code', arguments: { query: 'parse_expression', language: 'C' } }));
  t.match(search, /^3 matches in 2 files/, 'search_code with a language filter');
  t.match(search, /## example\.com\/acme\/widgets src\/parser\.c\n3: int parse_expression\(const char \*text\) \{/);
  t.notMatch(search, /secret/, 'invisible repositories stay invisible');
  t.match(
    text(await client.callTool({ name: 'search_code', arguments: { query: 'parse_expression', limit: 1 } })),
    /cut at 1: raise limit/,
    'a cut result says so',
  );
  t.match(
    text(await client.callTool({ name: 'list_repos', arguments: {} })),
    /^example\.com\/acme\/empty \(error; default branch HEAD; indexed: nothing yet\)\nexample\.com\/acme\/widgets \(ready; default branch main, last commit \d{4}-[^;]+; indexed: HEAD, main\)\n$/,
  );
  t.match(
    text(await client.callTool({ name: 'list_repos', arguments: { query: 'nothing-like-it', sort: 'pushed', direction: 'desc', page: 1, perPage: 5 } })),
    /^No repositories\.$/,
    "Sourcebot's list_repos arguments",
  );
  const file = text(await client.callTool({ name: 'read_file', arguments: { repo: name, path: 'src/parser.c', offset: 3, limit: 2 } }));
  t.match(
    file,
    /^src\/parser\.c \(C, 9 lines\)\n3: int parse_expression\(const char \*text\) \{\n4: {3}return text\[0\] == '\(';\n\n\[5 more lines: call again with offset 5\.\]$/,
  );
  t.equal(text(await client.callTool({ name: 'list_tree', arguments: { repo: name, path: 'src' } })), 'lexer.c\nparser.c\nparser.h\n');
  t.equal(
    text(await client.callTool({ name: 'list_tree', arguments: { repo: name, depth: 2, includeFiles: false } })),
    'assets/\ndocs/\nsrc/\n',
    'list_tree with depth and includeFiles: directories two levels down',
  );
  t.equal(
    text(await client.callTool({ name: 'list_tree', arguments: { repo: name, depth: 2, maxEntries: 3 } })),
    'assets/\ndocs/\nsrc/\n\n[cut at 3 entries: raise maxEntries, lower depth or list a subdirectory]',
  );
  t.match(
    text(await client.callTool({ name: 'list_tree', arguments: { repo: name, depth: 2 } })),
    /^assets\/\ndocs\/\nsrc\/\nREADME\.md\nassets\/logo\.bin\ndocs\/guide\.md\nsrc\/lexer\.c\n/,
  );
  t.match(
    text(await client.callTool({ name: 'list_branches', arguments: { repo: name } })),
    /^1 branches, newest first\nmain {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}\[isDefault, isIndexed\]\n$/,
  );
  t.match(
    text(await client.callTool({ name: 'grep', arguments: { pattern: 'parse_[a-z]+\\(', include: '*.{c,h}', path: 'src' } })),
    /^3 matches in 2 files\n\n## example\.com\/acme\/widgets src\/parser\.c\n3: int parse_expression/,
  );
  t.equal(text(await client.callTool({ name: 'grep', arguments: { pattern: 'PARSE_EXPRESSION' } })), 'No matches.', 'grep is case-sensitive');
  t.match(
    text(await client.callTool({ name: 'grep', arguments: { pattern: 'parse_expression', groupByRepo: true } })),
    /^Matches by repository:\nexample\.com\/acme\/widgets: \d+ matches in 4 files\n$/,
  );
  // Counting, as Sourcebot's grep does, goes to 10,000 matches unless told otherwise; listing stops at 100.
  const counted = /^Matches by repository:\nexample\.com\/acme\/widgets: (\d+) matches/.exec(
    text(await client.callTool({ name: 'grep', arguments: { pattern: '[a-z]', groupByRepo: true } })),
  );
  t.ok(counted && Number(counted[1]) > 100, `every match counted (${counted?.[1]})`);
  t.match(text(await client.callTool({ name: 'grep', arguments: { pattern: '[a-z]' } })), /^100 matches in \d+ files \(cut at 100: raise limit/);
  t.equal(
    text(await client.callTool({ name: 'glob', arguments: { pattern: '**/*.{c,md}', repo: name } }))
      .split('\n')
      .sort()
      .join('\n'),
    ['', `${name} README.md`, `${name} docs/guide.md`, `${name} src/lexer.c`, `${name} src/parser.c`].join('\n'),
  );
  t.match(
    text(await client.callTool({ name: 'list_commits', arguments: { repo: name, author: 'test AUTH', since: '30 years ago', until: 'now', perPage: 1 } })),
    /^[0-9a-f]{12} \d{4}-\d\d-\d\d Test Author: Add the lexer\n$/,
    "Sourcebot's list_commits arguments",
  );
  t.match(
    text(await client.callTool({ name: 'blame_file', arguments: { repo: name, path: 'docs/guide.md' } })),
    /^1-2: [0-9a-f]{12} \d{4}-\d\d-\d\d Test Author: initial\n3: [0-9a-f]{12} \d{4}-\d\d-\d\d Test Author: Add the lexer\n$/,
  );
  t.equal(text(await client.callTool({ name: 'list_commit_authors', arguments: { repo: name } })), '2 Test Author <author@example.com>\n');
  t.equal(text(await client.callTool({ name: 'list_connections', arguments: {} })), '1 github (github)\n');
  const unknown = (await client.callTool({ name: 'list_commits', arguments: { repo: name, perpage: 1 } })) as TextResult;
  t.equal(unknown.isError, true, 'an unknown argument is an error');
  t.match(text(unknown), /perpage/, 'naming it');
  t.match(
    text(await client.callTool({ name: 'list_commits', arguments: { repo: name } })),
    /^[0-9a-f]{12} \d{4}-\d\d-\d\d Test Author: Add the lexer\n[0-9a-f]{12} .*: initial\n$/,
  );
  t.match(
    text(await client.callTool({ name: 'get_diff', arguments: { repo: name, base: repo.first, head: repo.second, path: 'src' } })),
    /^--- \/dev\/null\n\+\+\+ src\/lexer\.c\n@@ -0,0 \+1,1 @@\n\+int next_token/,
  );
  t.match(
    text(await client.callTool({ name: 'find_symbol_definitions', arguments: { symbol: 'parse_expression' } })),
    /^example\.com\/acme\/widgets src\/parser\.c:3: int parse_expression/,
  );
  t.equal(
    text(await client.callTool({ name: 'find_symbol_references', arguments: { symbol: 'next_token', repo: name } }))
      .split('\n')
      .filter(Boolean).length,
    2,
  );

  const failed = (await client.callTool({ name: 'read_file', arguments: { repo: 'example.com/acme/secret', path: 'README.md' } })) as TextResult;
  t.equal(failed.isError, true, 'a failing tool is a result with isError');
  t.match(text(failed), /^NOT_FOUND: repository "example\.com\/acme\/secret" not found$/);

  t.equal((await daemon.fetch('/api/mcp')).status, 405, 'GET is 405');
  await transport.terminateSession();
  const afterEnd = await daemon.fetch('/api/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId ?? 'gone' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  t.equal(afterEnd.status, 404, 'an ended session is gone');
});

t.test('MCP sessions are bounded: per caller, in all, and by idle time', async (t) => {
  const repo = fixtureRepository(t);
  let users: Record<string, SeededUser> = {};
  const daemon = await startDaemon(
    t,
    {
      repos: [repo.config],
      auth: { anonymousAccess: true },
      index: { ctagsCommand: '' },
      server: { mcpSessionsPerCaller: 2, mcpSessions: 3, mcpSessionIdleSeconds: 1 },
    },
    {
      env: LICENSE_ENV,
      prepare: async (configFile) =>
        void (users = await seedUsers(configFile, [
          { email: 'a@example.com', role: 'member' },
          { email: 'b@example.com', role: 'member' },
        ])),
    },
  );
  const initialize = (headers: Record<string, string> = {}) =>
    daemon.fetch('/api/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bounds', version: '1' } },
      }),
    });
  const opened: string[] = [];
  for (let i = 0; i < 2; i++) {
    const response = await initialize();
    t.equal(response.status, 200, `anonymous session ${i + 1} opens`);
    opened.push(response.headers.get('mcp-session-id')!);
  }
  await expectError(t, await initialize(), 429, 'RATE_LIMITED', /server\.mcpSessionsPerCaller/);
  t.equal((await initialize(bearer(users['a@example.com']!.key))).status, 200, "another caller's session opens: three in all");
  await expectError(t, await initialize(bearer(users['b@example.com']!.key)), 503, 'SERVICE_UNAVAILABLE', /server\.mcpSessions\b/);

  // Idle sessions close: wait past the idle time (a wait, not a speed assertion).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await initialize(bearer(users['b@example.com']!.key))).status, 200, 'once the idle sessions closed, a new one opens');
  const stale = await daemon.fetch('/api/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'mcp-session-id': opened[0]! },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  t.equal(stale.status, 404, 'an expired session is gone');
});

t.test(
  'MCP: list_branches (GET /api/branches) newest first with isDefault and isIndexed; a repository that does not exist is not found, not "No matches."',
  async (t) => {
    const repo = fixtureRepository(t);
    const hidden = { ...fixtureRepository(t, 'example.com/acme/secret').config, public: false };
    const commitOn = (branch: string, date: string) => {
      git(repo.root, 'checkout', '-q', '-b', branch, 'main');
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', branch], {
        cwd: repo.root,
        env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
      });
      git(repo.root, 'checkout', '-q', 'main');
    };
    commitOn('stale', '2001-01-01T00:00:00Z');
    commitOn('fresh', '2090-01-01T00:00:00Z');
    const daemon = await startDaemon(t, {
      repos: [{ ...repo.config, branches: ['fresh'] }, hidden],
      auth: { anonymousAccess: true },
      index: { ctagsCommand: '' },
    });
    const client = new Client({ name: 'trawl-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/api/mcp`)));
    t.teardown(() => client.close());

    const listed = text(await client.callTool({ name: 'list_branches', arguments: { repo: repo.config.name } }));
    t.match(
      listed,
      /^3 branches, newest first\nfresh {2}2090-01-01T00:00:00\.000Z {2}\[isIndexed\]\nmain {2}[^\n]+ {2}\[isDefault, isIndexed\]\nstale {2}2001-01-01T00:00:00\.000Z\n$/,
    );
    t.match(
      text(await client.callTool({ name: 'list_branches', arguments: { repo: repo.config.name, perPage: 1, page: 2 } })),
      /^3 branches, newest first\nmain {2}[^\n]+ {2}\[isDefault, isIndexed\]\n\n\[1 more: ask for page 3\.\]$/,
      'a page of them says how many are left',
    );

    // The tool's route: GET /api/branches, paged as every listing is.
    const branches = `/api/branches?repo=${encodeURIComponent(repo.config.name)}`;
    const first = await daemon.fetch(`${branches}&perPage=2`);
    t.equal(first.status, 200);
    t.equal(first.headers.get('x-total-count'), '3');
    t.match(first.headers.get('link'), /[?&]perPage=2&page=2>; rel="next"/);
    t.same(await first.json(), [
      { name: 'fresh', committedAt: '2090-01-01T00:00:00.000Z', isDefault: false, isIndexed: true },
      {
        name: 'main',
        committedAt: ((await (await daemon.fetch(`${branches}&query=MAI`)).json()) as { committedAt: string }[])[0]!.committedAt,
        isDefault: true,
        isIndexed: true,
      },
    ]);
    t.same(
      ((await (await daemon.fetch(`${branches}&query=ale`)).json()) as { name: string }[]).map((branch) => branch.name),
      ['stale'],
      'query: a substring of the name, any case',
    );
    for (const [query, status, errorCode] of [
      [`repo=${encodeURIComponent(hidden.name)}`, 404, 'NOT_FOUND'],
      ['repo=example.com%2Facme%2Fwidgetz', 404, 'NOT_FOUND'],
      ['query=main', 400, 'MISSING_REQUIRED_QUERY_PARAMETER'],
      [`repo=${encodeURIComponent(repo.config.name)}&perPage=1000`, 400, 'INVALID_QUERY_PARAMS'],
      [`repo=${encodeURIComponent(repo.config.name)}&page=0`, 400, 'INVALID_QUERY_PARAMS'],
    ] as const) {
      const reply = await daemon.fetch(`/api/branches?${query}`);
      t.equal(reply.status, status, query);
      t.match(await reply.json(), { statusCode: status, errorCode }, query);
    }

    for (const [name, args] of [
      ['grep', { pattern: 'parse_expression' }],
      ['glob', { pattern: '**/*.c' }],
      ['search_code', { query: 'parse_expression' }],
    ] as const) {
      for (const missing of ['example.com/acme/widgetz', 'example.com/acme/secret']) {
        const result = (await client.callTool({ name, arguments: { ...args, repo: missing } })) as TextResult;
        t.ok(result.isError, `${name} in ${missing}: an error`);
        t.equal(text(result), `NOT_FOUND: repository "${missing}" not found`, `${name} in ${missing}: says the repository is not found`);
      }
      const found = (await client.callTool({ name, arguments: { ...args, repo: repo.config.name } })) as TextResult;
      t.notOk(found.isError, `${name} in the repository that exists answers`);
    }
  },
);
