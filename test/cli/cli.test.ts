import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { trawl } from '../helpers/cli.js';
import { CLI } from '../helpers/daemon.js';
import { tempDir } from '../helpers/tmp.js';
import { makeRepository } from '../helpers/git.js';

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
  const serve = trawl(['serve', '--help']);
  t.equal(serve.status, 0);
  t.match(serve.stdout, /Usage: trawl serve \[--config FILE\]/);
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
  for (const command of ['index', 'serve']) {
    const result = trawl([command, '--config', config]);
    t.equal(result.status, 2, `trawl ${command} exits 2`);
    t.match(result.stderr, new RegExp(`trawl ${command}: .*repos\\[0\\]\\.codeHostType: must be one of`, 's'));
  }
  const missing = trawl(['serve', '--config', path.join(dir, 'missing.json')]);
  t.equal(missing.status, 2);
  t.match(missing.stderr, /cannot read the file/);
});

t.test('trawl serve over a damaged manifest says so and exits 1', async (t) => {
  const dir = tempDir(t);
  makeRepository(path.join(dir, 'repo'), { 'main.py': 'def main():\n    pass\n' });
  fs.mkdirSync(path.join(dir, 'data'));
  fs.writeFileSync(path.join(dir, 'data', 'manifest.json'), '{not json');
  const config = path.join(dir, 'trawl.json');
  fs.writeFileSync(config, JSON.stringify({ dataDir: 'data', listen: { port: 0 }, repos: [{ name: 'ok', path: 'repo' }] }));
  const result = trawl(['serve', '--config', config]);
  t.equal(result.status, 1);
  t.match(result.stderr, /^trawl serve: .*manifest\.json is not valid JSON; move it away to rebuild the index$/m);
  t.notMatch(result.stderr, /^\s+at /m, 'a message, not a stack trace');
});

t.test('trawl index logs progress lines and exits 1 when a repository fails', async (t) => {
  const dir = tempDir(t);
  makeRepository(path.join(dir, 'repo'), { 'main.py': 'def main():\n    pass\n' });
  const config = path.join(dir, 'trawl.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      dataDir: 'data',
      repos: [
        { name: 'ok', path: 'repo' },
        { name: 'gone', path: 'nowhere' },
      ],
    }),
  );
  const result = trawl(['index'], { env: { TRAWL_CONFIG: config } });
  t.equal(result.status, 1, 'a failed repository makes the exit status 1');
  const lines = result.stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.ok(
    lines.some((l) => l.msg === 'repository indexed' && l.repository === 'ok' && l.documents === 1),
    'the good repository is indexed',
  );
  t.ok(
    lines.some((l) => l.msg === 'repository not indexed' && l.repository === 'gone' && /ENOENT/.test(String(l.error))),
    'the bad one is reported',
  );
  t.ok(fs.existsSync(path.join(dir, 'data', 'manifest.json')), 'dataDir is relative to the config file');
  const open = (fs.readdirSync(path.join(dir, 'data'), { recursive: true }) as string[])
    .map((entry) => path.join(dir, 'data', entry))
    .filter((entry) => (fs.statSync(entry).mode & 0o077) !== 0);
  t.same(open, [], 'nothing it wrote (shards, manifest, state) is readable by other users, outside systemd too');
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

/** A git checkout named `checkout` holding `files`, and the environment that gives its zero-config index a cache of its own. */
function checkout(t: Test, files: Record<string, string>) {
  const dir = tempDir(t);
  const repo = path.join(dir, 'checkout');
  makeRepository(repo, files);
  return { repo, env: { XDG_CACHE_HOME: path.join(dir, 'cache') } };
}

