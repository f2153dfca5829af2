import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/tmp.js';
import { makeRepository } from '../helpers/git.js';

// The built CLI, as users run it (`npm test` builds first).
const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

function trawl(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, TRAWL_CONFIG: '', ...options.env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

t.test('help for the program and for each command', async (t) => {
  const overview = trawl(['--help']);
  t.equal(overview.status, 0);
  t.match(overview.stdout, /Usage: trawl <command>/);
  t.match(overview.stdout, /index\s+index every configured repository/);
  const index = trawl(['index', '--help']);
  t.equal(index.status, 0);
  t.match(index.stdout, /Usage: trawl index \[--config FILE\]/);
  t.match(index.stdout, /Exit status/);
  t.match(trawl(['--version']).stdout, /^\d+\.\d+\.\d+/);
});

t.test('usage errors exit 2 with a message', async (t) => {
  const unknown = trawl(['frobnicate']);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown command "frobnicate"/);
  const badOption = trawl(['index', '--colour']);
  t.equal(badOption.status, 2);
  t.match(badOption.stderr, /trawl index: Unknown option '--colour'/);
  t.equal(trawl([]).status, 2, 'no command is a usage error');
});

t.test('an invalid config names the option and exits 2', async (t) => {
  const dir = tempDir(t);
  const config = path.join(dir, 'trawl.json');
  fs.writeFileSync(config, JSON.stringify({ repos: [{ name: 'x', path: '.', codeHostType: 'cvs' }] }));
  const result = trawl(['index', '--config', config]);
  t.equal(result.status, 2);
  t.match(result.stderr, /repos\[0\]\.codeHostType: must be one of/);
});

t.test('trawl index logs progress lines and exits 1 when a repository fails', async (t) => {
  const dir = tempDir(t);
  makeRepository(path.join(dir, 'repo'), { 'main.py': 'def main():\n    pass\n' });
  const config = path.join(dir, 'trawl.json');
  fs.writeFileSync(config, JSON.stringify({ dataDir: 'data', repos: [{ name: 'ok', path: 'repo' }, { name: 'gone', path: 'nowhere' }] }));
  const result = trawl(['index'], { env: { TRAWL_CONFIG: config } });
  t.equal(result.status, 1, 'a failed repository makes the exit status 1');
  const lines = result.stderr.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(lines.some((l) => l.msg === 'repository indexed' && l.repository === 'ok' && l.documents === 1), 'the good repository is indexed');
  t.ok(lines.some((l) => l.msg === 'repository not indexed' && l.repository === 'gone' && /ENOENT/.test(String(l.error))), 'the bad one is reported');
  t.ok(fs.existsSync(path.join(dir, 'data', 'manifest.json')), 'dataDir is relative to the config file');
});

t.test('without a config, trawl index indexes the repository it is started in', async (t) => {
  const dir = tempDir(t);
  const repo = path.join(dir, 'checkout');
  makeRepository(repo, { 'lib.rs': 'pub fn answer() -> u32 { 42 }\n' });
  const result = trawl(['index'], { cwd: repo, env: { XDG_CACHE_HOME: path.join(dir, 'cache') } });
  t.equal(result.status, 0, result.stderr);
  const dataDirs = fs.readdirSync(path.join(dir, 'cache', 'trawl'));
  t.match(dataDirs, [/^checkout-[0-9a-f]{8}$/]);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'cache', 'trawl', dataDirs[0]!, 'manifest.json'), 'utf8'));
  t.match(manifest.repositories['local/checkout'], { state: 'ready', documents: 1 });
});
