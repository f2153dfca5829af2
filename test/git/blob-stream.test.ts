import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { BlobStream } from '../../src/git/blob-stream.js';
import { tempDir } from '../helpers/tmp.js';
import { git, makeRepository } from '../helpers/git.js';

t.test('blobs of every size come back intact and in order', async (t) => {
  const repo = tempDir(t);
  const files: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    'newline-only': Buffer.from('\n'),
    'small.txt': Buffer.from('hello\nworld\n'),
    'binary.bin': randomBytes(1000),
    'spans-chunks.bin': randomBytes(3 * 65536 + 17), // larger than one pipe read
    'large.bin': randomBytes(5 << 20),
  };
  makeRepository(repo, files);
  const oids = Object.fromEntries(Object.keys(files).map((name) => [name, git(repo, 'rev-parse', `HEAD:${name}`).trim()]));
  const stream = new BlobStream(repo);
  t.teardown(() => stream.close());
  // Pipelined: every request is in flight before the first answer is read.
  const names = [...Object.keys(files), ...Object.keys(files).reverse()];
  const contents = await Promise.all(names.map((name) => stream.read(oids[name]!)));
  names.forEach((name, i) => t.ok(contents[i]!.equals(files[name]!), `${name} (${files[name]!.length} bytes)`));
});

t.test('a missing object or a bad id fails that read only', async (t) => {
  const repo = tempDir(t);
  makeRepository(repo, { 'a.txt': 'a\n' });
  const oid = git(repo, 'rev-parse', 'HEAD:a.txt').trim();
  const stream = new BlobStream(repo);
  t.teardown(() => stream.close());
  const missing = stream.read('0123456789012345678901234567890123456789');
  const good = stream.read(oid);
  await t.rejects(missing, /git cat-file: 0123456789012345678901234567890123456789 missing/);
  t.equal((await good).toString(), 'a\n');
  await t.rejects(stream.read('HEAD --batch-all-objects'), /not an object id/);
  t.equal((await stream.read(oid)).toString(), 'a\n', 'the stream still serves after failures');
});

t.test('reads fail cleanly when git cannot run in the directory', async (t) => {
  const dir = tempDir(t);
  const stream = new BlobStream(path.join(dir, 'no-such-dir'));
  t.teardown(() => stream.close());
  await t.rejects(stream.read('0123456789012345678901234567890123456789'), /git cat-file (could not run|exited)/);
  t.notOk(fs.existsSync(path.join(dir, 'no-such-dir')));
});
