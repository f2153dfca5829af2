import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import NodeGit from 'nodegit';
import { diffCommits, MAX_DIFF_SOURCE_BYTES } from '../../src/git/diff.js';
import { MAX_BLOB_BYTES } from '../../src/git/blob.js';
import { treeOf } from '../../src/git/tree.js';
import { startDaemon } from '../helpers/daemon.js';
import { commitAll, loseObject, makeRepository, writeFiles } from '../helpers/git.js';
import { expectError } from '../helpers/schema.js';
import { tempDir } from '../helpers/tmp.js';

// Tree, source and diff read git on behalf of anonymous callers: each is bounded in time (the search
// budget, or the client gone) and in the bytes it reads, and past a bound answers 503 naming what to narrow.
t.test('git reads past their bounds are refused, and the daemon keeps serving', async (t) => {
  const root = path.join(tempDir(t, 'trawl-git-limits-'), 'repo');
  const first = makeRepository(root, { 'src/small.c': 'int small;\n', 'docs/a/b/c.md': 'deep\n' });
  const big = Buffer.alloc(Math.max(MAX_BLOB_BYTES, MAX_DIFF_SOURCE_BYTES) + 1, 'generated line\n');
  writeFiles(root, { 'data/big.txt': big, 'src/small.c': 'int small = 2;\n' });
  const second = commitAll(root, 'add a big file');
  const daemon = await startDaemon(t, { repos: [{ name: 'example.com/acme/limits', path: root, public: true }], auth: { anonymousAccess: true } });
  const repo = 'example.com/acme/limits';

  const tooLargeFile = await daemon.fetch(`/api/source?repo=${repo}&path=data/big.txt`);
  t.equal(tooLargeFile.headers.get('retry-after'), null, 'no point retrying a size');
  await expectError(t, tooLargeFile, 503, 'SERVICE_UNAVAILABLE', /reading data\/big\.txt ran past 67108864 bytes/);
  await expectError(
    t,
    await daemon.fetch(`/api/diff?repo=${repo}&base=${first}&head=${second}`),
    503,
    'SERVICE_UNAVAILABLE',
    /the diff ran past 67108864 bytes; narrow it with `path`/,
  );

  const narrowed = await daemon.fetch(`/api/diff?repo=${repo}&base=${first}&head=${second}&path=src`);
  t.equal(narrowed.status, 200, 'narrowed to a path, the same diff answers');
  t.same(
    ((await narrowed.json()) as { files: { newPath: string }[] }).files.map((file) => file.newPath),
    ['src/small.c'],
  );
  t.equal((await daemon.fetch(`/api/source?repo=${repo}&path=src/small.c`)).status, 200);
  t.equal((await daemon.fetch('/api/health')).status, 200);

  // The time bound: a read whose limit has fired stops at its next step.
  const repository = await NodeGit.Repository.open(root);
  const head = await repository.getCommit(second);
  const fired = { signal: AbortSignal.abort(), budgetMs: 10_000 };
  await t.rejects(diffCommits(repository, await repository.getCommit(first), head, 'src', fired), {
    name: 'GitReadStoppedError',
    bound: 'time',
    message: /the diff ran past the 10000 ms time budget/,
  });
  await t.rejects(treeOf(head, ['docs/a/b'], fired), { name: 'GitReadStoppedError', bound: 'time' });
  t.ok((await treeOf(head, ['docs/a/b'], { signal: new AbortController().signal, budgetMs: 10_000 })).children.length > 0, 'unfired, the same listing answers');
});

