import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { tempDir } from './tmp.js';

/** The built CLI (`npm test` compiles before running tap). */
export const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export interface Daemon {
  url: string;
  /** The config file the daemon was started with (rewrite it and send SIGHUP to reload). */
  configFile: string;
  process: ChildProcess;
  /** Everything the daemon wrote to stderr so far (pino lines). */
  stderr(): string;
  /**
   * Resolves once stderr matches `pattern`: a log line travels through a pipe
   * of its own, so it can arrive after the HTTP response that followed it.
   */
  waitForLog(pattern: RegExp, what: string, timeoutMs?: number): Promise<void>;
  /** Sends a signal and resolves with the exit code once the process is gone and its output read. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** POSTs a JSON body. */
  post(pathName: string, body: unknown): Promise<Response>;
}

/**
 * Starts the real daemon (`trawl serve`) on port 0 with `config` (dataDir and
 * listen filled in; `prepare` runs on the config file before the start),
 * waits until its first index pass is published (health ok, unless
 * `waitForIndex` is false), and stops it when the test ends.
 */
export async function startDaemon(
  t: Test,
  config: Record<string, unknown>,
  options: { waitForIndex?: boolean; env?: NodeJS.ProcessEnv; prepare?: (configFile: string) => Promise<void> } = {},
): Promise<Daemon> {
  const dir = tempDir(t, 'trawl-daemon-');
  const configFile = path.join(dir, 'trawl.json');
  const server = { workers: 2, ...(config.server as object) };
  // Port 0 always; the address may be another of this machine's (0.0.0.0), never one off it.
  const listen = { host: (config.listen as { host?: string } | undefined)?.host ?? '127.0.0.1', port: 0 };
  fs.writeFileSync(configFile, JSON.stringify({ dataDir: path.join(dir, 'data'), ...config, listen, server }));
  await options.prepare?.(configFile);
  return runDaemon(t, configFile, options);
}

/** Starts the daemon on an existing config file (a restart of one `startDaemon` made); the rest as `startDaemon`. */
export async function runDaemon(t: Test, configFile: string, options: { waitForIndex?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Daemon> {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', configFile], {
    env: { ...process.env, TRAWL_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'close', not 'exit': by then stdout and stderr have been read to the end.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = /trawl listening on (\S+)/.exec(stdout);
      // A daemon on every address is reached, and named in Host, by its loopback address.
      if (found) resolve(found[1]!.replace('//0.0.0.0:', '//127.0.0.1:'));
    });
    void exited.then((code) => reject(new Error(`daemon exited (${code}) before listening:\n${stderr}`)));
  });
  const daemon: Daemon = {
    url,
    configFile,
    process: child,
    stderr: () => stderr,
    waitForLog: (pattern, what, timeoutMs = 5000) => waitFor(async () => pattern.test(stderr), timeoutMs, what),
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    fetch: (pathAndQuery, init) => fetch(url + pathAndQuery, init),
    post: (pathName, body) => fetch(url + pathName, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  };
  t.teardown(async () => {
    await daemon.stop();
  });
  if (options.waitForIndex !== false) await waitFor(async () => (await daemon.fetch('/api/health')).status === 200, 30_000, 'the first index pass');
  return daemon;
}

/** Polls `condition` every 25 ms until it holds; rejects after `timeoutMs`. */
export async function waitFor(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
