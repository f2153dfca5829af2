/**
 * A repository's mirror: a bare repository under the data directory holding only the refs trawl indexes
 * (the default branch, and the branches and tags the connection's globs name), fetched by `git` in a child
 * process of its own group with a minimal environment, a time budget and a size bound. Credentials reach git
 * through an askpass program reading the child's environment: never in argv, a URL, or a message
 * (docs/connections.md, "Credentials"). A first fetch goes to a temporary directory renamed into place, so a
 * mirror on disk always holds a completed fetch.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAX_BRANCHES } from '../index/format.js';
import { globToRegExp } from '../config/glob.js';
import { deadline } from '../git/deadline.js';
import { ConnectionError } from './errors.js';

export interface MirrorFetch {
  directory: string;
  url: string;
  branches: readonly string[];
  tags: readonly string[];
  credential?: { username: string; password: string };
  /** The askpass program (writeAskpass). */
  askpass: string;
  /** `file://` URLs are fetched only for a `git` connection that names one. */
  allowFile: boolean;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
}

export interface FetchOutcome {
  /** Whether any indexed ref moved, appeared or went away. */
  changed: boolean;
  /** Growth of the mirror's packs. */
  bytes: number;
}

/** ls-remote output read at most (a host answering with millions of refs). */
const MAX_REFS_OUTPUT = 64 << 20;
const SIZE_POLL_MS = 250;

/** Writes the askpass program into `directory`: it answers git's user-name and password prompts from its environment. */
export function writeAskpass(directory: string): string {
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  const file = path.join(directory, 'askpass');
  const script = '#!/bin/sh\ncase "$1" in\n  [Uu]sername*) printf \'%s\\n\' "$TRAWL_GIT_USERNAME" ;;\n  *) printf \'%s\\n\' "$TRAWL_GIT_PASSWORD" ;;\nesac\n';
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, script, { mode: 0o700 });
  fs.renameSync(temporary, file);
  return file;
}

export async function fetchMirror(fetch: MirrorFetch): Promise<FetchOutcome> {
  const limit = deadline(fetch.signal, fetch.timeoutMs);
  try {
    return await fetchWithin(fetch, limit.signal);
  } finally {
    limit.clear();
  }
}

/** fetchMirror's work, every git process of it ended once `deadline` fires. */
async function fetchWithin(fetch: MirrorFetch, deadline: AbortSignal): Promise<FetchOutcome> {
  const remote = await listRemote(fetch, deadline);
  const wanted = wantedRefs(remote, fetch);
  const fresh = !fs.existsSync(path.join(fetch.directory, 'HEAD'));
  const directory = fresh ? `${fetch.directory}.${process.pid}.partial` : fetch.directory;
  if (fresh) {
    fs.rmSync(directory, { recursive: true, force: true });
    fs.mkdirSync(path.dirname(directory), { recursive: true });
    await git(['init', '--bare', '-q', directory], fetch, deadline);
  }
  try {
    const before = fresh ? new Map<string, string>() : await localRefs(directory, fetch, deadline);
    const sizeBefore = packBytes(directory);
    const stale = [...wanted].filter(([ref, id]) => before.get(ref) !== id).map(([ref]) => `+${ref}:${ref}`);
    if (stale.length > 0) {
      await git(
        ['-C', directory, '-c', 'fetch.unpackLimit=1', 'fetch', '--no-tags', '--no-write-fetch-head', '-q', fetch.url, ...stale],
        fetch,
        deadline,
        () => {
          if (packBytes(directory) > fetch.maxBytes)
            throw new ConnectionError(`the repository grew past ${fetch.maxBytes >> 20} MiB (sync.maxRepositoryMegabytes); its fetch was ended`);
        },
      );
    }
    const gone = [...before.keys()].filter((ref) => !wanted.has(ref));
    if (gone.length > 0) await git(['-C', directory, 'update-ref', '--stdin'], fetch, deadline, undefined, gone.map((ref) => `delete ${ref}\n`).join(''));
    await git(['-C', directory, 'symbolic-ref', 'HEAD', remote.head], fetch, deadline);
    if (fresh) fs.renameSync(directory, fetch.directory);
    return { changed: stale.length > 0 || gone.length > 0, bytes: Math.max(0, packBytes(fetch.directory) - sizeBefore) };
  } catch (error) {
    if (fresh) fs.rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

interface RemoteRefs {
  /** HEAD's target, `refs/heads/…`. */
  head: string;
  /** Ref → object id (a tag's peeled commit where given). */
  refs: Map<string, string>;
}

async function listRemote(fetch: MirrorFetch, deadline: AbortSignal): Promise<RemoteRefs> {
  const output = await git(['ls-remote', '--symref', fetch.url, 'HEAD', 'refs/heads/*', 'refs/tags/*'], fetch, deadline);
  const refs = new Map<string, string>();
  let head = '';
  for (const line of output.split('\n')) {
    const symbolic = /^ref: (refs\/heads\/\S+)\tHEAD$/.exec(line);
    if (symbolic) head = symbolic[1]!;
    const plain = /^([0-9a-f]{40,64})\t(refs\/(?:heads|tags)\/\S+?)(\^\{\})?$/.exec(line);
    if (plain && (plain[3] || !refs.has(plain[2]!))) refs.set(plain[2]!, plain[1]!);
  }
  if (!head || !refs.has(head)) throw new ConnectionError('the repository is empty (no default branch)');
  return { head, refs };
}

/** The refs to hold: the default branch, then branches and tags matching the globs, MAX_BRANCHES in all. */
function wantedRefs(remote: RemoteRefs, fetch: MirrorFetch): Map<string, string> {
  const wanted = new Map([[remote.head, remote.refs.get(remote.head)!]]);
  const take = (prefix: string, globs: readonly string[]) => {
    const patterns = globs.map(globToRegExp);
    for (const [ref, id] of remote.refs) {
      if (wanted.size >= MAX_BRANCHES) return;
      if (ref.startsWith(prefix) && patterns.some((pattern) => pattern.test(ref.slice(prefix.length)))) wanted.set(ref, id);
    }
  };
  take('refs/heads/', fetch.branches);
  take('refs/tags/', fetch.tags);
  return wanted;
}

async function localRefs(directory: string, fetch: MirrorFetch, deadline: AbortSignal): Promise<Map<string, string>> {
  const output = await git(['-C', directory, 'for-each-ref', '--format=%(refname) %(objectname) %(*objectname)', 'refs/heads', 'refs/tags'], fetch, deadline);
  return new Map(
    output
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref = '', id = '', peeled = ''] = line.split(' ');
        return [ref, peeled || id];
      }),
  );
}