t.test('trawl search prints grep-like lines, the API response with --api-json, and exits 0/1/2', async (t) => {
  const { repo, env } = checkout(t, {
    'src/app.py': 'def handler(event):\n    return event\n\n# handler registry\n',
    'README.md': 'Call handler() from your code.\n',
  });
  t.equal(trawl(['index'], { cwd: repo, env }).status, 0);

  const found = trawl(['search', 'handler'], { cwd: repo, env });
  t.equal(found.status, 0, found.stderr);
  t.same(found.stdout.trim().split('\n').sort(), [
    'local/checkout README.md:1:6: Call handler() from your code.',
    'local/checkout src/app.py:1:5: def handler(event):',
    'local/checkout src/app.py:4:3: # handler registry',
  ]);
  const context = trawl(['search', '--context', '1', 'content:registry'], { cwd: repo, env });
  t.same(context.stdout.trim().split('\n'), ['local/checkout src/app.py-3- ', 'local/checkout src/app.py:4:11: # handler registry']);

  const json = trawl(['search', '--api-json', '--case', '--regex', 'def \\w+'], { cwd: repo, env });
  const response = JSON.parse(json.stdout);
  t.equal(response.isSearchExhaustive, true);
  t.same(
    response.files.map((f: { fileName: { text: string } }) => f.fileName.text),
    ['src/app.py'],
  );
  t.equal(Object.keys(response.stats).length, 21);

  const capped = trawl(['search', '--matches', '1', 'handler'], { cwd: repo, env });
  t.equal(capped.stdout.trim().split('\n').length, 1);
  t.match(capped.stderr, /results cut at 1 matches \(FLUSH_REASON_MAX_SIZE\)/);

  const none = trawl(['search', 'nowhere_to_be_found'], { cwd: repo, env });
  t.same([none.status, none.stdout], [1, ''], 'no match: exit 1, no output');
  const bad = trawl(['search', 'foo or'], { cwd: repo, env });
  t.equal(bad.status, 2);
  t.match(bad.stderr, /'or' needs an expression after it at column 5 of "foo or"/);
  t.match(trawl(['search', '--matches', '0', 'x'], { cwd: repo, env }).stderr, /--matches must be an integer from 1 to 100000/);
  t.match(trawl(['search'], { cwd: repo, env }).stderr, /expected one QUERY argument/);
});