t.test('a commit walk or a branch listing past the time budget is stopped: 503, the daemon keeps serving', async (t) => {
  // 5,000 commits in one fast-import: walking them all takes tens of milliseconds at the least, the budget here is 1 ms.
  const root = path.join(tempDir(t, 'trawl-long-history-'), 'repo');
  execFileSync('git', ['init', '-q', root]);
  let stream = '';
  for (let i = 0; i < 5_000; i++) {
    const message = `change ${i}\n`;
    stream += `commit refs/heads/main\ncommitter A <a@example.com> ${1_600_000_000 + i} +0000\ndata ${message.length}\n${message}`;
    stream += `M 644 inline file${i % 50}.txt\ndata ${String(i).length + 1}\n${i}\n\n`;
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: root, input: stream });
  execFileSync('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], { cwd: root });
  execFileSync('git', ['reset', '-q', '--hard'], { cwd: root });
  // And 5,000 branches: listing them reads 5,000 commits.
  const refs = Array.from({ length: 5_000 }, (_, i) => `create refs/heads/topic-${i} HEAD\n`).join('');
  execFileSync('git', ['update-ref', '--stdin'], { cwd: root, input: refs });
  const daemon = await startDaemon(t, {
    repos: [{ name: 'example.com/acme/history', path: root, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
    server: { searchTimeBudgetMs: 1 },
  });
  // A message no commit has: the walk would go through all 5,000.
  const stopped = await daemon.fetch('/api/commits?repo=example.com/acme/history&query=no+such+message');
  t.equal(stopped.headers.get('retry-after'), '1');
  await expectError(t, stopped, 503, 'SERVICE_UNAVAILABLE', /walking the history ran past the 1 ms time budget/);
  const branches = await daemon.fetch('/api/branches?repo=example.com/acme/history');
  await expectError(t, branches, 503, 'SERVICE_UNAVAILABLE', /the branch listing ran past the 1 ms time budget.*narrow it with `query`/);
  t.equal((await daemon.fetch('/api/health')).status, 200);
});

t.test('a git object missing from the repository is a 500 naming it, not a 404 or an empty answer; the daemon keeps serving', async (t) => {
  const root = path.join(tempDir(t, 'trawl-damaged-'), 'repo');
  const first = makeRepository(root, { 'a.txt': 'one\n', 'deep/d.txt': 'deep\n', 'ok.txt': 'fine\n' });
  writeFiles(root, { 'a.txt': 'one\ntwo\n' });
  const second = commitAll(root, 'change a.txt');
  const daemon = await startDaemon(t, {
    repos: [{ name: 'example.com/acme/damaged', path: root, public: true }],
    auth: { anonymousAccess: true },
    index: { ctagsCommand: '' },
  });
  const repo = 'example.com/acme/damaged';
  // Lost after indexing, as a disk fault or a bad repack would lose them: a file's blob and a directory's tree.
  const blob = loseObject(root, 'HEAD:a.txt');
  const tree = loseObject(root, 'HEAD:deep');
  const names = (oid: string) => new RegExp(`^git object ${oid} is missing from this server's copy of the repository`);

  await expectError(t, await daemon.fetch(`/api/source?repo=${repo}&path=a.txt`), 500, 'UNEXPECTED_ERROR', names(blob), 'a file whose blob is lost');
  await expectError(
    t,
    await daemon.fetch(`/api/source?repo=${repo}&path=deep/d.txt`),
    500,
    'UNEXPECTED_ERROR',
    names(tree),
    'a file under a lost tree is not reported missing',
  );
  await expectError(
    t,
    await daemon.fetch(`/api/source?repo=${repo}&path=nowhere/d.txt`),
    404,
    'FILE_NOT_FOUND',
    undefined,
    'a path that is not there is still a 404',
  );
  await expectError(t, await daemon.fetch(`/api/blame?repo=${repo}&path=a.txt`), 500, 'UNEXPECTED_ERROR', names(blob), 'the blame of that file');
  await expectError(
    t,
    await daemon.post('/api/tree', { repoName: repo, revisionName: 'HEAD', paths: ['deep'] }),
    500,
    'UNEXPECTED_ERROR',
    names(tree),
    'listing the lost tree',
  );
  await expectError(
    t,
    await daemon.fetch(`/api/commits?repo=${repo}&path=deep/d.txt`),
    500,
    'UNEXPECTED_ERROR',
    names(tree),
    'a history through the lost tree is not empty',
  );
  await expectError(
    t,
    await daemon.fetch(`/api/diff?repo=${repo}&base=${first}&head=${second}&path=a.txt`),
    500,
    'UNEXPECTED_ERROR',
    names(blob),
    'a diff of the lost blob',
  );
  await daemon.waitForLog(new RegExp(`"level":50,.*"route":"/api/source".*git object ${blob} is missing`), 'the fault logged at error level');

  t.equal((await daemon.fetch(`/api/source?repo=${repo}&path=ok.txt`)).status, 200, 'what is intact is served');
  t.equal((await daemon.fetch(`/api/commits?repo=${repo}&path=ok.txt`)).status, 200);
  t.equal((await daemon.fetch('/api/health')).status, 200);
});
