/**
 * Connection benchmarks, into docs/benchmarks.md, against a local git server (git http-backend behind nginx
 * and fcgiwrap, as the connection tests run it) and a Gitea-shaped API (the tests' fixture):
 * - a sync of TRAWL_BENCH_REPOSITORIES (1,000) small repositories from scratch: wall time to synced and to
 *   all indexed, the daemon's CPU (its git children included) and its peak RSS;
 * - the time from a push to the commit being searchable through a fetch (the sync started by SIGHUP).
 *
 *   npm run bench:connections      (apt-get install nginx-light fcgiwrap)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gitea } from '../test/connections/fixtures/gitea.js';
import { startFixture } from '../test/connections/fixtures/server.js';
import { commitAll, git, writeFiles } from '../test/helpers/git.js';
import { createServedRepository, startGitHttpHost } from '../test/helpers/git-host.js';
import type { Teardown } from '../test/helpers/tmp.js';
import { formatMs, median, processCost, removeScratch, scratch, startDaemon, type Daemon } from './http-harness.js';
import { writeReportBlock } from './report.js';

const REPOSITORIES = Number(process.env.TRAWL_BENCH_REPOSITORIES ?? 1000);
const PUSHES = 10;
const TOKEN = 'bench-token';

const cleanups: (() => unknown)[] = [];
const owner: Teardown = { teardown: (fn) => cleanups.push(fn) };

/** `count` bare repositories `big/repo-{i}.git` under `root`, three small files each, written by one fast-import each. */
function makeRepositories(root: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const bare = path.join(root, 'big', `repo-${i}.git`);
    fs.mkdirSync(bare, { recursive: true });
    git(bare, 'init', '-q', '--bare');
    const files = [`README.md`, `src/main_${i}.c`, `src/util.h`].map((name, n) => {
      const content = `// repository ${i}, file ${n}: trawl_bench_${i}_${n}\nint value_${i}_${n} = ${i * 3 + n};\n`;
      return `M 100644 inline ${name}\ndata ${Buffer.byteLength(content)}\n${content}`;
    });
    const stream = `commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 7\ninitial\n${files.join('\n')}\n`;
    execFileSync('git', ['fast-import', '--quiet'], { cwd: bare, input: stream });
    git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  }
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 3_600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The one connection's sync state; anonymous callers see it once one of its (public) repositories is mirrored. */
async function connectionState(daemon: Daemon): Promise<{ status: string; repoCount: number; lastSyncedAt?: string }> {
  const [connection] = (await (await fetch(`${daemon.url}/api/connections`)).json()) as {
    syncState: { status: string; repoCount: number; lastSyncedAt?: string };
  }[];
  return connection?.syncState ?? { status: 'pending', repoCount: 0 };
}

async function readyCount(daemon: Daemon): Promise<number> {
  let ready = 0;
  for (let page = 1; ; page++) {
    const repos = (await (await fetch(`${daemon.url}/api/repos?perPage=100&page=${page}`)).json()) as { indexState: string }[];
    ready += repos.filter((repo) => repo.indexState === 'ready').length;
    if (repos.length < 100) return ready;
  }
}