t.test("trawl search speaks ripgrep's forms: --vimgrep and --json as rg prints them; a closed pipe ends it quietly", async (t) => {
  const { repo, env } = checkout(t, {
    'src/app.py': 'def handler(event):\n    return event\n\n# héllo handler registry, handler again\n',
    'docs/README.md': 'Call handler() from your code.\r\nNothing here.\n',
    'big.txt': 'handler line\n'.repeat(20_000),
  });
  const empty = trawl(['search', 'handler'], { cwd: repo, env });
  t.equal(empty.status, 2, 'no index yet: exit 2, not "no match"');
  t.match(empty.stderr, /has no index yet; run `trawl index` first/);
  t.equal(trawl(['index'], { cwd: repo, env }).status, 0);
  const search = (...args: string[]) => trawl(['search', '--matches', '100000', ...args, 'handler'], { cwd: repo, env });
  const rg = (...args: string[]) =>
    execFileSync('rg', [...args, 'handler'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });

  const sorted = (text: string) => text.split('\n').filter(Boolean).sort();
  t.same(sorted(search('--vimgrep').stdout), sorted(rg('--vimgrep')), 'the same lines as rg --vimgrep (file:line:byte column:text)');
  const sub = path.join(repo, 'src');
  t.match(trawl(['search', '--vimgrep', 'registry'], { cwd: sub, env }).stdout, /^app\.py:4:/, 'paths relative to the current directory');

  type RgMessage = {
    type: string;
    data: {
      path?: { text: string };
      line_number?: number;
      absolute_offset?: number;
      submatches?: unknown[];
      lines?: { text: string };
      stats?: { matches: number };
    };
  };
  const messages = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as RgMessage);
  const matchesOf = (list: RgMessage[]) =>
    list
      .filter((message) => message.type === 'match')
      .map(({ data }) => JSON.stringify([data.path!.text, data.line_number, data.absolute_offset, data.submatches, data.lines!.text]))
      .sort();
  const ours = messages(search('--json').stdout);
  const theirs = messages(rg('--json'));
  t.same(matchesOf(ours), matchesOf(theirs), 'match messages as rg --json writes them: path, line, byte offset, submatches');
  t.same(
    ours.map((message) => message.type).filter((type, i, all) => type !== all[i - 1]),
    ['begin', 'match', 'end', 'begin', 'match', 'end', 'begin', 'match', 'end', 'summary'],
    'begin, matches and end per file, then the summary',
  );
  t.equal(ours.at(-1)!.data.stats!.matches, theirs.at(-1)!.data.stats!.matches, 'and the same count');

  t.match(search('--color', 'always').stdout, /\x1b\[1;31mhandler\x1b\[0m/, '--color always highlights even into a pipe');
  t.notMatch(search().stdout, /\x1b\[/, 'auto: nothing but text into a pipe');
  t.match(search('--color', 'sometimes').stderr, /--color must be auto, always or never/);

  // `| head -1`: the reader goes away after the first line.
  const child = spawn(process.execPath, [CLI, 'search', '--matches', '100000', 'handler'], {
    cwd: repo,
    env: { ...process.env, ...env, TRAWL_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.equal(code, 0, 'exit 0 once the reader is gone');
  t.notMatch(stderr, /EPIPE|Error|\n\s+at /, 'no stack trace');
});

t.test('trawl search --exhaustive prints every match, past the 100,000 cap, as it finds them', async (t) => {
  // 120,000 matches in six files: more than `--matches` may ask for, and several parts of a search.
  const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`data/part${i}.txt`, `needle ${i}\n`.repeat(20_000)]));
  const { repo, env } = checkout(t, { ...files, 'src/app.py': 'print("needle")\n' });
  t.equal(trawl(['index'], { cwd: repo, env }).status, 0);
  const sorted = (text: string) => text.split('\n').filter(Boolean).sort();
  const rg = (...args: string[]) =>
    execFileSync('rg', [...args, 'needle'], { cwd: repo, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });

  const all = trawl(['search', '--exhaustive', '--vimgrep', 'needle'], { cwd: repo, env });
  t.equal(all.status, 0, all.stderr);
  t.equal(all.stderr, '', 'nothing was cut');
  t.same(sorted(all.stdout), sorted(rg('--vimgrep')), 'every line rg --vimgrep prints, 120,001 of them');

  const json = trawl(['search', '--exhaustive', '--json', 'needle'], { cwd: repo, env }).stdout.trim().split('\n');
  const summary = JSON.parse(json.at(-1)!);
  t.equal(summary.type, 'summary');
  t.equal(summary.data.stats.matches, 120_001, "one summary, counting every part's matches");
  t.equal(json.filter((line) => line.startsWith('{"type":"summary"')).length, 1);

  const first = trawl(['search', '--exhaustive', '--matches', '30000', '--vimgrep', 'needle'], { cwd: repo, env });
  t.equal(sorted(first.stdout).length, 30_000, '--matches still caps it');
  t.match(first.stderr, /results cut at 30000 matches/);

  const capped = trawl(['search', '--matches', '120001', 'needle'], { cwd: repo, env });
  t.equal(capped.status, 2);
  t.match(capped.stderr, /--matches must be an integer from 1 to 100000/, 'without --exhaustive the cap stands');
  const bad = trawl(['search', '--exhaustive', 'needle or'], { cwd: repo, env });
  t.same([bad.status, bad.stdout], [2, ''], 'a query the plan refuses: exit 2 before any output');
  t.match(bad.stderr, /'or' needs an expression after it/);
  const apiJson = trawl(['search', '--exhaustive', '--api-json', 'needle'], { cwd: repo, env });
  t.equal(apiJson.status, 2);
  t.match(apiJson.stderr, /--api-json prints one ranked response/);
});
