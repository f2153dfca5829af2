import { spawnSync } from 'node:child_process';
import { CLI } from './daemon.js';

/** Runs the built `trawl` CLI to completion, as a user would (without $TRAWL_CONFIG unless `env` sets it). */
export function trawl(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, TRAWL_CONFIG: '', ...options.env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
