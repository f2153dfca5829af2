import t from 'tap';
import path from 'node:path';
import { blameFile, BlameError, parseIncremental, unquotePath } from '../../src/git/blame.js';
import { ProcessSlots } from '../../src/git/process-slots.js';
import { commitAll, git, makeRepository, writeFiles } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

/** A deadline far away that never fires in these tests. */
const UNLIMITED = { signal: new AbortController().signal, budgetMs: 60_000 };
/** Slots enough that no blame here waits. */
const SLOTS = { slots: new ProcessSlots(4, 4), caller: 'test' };

t.test('blame ranges give every line the commit git blame gives it, across a rename', async (t) => {
  const root = path.join(tempDir(t, 'trawl-blame-'), 'repo');
  const first = makeRepository(root, { 'old name.c': Array.from({ length: 30 }, (_, i) => `line ${i}\n`).join('') });
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i}\n`);
  lines[4] = 'changed 4\n';
  lines.splice(10, 0, 'inserted a\n', 'inserted b\n');
  writeFiles(root, { 'old name.c': lines.join('') });
  const second = commitAll(root, 'Change and insert');
  git(root, 'mv', 'old name.c', 'new name.c');
  const renamed = commitAll(root, 'Rename');
  writeFiles(root, { 'new name.c': lines.join('') + 'appended\n' });
  const third = commitAll(root, 'Append\n\nwith a body');

  const blame = await blameFile(root, third, 'new name.c', UNLIMITED, SLOTS);
  const expected = git(root, 'blame', '--line-porcelain', third, '--', 'new name.c')
    .split('\n')
    .filter((line) => /^[0-9a-f]{40} /.test(line))
    .map((line) => line.slice(0, 40));
  const perLine = blame.ranges.flatMap((range) => Array.from({ length: range.lineCount }, () => range.hash));
  t.same(perLine, expected, 'line by line as git blame --line-porcelain');
  t.same(
    blame.ranges.map((range) => [range.startLine, range.lineCount, range.hash, range.path]),
    [
      [1, 4, first, 'old name.c'],
      [5, 1, second, 'old name.c'],
      [6, 5, first, 'old name.c'],
      [11, 2, second, 'old name.c'],
      [13, 20, first, 'old name.c'],
      [33, 1, third, 'new name.c'],
    ],
    'contiguous ranges, adjacent ones of one commit merged, paths as they were at each commit',
  );
  t.same(blame.commits[third], {
    hash: third,
    date: blame.commits[third]!.date,
    message: 'Append',
    authorName: 'Test Author',
    authorEmail: 'author@example.com',
    previous: { hash: renamed, path: 'new name.c' },
  });
  t.notOk('previous' in blame.commits[first]!, 'the first commit has no previous');
  t.match(blame.commits[first]!.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
});

t.test('git blame failures are BlameErrors that name no server path', async (t) => {
  const root = path.join(tempDir(t, 'trawl-blame-'), 'repo');
  const head = makeRepository(root, { 'a.txt': 'a\n' });
  const missing = await blameFile(root, head, 'b.txt', UNLIMITED, SLOTS).catch((error: unknown) => error);
  t.ok(missing instanceof BlameError);
  t.notMatch((missing as Error).message, root, 'the message does not name the repository path');
  t.match((missing as BlameError).detail, /no such path/, 'git said why, for the log');
  const cancelled = new AbortController();
  cancelled.abort();
  await t.rejects(
    blameFile(root, head, 'a.txt', { signal: cancelled.signal, budgetMs: 60_000 }, SLOTS),
    { name: 'GitReadStoppedError', bound: 'time' },
    'a cancelled request stops git',
  );
});

t.test('incremental output with quoted paths parses; garbage is refused', async (t) => {
  const hash = 'a'.repeat(40);
  const parsed = parseIncremental(`${hash} 1 1 2\nauthor A\nauthor-mail <a@x>\nauthor-time 0\nsummary s\nfilename "tab\\there\\303\\251.c"\n`);
  t.same(parsed.ranges, [{ hash, path: 'tab\there\u00e9.c', startLine: 1, lineCount: 2 }]);
  t.same(parsed.commits[hash], { hash, date: '1970-01-01T00:00:00.000Z', message: 's', authorName: 'A', authorEmail: 'a@x' });
  t.equal(unquotePath('plain name.c'), 'plain name.c');
  t.equal(unquotePath('"q\\"uote\\\\d"'), 'q"uote\\d');
  t.throws(() => parseIncremental('not blame output\n'), BlameError);
});
