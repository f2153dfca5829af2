import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: '/nonexistent',
};

/** Runs the real git CLI in `cwd`, returning stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'core.quotepath=off', ...args], { cwd, env: GIT_ENV, encoding: 'utf8' });
}

/** Writes files (path → content) under root, creating directories. */
export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

/** Stages everything and commits; returns the new commit id. */
export function commitAll(cwd: string, message: string): string {
  git(cwd, 'add', '-A');
  git(cwd, 'commit', '-q', '-m', message);
  return git(cwd, 'rev-parse', 'HEAD').trim();
}

/** A new repository at `root` with `files` committed on main; returns the commit id. */
export function makeRepository(root: string, files: Record<string, string | Buffer>): string {
  fs.mkdirSync(root, { recursive: true });
  git(root, 'init', '-q');
  writeFiles(root, files);
  return commitAll(root, 'initial');
}

/** Deletes the loose object `revision` names (`HEAD:path`), as a disk fault would lose it; returns its id. */
export function loseObject(root: string, revision: string): string {
  const oid = git(root, 'rev-parse', revision).trim();
  fs.rmSync(path.join(root, '.git', 'objects', oid.slice(0, 2), oid.slice(2)));
  return oid;
}
