/**
 * The benchmark corpus: Debian's linux-source-6.1 tarball unpacked into a git
 * repository (one commit) under $TRAWL_BENCH_DIR (default /var/tmp/trawl-bench).
 * Made once and reused.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const LINUX_TARBALL = '/usr/src/linux-source-6.1.tar.xz';
/** Debian's Go 1.19 source tree (`golang-1.19-src`): the second, smaller corpus, a plain directory. */
export const GO_SOURCE = '/usr/share/go-1.19/src';

/** Exits the benchmark, saying what to install, when Go's source tree is missing. */
export function requireGoSource(): void {
  if (fs.existsSync(GO_SOURCE)) return;
  console.error(`${GO_SOURCE} is missing: apt-get install golang-1.19-src`);
  process.exit(2);
}

export function benchDirectory(): string {
  return process.env.TRAWL_BENCH_DIR ?? '/var/tmp/trawl-bench';
}

/** Path of the Linux corpus repository, creating it when missing. */
export function ensureLinuxCorpus(): string {
  const root = benchDirectory();
  const repo = path.join(root, 'linux-source-6.1');
  if (fs.existsSync(path.join(repo, '.git')) && gitOk(repo, 'rev-parse', '--verify', 'HEAD')) return repo;
  if (!fs.existsSync(LINUX_TARBALL)) {
    throw new Error(`${LINUX_TARBALL} is missing: apt-get install linux-source-6.1`);
  }
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  console.error(`unpacking ${LINUX_TARBALL} into ${repo} …`);
  execFileSync('tar', ['xJf', LINUX_TARBALL, '-C', root], { stdio: 'inherit' });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', '-c', 'gc.auto=0', ...args], {
      cwd: repo,
      stdio: 'inherit',
    });
  git('init', '-q');
  // Debian's packaging .gitignore ignores the whole top level; -f takes every file of the source tree.
  git('add', '-A', '-f');
  git('commit', '-q', '-m', 'linux 6.1');
  // Packed now, not by the detached `gc --auto` a commit of 78K loose objects starts: that one ran on
  // during the first benchmark, taking CPU from it and deleting .git/objects folders under warmPageCache.
  git('gc', '-q');
  return repo;
}

/** The corpus as a configured repository (public, so the daemon serves it to anonymous benchmark clients). */
export function linuxRepositoryConfig(repo: string) {
  return { name: 'kernel.org/linux', path: repo, public: true };
}

/** Bytes and files of the corpus working tree (excluding .git). */
export function corpusSize(repo: string): { bytes: number; files: number } {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: repo, maxBuffer: 1 << 30 }).toString('utf8');
  let bytes = 0;
  let files = 0;
  for (const file of out.split('\0')) {
    if (!file) continue;
    const stats = fs.lstatSync(path.join(repo, file));
    if (stats.isFile()) {
      bytes += stats.size;
      files++;
    }
  }
  return { bytes, files };
}

function gitOk(cwd: string, ...args: string[]): boolean {
  try {
    execFileSync('git', args, { cwd, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads every file under dir once, so that a measurement starts with it in
 * the page cache ("warm page cache"): this VM was seen to shrink its page
 * cache below the index's size after the index benchmark.
 */
export function warmPageCache(dir: string): void {
  const chunk = Buffer.alloc(1 << 20);
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const fd = fs.openSync(path.join(entry.parentPath, entry.name), 'r');
    try {
      while (fs.readSync(fd, chunk) > 0);
    } finally {
      fs.closeSync(fd);
    }
  }
}
