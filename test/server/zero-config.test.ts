import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CLI, waitFor } from '../helpers/daemon.js';
import { makeRepository } from '../helpers/git.js';
import { tempDir } from '../helpers/tmp.js';

// README's first command ends in `npm start`: `trawl serve` with no configuration, in a git checkout.
t.test('zero-config: trawl serve indexes the repository it starts in and prints a working curl', async (t) => {
  const dir = tempDir(t);
  const repo = path.join(dir, 'checkout');
  makeRepository(repo, { 'app.py': 'def handler():\n    return "TODO: answer"\n' });
  const child = spawn(process.execPath, [CLI, 'serve'], {
    cwd: repo,
    env: { ...process.env, TRAWL_CONFIG: '', XDG_CACHE_HOME: path.join(dir, 'cache') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await waitFor(async () => /curl -s /.test(stdout), 30_000, 'the banner');
  t.match(stdout, /^trawl listening on http:\/\/127\.0\.0\.1:6070$/m, 'listens on 127.0.0.1 only, port 6070');
  const curl = /curl -s (\S+) -H 'Content-Type: application\/json' -d '([^']+)'/.exec(stdout);
  t.ok(curl, 'prints a sample curl');
  await waitFor(async () => (await fetch('http://127.0.0.1:6070/api/health')).status === 200, 30_000, 'the first index pass');
  const response = await fetch(curl![1]!, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: curl![2]! });
  t.equal(response.status, 200, 'the sample curl works');
  const body = await response.json();
  t.same(
    body.files.map((file: { fileName: { text: string } }) => file.fileName.text),
    ['app.py'],
    'and finds the repository’s TODO',
  );
  t.equal(body.files[0].repository, 'local/checkout');
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM stops it with status 0');
});