/** Bytes of the mirror's packs, the incoming one included (fetches keep packs: fetch.unpackLimit=1). */
function packBytes(directory: string): number {
  const packs = path.join(directory, 'objects', 'pack');
  let total = 0;
  for (const name of fs.existsSync(packs) ? fs.readdirSync(packs) : []) {
    try {
      total += fs.statSync(path.join(packs, name)).size;
    } catch {
      // renamed or removed between the listing and the stat
    }
  }
  return total;
}

/**
 * Runs git with `args`, its output bounded; rejects with a ConnectionError whose message names what failed in
 * git's words, cleaned of anything secret. `tick` runs while it works and may throw to end it.
 */
function git(args: string[], fetch: MirrorFetch, deadline: AbortSignal, tick?: () => void, input?: string): Promise<string> {
  if (deadline.aborted) return Promise.reject(stoppedError(fetch));
  const child = spawn('git', args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: gitEnvironment(fetch) });
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  let stdout = '';
  let stderr = '';
  let stopped: Error | null = null;
  const stop = (error: Error) => {
    stopped ??= error;
    kill();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    if (stdout.length + chunk.length > MAX_REFS_OUTPUT) stop(new ConnectionError(`git answered more than ${MAX_REFS_OUTPUT >> 20} MiB of refs`));
    else stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 8192) stderr += chunk.toString();
  });
  child.stdin.on('error', () => {});
  child.stdin.end(input ?? '');
  const onAbort = () => stop(stoppedError(fetch));
  deadline.addEventListener('abort', onAbort, { once: true });
  const poll = tick
    ? setInterval(() => {
        try {
          tick();
        } catch (error) {
          stop(error as Error);
        }
      }, SIZE_POLL_MS)
    : null;
  return new Promise((resolve, reject) => {
    const done = () => {
      deadline.removeEventListener('abort', onAbort);
      if (poll) clearInterval(poll);
    };
    child.on('error', (error) => {
      done();
      reject(new ConnectionError(`git could not run: ${error.message}`));
    });
    child.on('close', (code) => {
      done();
      try {
        tick?.();
      } catch (error) {
        stopped ??= error as Error;
      }
      if (stopped) reject(stopped);
      else if (code !== 0) reject(new ConnectionError(gitFailure(args, stderr, fetch)));
      else resolve(stdout);
    });
  });
}

/** Why a git process was ended, or not started: the daemon stopping, or the fetch's time budget spent. */
function stoppedError(fetch: MirrorFetch): ConnectionError {
  return new ConnectionError(
    fetch.signal.aborted ? 'the sync was stopped' : `git ran past ${fetch.timeoutMs / 1000} s (sync.fetchTimeoutSeconds) and was ended`,
  );
}

/** git's environment: nothing of the daemon's (its other tokens), no prompts, no user or system config, only the allowed protocols. */
function gitEnvironment(fetch: MirrorFetch): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: path.dirname(fetch.askpass),
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: fetch.askpass,
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o StrictHostKeyChecking=yes',
    GIT_ALLOW_PROTOCOL: fetch.allowFile ? 'file:git:http:https:ssh' : 'git:http:https:ssh',
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'http.followRedirects',
    GIT_CONFIG_VALUE_0: 'false',
    GIT_CONFIG_KEY_1: 'credential.helper',
    GIT_CONFIG_VALUE_1: '',
    TRAWL_GIT_USERNAME: fetch.credential?.username ?? '',
    TRAWL_GIT_PASSWORD: fetch.credential?.password ?? '',
  };
}

/** git's complaint in a line or two, with URLs' user parts and the password taken out. */
function gitFailure(args: string[], stderr: string, fetch: MirrorFetch): string {
  let text = stderr.replace(/:\/\/[^/@\s]*@/g, '://');
  if (fetch.credential?.password) text = text.split(fetch.credential.password).join('***');
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const command = args.includes('ls-remote')
    ? 'listing the refs'
    : args.includes('fetch')
      ? 'fetching'
      : `git ${args.find((arg) => !arg.startsWith('-') && !arg.includes('/')) ?? ''}`;
  if (lines.some((line) => /Authentication failed|could not read (Username|Password)|HTTP 401|403/.test(line)))
    return `${command}: the host refused the credentials (check the token)`;
  return `${command}: ${lines.slice(-2).join(' ').slice(0, 400) || 'git failed'}`;
}
