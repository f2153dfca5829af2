import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { CommitDetail, CommitList, DiffResponse } from '../../src/api/git-schemas.js';
import { SourceResponse, TreeResponse } from '../../src/api/schemas.js';
import { commitAll, git, makeRepository, writeFiles } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';
import { startDaemon } from '../helpers/daemon.js';
import { assertSchema, expectError } from '../helpers/schema.js';
import { fixtureRepository } from './fixture.js';

const names = (node: { children: { name: string }[] }) => node.children.map((child) => child.name);

t.test('git endpoints', async (t) => {
  const repo = fixtureRepository(t);
  const hidden = { ...fixtureRepository(t, 'example.com/acme/secret').config, public: false };
  const daemon = await startDaemon(t, { repos: [repo.config, hidden], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
  const name = 'example.com/acme/widgets';

  t.test('POST /api/tree', async (t) => {
    const response = await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD', paths: ['src', '/docs/'] });
    t.equal(response.status, 200);
    const { tree } = await response.json();
    assertSchema(t, TreeResponse, { tree }, 'tree response');
    t.same(names(tree), ['assets', 'docs', 'src', 'README.md'], 'directories first, then files');
    const src = tree.children.find((child: { name: string }) => child.name === 'src');
    t.same(names(src), ['lexer.c', 'parser.c', 'parser.h']);
    t.equal(src.children[0].path, 'src/lexer.c');
    t.same(names(tree.children.find((child: { name: string }) => child.name === 'assets')), [], 'unrequested directories are not expanded');
    const old = await (await daemon.post('/api/tree', { repoName: name, revisionName: repo.first, paths: ['src'] })).json();
    t.same(names(old.tree.children.find((child: { name: string }) => child.name === 'src')), ['parser.c', 'parser.h'], 'at an older revision');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD', paths: ['README.md'] }), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD', paths: ['../etc'] }), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD', paths: ['src\u0000'] }), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: '--output=/tmp/x', paths: [] }), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD..HEAD~1', paths: [] }), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'no-such-branch', paths: [] }), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.post('/api/tree', { repoName: 'example.com/acme/secret', revisionName: 'HEAD', paths: [] }), 404, 'NOT_FOUND');
    await expectError(t, await daemon.post('/api/tree', { repoName: 'nope', revisionName: 'HEAD', paths: [] }), 404, 'NOT_FOUND');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, paths: [] }), 400, 'INVALID_REQUEST_BODY');
    await expectError(t, await daemon.post('/api/tree', { repoName: name, revisionName: 'HEAD', paths: Array(1001).fill('src') }), 400, 'INVALID_REQUEST_BODY');
  });

  t.test('GET /api/source', async (t) => {
    const response = await daemon.fetch(`/api/source?${q({ repo: name, path: 'src/parser.h' })}`);
    t.equal(response.status, 200);
    const body = await response.json();
    assertSchema(t, SourceResponse, body, 'source response');
    t.equal(body.source, 'int parse_expression(const char *text);\n');
    t.equal(body.encoding, 'utf-8');
    t.equal(body.language, 'C');
    t.equal(body.repoCodeHostType, 'github');
    t.match(body.externalWebUrl, /^https:\/\/example\.com\/acme\/widgets\/blob\/[0-9a-f]{40}\/src\/parser\.h$/);
    t.match(body.blobSha, /^[0-9a-f]{40}$/);
    const binary = await (await daemon.fetch(`/api/source?${q({ repo: name, path: 'assets/logo.bin' })}`)).json();
    t.equal(binary.encoding, 'base64');
    t.same(Buffer.from(binary.source, 'base64'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03]));
    const old = await (await daemon.fetch(`/api/source?${q({ repo: name, path: 'docs/guide.md', ref: repo.first })}`)).json();
    t.equal(old.source, '# Guide\n\nCall parse_expression to parse.\n', 'at an older revision');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: name, path: 'src/../../../etc/passwd' })}`), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: name, path: 'missing.c' })}`), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: name, path: 'src' })}`), 404, 'FILE_NOT_FOUND');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: name, path: 'src/parser.h', ref: '-x' })}`), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: name })}`), 400, 'MISSING_REQUIRED_QUERY_PARAMETER');
    await expectError(t, await daemon.fetch(`/api/source?${q({ repo: 'example.com/acme/secret', path: 'src/parser.h' })}`), 404, 'NOT_FOUND');
  });

  t.test('GET /api/commits and /api/commit', async (t) => {
    const response = await daemon.fetch(`/api/commits?${q({ repo: name })}`);
    t.equal(response.status, 200);
    t.equal(response.headers.get('x-total-count'), '2');
    const commits = await response.json();
    assertSchema(t, CommitList, commits, 'commit list');
    t.same(
      commits.map((commit: { hash: string }) => commit.hash),
      [repo.second, repo.first],
      'newest first',
    );
    t.equal(commits[0].message, 'Add the lexer');
    t.equal(commits[0].body, 'It reads tokens.');
    t.same(
      commits.map((commit: { refs: string }) => commit.refs),
      git(repo.root, 'log', '--format=%D').replace(/\n$/, '').split('\n'),
      "refs are git's %D decoration",
    );
    t.equal(commits[0].refs, 'HEAD -> main, tag: v1.0');
    t.same(
      [commits[0].author_name, commits[0].author_email],
      [commits[0].authorName, commits[0].authorEmail],
      'the snake-case author fields of older Sourcebot clients',
    );
    const paged = await daemon.fetch(`/api/commits?${q({ repo: name, perPage: '1', page: '2' })}`);
    t.same(
      (await paged.json()).map((commit: { hash: string }) => commit.hash),
      [repo.first],
    );
    const link = paged.headers.get('link')!;
    t.match(link, /<http:\/\/127\.0\.0\.1:\d+\/api\/commits\?[^>]*page=1[^>]*>; rel="first"/);
    t.match(link, /rel="prev"/);
    t.notMatch(link, /rel="next"/);
    t.match(link, /page=2[^>]*>; rel="last"/);
    const byPath = await (await daemon.fetch(`/api/commits?${q({ repo: name, path: 'src/lexer.c' })}`)).json();
    t.same(
      byPath.map((commit: { hash: string }) => commit.hash),
      [repo.second],
      'only commits that change the path',
    );
    const byMessage = await (await daemon.fetch(`/api/commits?${q({ repo: name, query: 'LEXER' })}`)).json();
    t.equal(byMessage.length, 1);
    const byAuthor = await (await daemon.fetch(`/api/commits?${q({ repo: name, author: 'test author <AUTHOR@example' })}`)).json();
    t.equal(byAuthor.length, commits.length, 'the author as `Name <email>`, case-insensitive');
    t.same(await (await daemon.fetch(`/api/commits?${q({ repo: name, query: 'LEXER', author: 'nobody' })}`)).json(), []);
    // RE2 spends 100 ms and more on these: the search workers compile them, not the front end.
    t.same(await (await daemon.fetch(`/api/commits?${q({ repo: name, query: '[\\p{L}\\p{N}]{300}' })}`)).json(), [], 'a costly pattern RE2 accepts');
    await expectError(
      t,
      await daemon.fetch(`/api/commits?${q({ repo: name, query: '[\\p{L}\\p{N}]{1000}' })}`),
      400,
      'INVALID_QUERY_PARAMS',
      /`query`: invalid regular expression .*too large/,
    );
    await expectError(
      t,
      await daemon.fetch(`/api/commits?${q({ repo: name, author: 'a(b' })}`),
      400,
      'INVALID_QUERY_PARAMS',
      /`author`: invalid regular expression/,
    );
    const future = await (await daemon.fetch(`/api/commits?${q({ repo: name, since: '2999-01-01T00:00:00Z' })}`)).json();
    t.same(future, []);
    await expectError(t, await daemon.fetch(`/api/commits?${q({ repo: name, since: 'yesterday-ish' })}`), 400, 'INVALID_QUERY_PARAMS');
    await expectError(t, await daemon.fetch(`/api/commits?${q({ repo: name, perPage: '1000' })}`), 400, 'INVALID_QUERY_PARAMS');
    await expectError(t, await daemon.fetch(`/api/commits?${q({ repo: name, page: 'two' })}`), 400, 'INVALID_QUERY_PARAMS');
    await expectError(t, await daemon.fetch('/api/commits'), 400, 'MISSING_REQUIRED_QUERY_PARAMETER');

    const detail = await (await daemon.fetch(`/api/commit?${q({ repo: name, ref: 'v1.0' })}`)).json();
    assertSchema(t, CommitDetail, detail, 'commit detail');
    t.equal(detail.hash, repo.second);
    t.same(detail.parents, [repo.first]);
    await expectError(t, await daemon.fetch(`/api/commit?${q({ repo: name, ref: 'f'.repeat(40) })}`), 404, 'NOT_FOUND', /does not resolve/);
    await expectError(t, await daemon.fetch(`/api/commit?${q({ repo: name, ref: '-x' })}`), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.fetch(`/api/commit?${q({ repo: 'nope', ref: 'HEAD' })}`), 404, 'NOT_FOUND');
  });

  t.test('GET /api/diff', async (t) => {
    const response = await daemon.fetch(`/api/diff?${q({ repo: name, base: repo.first, head: repo.second })}`);
    t.equal(response.status, 200);
    const body = await response.json();
    assertSchema(t, DiffResponse, body, 'diff response');
    const byPath = new Map(body.files.map((file: { newPath: string }) => [file.newPath, file]));
    const added = byPath.get('src/lexer.c') as { oldPath: null; hunks: { newRange: { start: number; lines: number }; body: string }[] };
    t.equal(added.oldPath, null, 'an added file has no old path');
    t.same(added.hunks[0]!.newRange, { start: 1, lines: 1 });
    t.equal(added.hunks[0]!.body, '+int next_token(void) { return 0; }\n');
    const changed = byPath.get('docs/guide.md') as { hunks: { body: string }[] };
    t.match(changed.hunks[0]!.body, /^-Call parse_expression to parse\.\n\+Call parse_expression to parse\. Then next_token\.\n$/m);
    const onlyDocs = await (await daemon.fetch(`/api/diff?${q({ repo: name, base: repo.first, head: repo.second, path: 'docs' })}`)).json();
    t.same(
      onlyDocs.files.map((file: { newPath: string }) => file.newPath),
      ['docs/guide.md'],
      'limited to a path',
    );
    await expectError(t, await daemon.fetch(`/api/diff?${q({ repo: name, base: '-p', head: 'HEAD' })}`), 400, 'INVALID_GIT_REF');
    const relative = await (await daemon.fetch(`/api/diff?${q({ repo: name, base: 'HEAD~1', head: 'main' })}`)).json();
    t.same(relative, body, 'revision suffixes resolve: HEAD~1..main is the same diff');
    await expectError(t, await daemon.fetch(`/api/diff?${q({ repo: name, base: 'HEAD~9', head: 'HEAD' })}`), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.fetch(`/api/diff?${q({ repo: name, base: 'HEAD README.md', head: 'HEAD' })}`), 400, 'INVALID_GIT_REF');
    await expectError(t, await daemon.fetch(`/api/diff?${q({ repo: name, base: 'HEAD' })}`), 400, 'MISSING_REQUIRED_QUERY_PARAMETER');
  });
});

t.test('a repository broken on disk is an UNEXPECTED_ERROR with a request id; the daemon keeps serving', async (t) => {
  const repo = fixtureRepository(t);
  const daemon = await startDaemon(t, { repos: [repo.config], auth: { anonymousAccess: true }, index: { ctagsCommand: '' } });
  // The index keeps serving searches; the git endpoints need the repository itself.
  fs.rmSync(path.join(repo.root, '.git', 'objects'), { recursive: true, force: true });
  fs.rmSync(path.join(repo.root, '.git', 'refs'), { recursive: true, force: true });
  const response = await daemon.fetch(`/api/source?repo=${encodeURIComponent(repo.config.name)}&path=README.md`, {
    headers: { 'X-Request-Id': 'broken-repo-1' },
  });
  t.equal(response.status, 500);
  const body = await response.json();
  t.same(body, { statusCode: 500, errorCode: 'UNEXPECTED_ERROR', message: 'unexpected error (request id broken-repo-1)' }, 'no internals leak');
  await daemon.waitForLog(/"requestId":"broken-repo-1".*"msg":"unexpected error"/, 'the error logged with the request id');
  t.pass('logged with the request id');
  t.equal((await daemon.post('/api/search', { query: 'parse_expression', matches: 5 })).status, 200, 'searches still work');
});

t.test('a symbolic link is served as its target text, never followed; a submodule is not a file', async (t) => {
  const root = path.join(tempDir(t), 'repo');
  makeRepository(root, { 'README.md': 'links\n' });
  fs.symlinkSync('../../../../etc/passwd', path.join(root, 'up-link'));
  fs.symlinkSync('README.md', path.join(root, 'readme-link'));
  commitAll(root, 'links');
  // A gitlink with no directory on disk: committed from the index alone (`add -A` would drop it).
  git(root, 'update-index', '--add', '--cacheinfo', '160000,0123456789abcdef0123456789abcdef01234567,module');
  git(root, 'commit', '-q', '-m', 'a submodule');
  const daemon = await startDaemon(t, {
    repos: [{ name: 'example.com/acme/links', path: root, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const source = (file: string) => daemon.fetch(`/api/source?repo=example.com/acme/links&path=${file}`);
  const up = await source('up-link');
  t.equal(up.status, 200);
  const body = await up.json();
  assertSchema(t, SourceResponse, body, 'source response');
  t.equal(body.source, '../../../../etc/passwd', 'the target as text, as `git show` gives it');
  t.equal((await (await source('readme-link')).json()).source, 'README.md', 'a link inside the repository is not followed either');
  const blame = await daemon.fetch('/api/blame?repo=example.com/acme/links&path=up-link');
  t.equal(blame.status, 200, 'blamed as its one line');
  await expectError(t, await source('module'), 404, 'FILE_NOT_FOUND', /is not a file at this revision/);
  const { tree } = await (await daemon.post('/api/tree', { repoName: 'example.com/acme/links', revisionName: 'HEAD', paths: [] })).json();
  t.same(
    tree.children.map((child: { name: string; type: string }) => `${child.name} ${child.type}`).sort(),
    ['README.md blob', 'module commit', 'readme-link blob', 'up-link blob'],
    'the tree lists the links as files, the submodule as a commit',
  );
});

t.test('a plain-directory repository: its tree and files from disk, as the indexer reads them, one revision HEAD', async (t) => {
  const plain = path.join(tempDir(t, 'trawl-plain-'), 'notes');
  writeFiles(plain, {
    'todo.md': '# Todo\n',
    'src/notes.c': 'int notes(void) { return 0; }\n',
    'node_modules/skip/x.js': 'skipped\n',
    '.git-like/keep.txt': 'kept\n',
  });
  fs.writeFileSync(path.join(path.dirname(plain), 'secret.txt'), 'outside\n');
  fs.symlinkSync('../secret.txt', path.join(plain, 'link.txt'));
  fs.symlinkSync('..', path.join(plain, 'up'));
  const daemon = await startDaemon(t, {
    repos: [{ name: 'local/notes', path: plain, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const tree = await (await daemon.post('/api/tree', { repoName: 'local/notes', revisionName: 'HEAD', paths: ['src'] })).json();
  t.same(
    tree.tree.children.map((node: { path: string; type: string }) => `${node.type} ${node.path}`),
    ['tree .git-like', 'tree src', 'blob todo.md'],
    'directories and regular files; no links, no skipped directories',
  );
  t.same(
    tree.tree.children[1].children.map((node: { path: string }) => node.path),
    ['src/notes.c'],
    'a requested directory expanded',
  );
  const source = await (await daemon.fetch('/api/source?repo=local/notes&path=src/notes.c')).json();
  t.match(source, { source: 'int notes(void) { return 0; }\n', encoding: 'utf-8', language: 'C', path: 'src/notes.c', repo: 'local/notes' });
  t.equal(source.blobSha, git(path.dirname(plain), 'hash-object', path.join(plain, 'src/notes.c')).trim(), "the id git would give the file's content");
  for (const [what, query] of [
    ['a link to a file outside', 'path=link.txt'],
    ['a path through a link to a directory outside', 'path=up/secret.txt'],
    ['a path with ..', 'path=src/../../secret.txt'],
    ['a skipped directory', 'path=node_modules/skip/x.js'],
    ['a directory', 'path=src'],
    ['a file that is not there', 'path=nope.md'],
  ]) {
    await expectError(t, await daemon.fetch(`/api/source?repo=local/notes&${query}`), 404, 'FILE_NOT_FOUND', undefined, what);
  }
  await expectError(
    t,
    await daemon.fetch('/api/source?repo=local/notes&path=todo.md&ref=main'),
    400,
    'INVALID_GIT_REF',
    /one revision, HEAD/,
    'a revision other than HEAD',
  );
  await expectError(
    t,
    await daemon.post('/api/tree', { repoName: 'local/notes', revisionName: 'HEAD', paths: ['up'] }),
    404,
    'FILE_NOT_FOUND',
    undefined,
    'a link is no directory to expand',
  );
});
