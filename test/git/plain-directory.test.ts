import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readInside } from '../../src/git/plain-directory.js';
import { tempDir } from '../helpers/tmp.js';

t.test('a plain directory is read only inside itself, whatever was swapped in after the walk', async (t) => {
  const base = fs.realpathSync(tempDir(t, 'trawl-read-'));
  const root = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
  fs.writeFileSync(path.join(root, 'sub', 'a.txt'), 'inside\n');
  t.equal((await readInside(root, 'sub/a.txt')).toString(), 'inside\n', 'a regular file inside is read');

  // The file swapped for a link to a file outside.
  fs.rmSync(path.join(root, 'sub', 'a.txt'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'sub', 'a.txt'));
  await t.rejects(readInside(root, 'sub/a.txt'), { code: 'ELOOP' }, 'a link in the last component is refused');

  // A directory on the way swapped for a link to a directory outside.
  fs.rmSync(path.join(root, 'sub'), { recursive: true });
  fs.symlinkSync(outside, path.join(root, 'sub'));
  await t.rejects(readInside(root, 'sub/secret.txt'), /outside the repository/, 'a link among the directories is refused');

  // A FIFO (or a device) in a file's place: refused at once, not read forever.
  fs.rmSync(path.join(root, 'sub'));
  fs.mkdirSync(path.join(root, 'sub'));
  execFileSync('mkfifo', [path.join(root, 'sub', 'pipe')]);
  await t.rejects(readInside(root, 'sub/pipe'), /not a regular file/, 'a special file is refused');
});