async function syncMany(): Promise<string> {
  const fixture = await startFixture(owner, gitea, { generated: REPOSITORIES, pageSize: 50 });
  const host = await startGitHttpHost(owner, { user: 'oauth2', password: TOKEN }, fixture.port);
  fixture.state.gitOrigin = host.origin;
  const madeAt = performance.now();
  makeRepositories(host.root, REPOSITORIES);
  console.log(`${REPOSITORIES} repositories made in ${((performance.now() - madeAt) / 1000).toFixed(1)} s`);
  const dataDir = path.join(scratch, 'sync-data');
  const started = performance.now();
  const daemon = await startDaemon(
    {
      dataDir,
      index: { ctagsCommand: '' },
      connections: { bench: { type: 'gitea', url: host.origin, orgs: ['big'], token: { env: 'BENCH_TOKEN' }, public: true } },
    },
    { BENCH_TOKEN: TOKEN },
  );
  try {
    await until(async () => (await connectionState(daemon)).status === 'synced', 'the sync');
    const synced = performance.now() - started;
    const state = await connectionState(daemon);
    await until(async () => (await readyCount(daemon)) === REPOSITORIES, 'every repository indexed');
    const indexed = performance.now() - started;
    const cost = processCost(daemon.child.pid!);
    const mirrorsMiB = Number(execFileSync('du', ['-sk', path.join(dataDir, 'mirrors')], { encoding: 'utf8' }).split('\t')[0]) / 1024;
    return [
      `A Gitea-shaped API lists ${REPOSITORIES.toLocaleString('en')} repositories (50 a page); nginx + fcgiwrap + git http-backend serve them (3 small files each, basic auth); \`sync.processes\` 2, no ctags.`,
      '',
      '| repositories mirrored | wall to synced | wall to all indexed | daemon CPU (git children included) | peak RSS (daemon) | mirrors on disk |',
      '|---|---|---|---|---|---|',
      `| ${state.repoCount.toLocaleString('en')} | ${(synced / 1000).toFixed(1)} s | ${(indexed / 1000).toFixed(1)} s | ${cost.cpuSeconds.toFixed(1)} s | ${cost.peakRssMiB.toFixed(0)} MiB | ${mirrorsMiB.toFixed(0)} MiB |`,
    ].join('\n');
  } finally {
    await daemon.stop();
  }
}

async function pushToSearchable(): Promise<string> {
  const host = await startGitHttpHost(owner, { user: 'ci', password: TOKEN });
  const work = createServedRepository(owner, host.root, 'team/app', { 'README.md': 'bench\n' });
  const daemon = await startDaemon(
    {
      dataDir: path.join(scratch, 'push-data'),
      index: { ctagsCommand: '' },
      connections: { app: { type: 'git', url: `${host.origin}/git/team/app.git`, user: 'ci', token: { env: 'BENCH_TOKEN' }, public: true } },
    },
    { BENCH_TOKEN: TOKEN },
  );
  const fetched: number[] = [];
  const searchable: number[] = [];
  try {
    await until(async () => (await connectionState(daemon)).repoCount === 1, 'the first fetch');
    for (let round = 0; round < PUSHES; round++) {
      const marker = `trawl_pushed_${round}_${Date.now()}`;
      writeFiles(work, { [`src/change_${round}.c`]: `int ${marker} = ${round};\n` });
      commitAll(work, `change ${round}`);
      git(work, 'push', '-q', 'origin', 'HEAD:main');
      const before = (await connectionState(daemon)).lastSyncedAt;
      const pushedAt = performance.now();
      daemon.child.kill('SIGHUP');
      await until(async () => (await connectionState(daemon)).lastSyncedAt !== before, 'the fetch');
      fetched.push(performance.now() - pushedAt);
      await until(async () => {
        const body = (await (
          await fetch(`${daemon.url}/api/search`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ query: marker, matches: 1 }),
          })
        ).json()) as { files: unknown[] };
        return body.files.length === 1;
      }, 'the pushed commit');
      searchable.push(performance.now() - pushedAt);
    }
  } finally {
    await daemon.stop();
  }
  return [
    `One repository over http (nginx + git http-backend, basic auth); each round commits one file, pushes, sends SIGHUP (a sync now) and polls a search for the new line every 20 ms. ${PUSHES} rounds.`,
    '',
    '| from the push to | median | max |',
    '|---|---|---|',
    `| the fetch done (sync ended) | ${formatMs(median(fetched))} ms | ${formatMs(Math.max(...fetched))} ms |`,
    `| searchable | ${formatMs(median(searchable))} ms | ${formatMs(Math.max(...searchable))} ms |`,
  ].join('\n');
}

try {
  const push = await pushToSearchable();
  console.log(push);
  const sync = await syncMany();
  console.log(sync);
  writeReportBlock('connections', `${sync}\n\n${push}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
  removeScratch();
}
