/**
 * Line blame of one file at a commit, for GET /api/blame: `git blame
 * --incremental` in a child process (it prints ranges and each commit once, no
 * line content), killed at the deadline or when the client goes away. Why not
 * libgit2's blame: docs/benchmarks.md ("Blame").
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { GitReadStoppedError, type ReadLimit } from './errors.js';
import type { ProcessSlots } from './process-slots.js';

export interface BlameRange {
  hash: string;
  /** The file's path at `hash` (it may have been renamed since). */
  path: string;
  /** 1-based. */
  startLine: number;
  lineCount: number;
}

export interface BlameCommit {
  hash: string;
  /** Author time, ISO 8601. */
  date: string;
  /** The subject line. */
  message: string;
  authorName: string;
  authorEmail: string;
  /** The commit before `hash` that touched these lines, and the path there; absent where `hash` added them. */
  previous?: { hash: string; path: string };
}

export interface Blame {
  /** Contiguous, non-overlapping, by startLine; adjacent ranges of one commit and path are merged. */
  ranges: BlameRange[];
  commits: Record<string, BlameCommit>;
}

/** Thrown when git blame fails, ran past its deadline or printed more than it may; the message names no server path. */
export class BlameError extends Error {
  constructor(
    message: string,
    /** What git printed on stderr, for the log (it may name server paths). */
    readonly detail = '',
  ) {
    super(message);
    this.name = 'BlameError';
  }
}

/** Incremental output is a few lines per range; a file with more than this much blame output is refused. */
const MAX_OUTPUT_BYTES = 64 << 20;

/** Niceness of git blame processes: the search workers come first on a busy machine. */
const BLAME_NICENESS = 10;

/**
 * Blames `filePath` at `commit` (a full commit id the caller resolved, and a
 * path it checked is a file there) in the repository at `repositoryPath`, in
 * one of `slots` once `caller`'s turn comes; git is killed when
 * `limit.signal` fires (the deadline, or the client gone).
 */
export function blameFile(
  repositoryPath: string,
  commit: string,
  filePath: string,
  limit: ReadLimit,
  slots: { slots: ProcessSlots; caller: string },
): Promise<Blame> {
  return slots.slots.run(slots.caller, limit, `the blame of ${filePath}`, 'blame a smaller file, or retry', () =>
    runBlame(repositoryPath, commit, filePath, limit),
  );
}

function runBlame(repositoryPath: string, commit: string, filePath: string, limit: ReadLimit): Promise<Blame> {
  const args = ['-C', repositoryPath, '--no-replace-objects', 'blame', '--incremental', commit, '--', filePath];
  const child = spawn('git', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    signal: limit.signal,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' },
  });
  try {
    if (child.pid !== undefined) os.setPriority(child.pid, BLAME_NICENESS);
  } catch {
    // It exited already, or the system refuses: it runs at the daemon's priority.
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > MAX_OUTPUT_BYTES) child.kill('SIGKILL');
    else chunks.push(chunk);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString();
  });
  const stopped = () => new GitReadStoppedError(`the blame of ${filePath}`, 'time', limit.budgetMs, 'blame a smaller file, or retry');
  return new Promise((resolve, reject) => {
    child.on('error', (error) => reject(limit.signal.aborted ? stopped() : new BlameError(`git blame could not run: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (bytes > MAX_OUTPUT_BYTES) reject(new GitReadStoppedError(`the blame of ${filePath}`, 'size', MAX_OUTPUT_BYTES, 'blame a smaller file'));
      else if (signal) reject(stopped());
      else if (code !== 0) reject(new BlameError(`git blame of ${filePath} failed (exit status ${code})`, stderr.trim()));
      else resolve(parseIncremental(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

const HEADER = /^([0-9a-f]{40,64}) \d+ (\d+) (\d+)$/;

/** Parses `git blame --incremental` output (git-blame(1), "THE PORCELAIN FORMAT"). */
export function parseIncremental(output: string): Blame {
  const ranges: BlameRange[] = [];
  const commits: Record<string, BlameCommit> = {};
  const partial = new Map<string, Partial<BlameCommit>>();
  let current: { hash: string; startLine: number; lineCount: number } | null = null;
  for (const line of output.split('\n')) {
    if (line === '') continue;
    if (!current) {
      const header = HEADER.exec(line);
      if (!header) throw new BlameError(`unexpected git blame output: ${JSON.stringify(line.slice(0, 80))}`);
      current = { hash: header[1]!, startLine: Number(header[2]), lineCount: Number(header[3]) };
      continue;
    }
    const space = line.indexOf(' ');
    const key = space === -1 ? line : line.slice(0, space);
    const value = space === -1 ? '' : line.slice(space + 1);
    const info = partial.get(current.hash) ?? {};
    partial.set(current.hash, info);
    if (key === 'author') info.authorName = value;
    else if (key === 'author-mail') info.authorEmail = value.replace(/^<|>$/g, '');
    else if (key === 'author-time') info.date = new Date(Number(value) * 1000).toISOString();
    else if (key === 'summary') info.message = value;
    else if (key === 'previous' && info.previous === undefined) {
      const separator = value.indexOf(' ');
      info.previous = { hash: value.slice(0, separator), path: unquotePath(value.slice(separator + 1)) };
    } else if (key === 'filename') {
      // Each entry ends with its filename.
      ranges.push({ hash: current.hash, path: unquotePath(value), startLine: current.startLine, lineCount: current.lineCount });
      current = null;
    }
  }
  for (const [hash, info] of partial) {
    commits[hash] = {
      hash,
      date: info.date ?? '',
      message: info.message ?? '',
      authorName: info.authorName ?? '',
      authorEmail: info.authorEmail ?? '',
      ...(info.previous ? { previous: info.previous } : {}),
    };
  }
  return { ranges: mergeAdjacent(ranges.sort((a, b) => a.startLine - b.startLine)), commits };
}

function mergeAdjacent(ranges: BlameRange[]): BlameRange[] {
  const merged: BlameRange[] = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last && last.hash === range.hash && last.path === range.path && last.startLine + last.lineCount === range.startLine) last.lineCount += range.lineCount;
    else merged.push({ ...range });
  }
  return merged;
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** A path as git prints it: as is, or C-quoted (`"a\tb\303\251"`) when it has special bytes. */
export function unquotePath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  for (let i = 1; i < text.length - 1; i++) {
    const char = text[i]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const next = text[++i]!;
    const octal = /^[0-7]{3}/.exec(text.slice(i, i + 3));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 2;
    } else bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}
