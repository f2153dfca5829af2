import { execFile, spawnSync } from 'node:child_process';
import { CLI } from './daemon.js';

const options = (env: NodeJS.ProcessEnv | undefined, cwd: string | undefined, input?: string) => ({
  cwd,
  input,
  env: { ...process.env, TRAWL_CONFIG: '', ...env },
  encoding: 'utf8' as const,
  timeout: 120_000,
  maxBuffer: 256 << 20,
});

/** Runs the built `trawl` CLI to completion, as a user would (without $TRAWL_CONFIG unless `env` sets it; `input` is its standard input). */
export function trawl(args: string[], { cwd, env, input }: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], options(env, cwd, input));
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `trawl` without blocking this process: for tests that also talk to a daemon,
 * whose idle keep-alive connections must be seen closing while the CLI runs
 * (a blocked event loop would reuse a closed one).
 */
export function trawlAsync(
  args: string[],
  { cwd, env }: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], options(env, cwd), (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ status, stdout, stderr });
    });
  });
}
