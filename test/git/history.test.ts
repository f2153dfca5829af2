import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import NodeGit from 'nodegit';
import { GitReadStoppedError } from '../../src/git/errors.js';
import { listAuthors, listCommits } from '../../src/git/history.js';
import { git } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

const NO_LIMIT = { signal: new AbortController().signal, budgetMs: 10_000 };

/** Makes `count` empty commits, every one at the same second, as a scripted import or a fast rebase makes them. */
function sameSecondHistory(root: string, count: number, author = 'Test Author <author@example.com>'): void {
  const [, name, email] = /^(.*) <(.*)>$/.exec(author)!;
  const env = {
    ...process.env,
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: email,
  };
  for (let i = 0; i < count; i++) {
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', `step ${i}`], { cwd: root, env });
  }
}

t.test("commits come in git log's order, children before parents when their times tie", async (t) => {
  const root = path.join(tempDir(t, 'trawl-history-'), 'repo');
  git(path.dirname(root), 'init', '-q', root);
  sameSecondHistory(root, 41);
  sameSecondHistory(root, 3, 'Ann Smith <ann@example.com>');
  const repository = await NodeGit.Repository.open(root);
  const head = await repository.getHeadCommit();
  const { total, commits } = await listCommits(repository, head, {}, { number: 1, size: 100 }, NO_LIMIT);
  t.equal(total, 44);
  t.same(commits.at(-1)!.message, 'step 0');
  t.same(
    commits.map((commit) => commit.hash),
    git(root, 'log', '--format=%H').trim().split('\n'),
    'the same order as git log',
  );
  const page = await listCommits(repository, head, {}, { number: 3, size: 10 }, NO_LIMIT);
  t.same(
    page.commits.map((commit) => commit.hash),
    git(root, 'log', '--format=%H', '--skip=20', '-n', '10').trim().split('\n'),
    'pages cut the same order',
  );

  const authors = await listAuthors(repository, head, {}, { number: 1, size: 10 }, NO_LIMIT);
  t.same(
    authors,
    {
      total: 2,
      authors: [
        { name: 'Test Author', email: 'author@example.com', commitCount: 41 },
        { name: 'Ann Smith', email: 'ann@example.com', commitCount: 3 },
      ],
    },
    'as git shortlog -sne counts them',
  );
  const shortlog = git(root, 'shortlog', '-sne', 'HEAD')
    .trim()
    .split('\n')
    .map((line) => line.trim().split('\t')[0]);
  t.same(
    authors.authors.map((author) => String(author.commitCount)),
    shortlog,
    "shortlog's counts",
  );
});

t.test('a walk stops when its signal fires (the time budget, or the client gone)', async (t) => {
  const root = path.join(tempDir(t, 'trawl-history-'), 'repo');
  git(path.dirname(root), 'init', '-q', root);
  sameSecondHistory(root, 5);
  const repository = await NodeGit.Repository.open(root);
  const head = await repository.getHeadCommit();
  const stopped = new AbortController();
  stopped.abort();
  await t.rejects(listCommits(repository, head, {}, { number: 1, size: 10 }, { signal: stopped.signal, budgetMs: 10_000 }), GitReadStoppedError);
  await t.rejects(listAuthors(repository, head, {}, { number: 1, size: 10 }, { signal: stopped.signal, budgetMs: 10_000 }), /10000 ms time budget/);
});
