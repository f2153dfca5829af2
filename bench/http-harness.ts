/**
 * What the HTTP benchmarks share: the daemon as users run it (`trawl serve`
 * on a config file, port 0) and wrk driving it with a Lua script, its report
 * parsed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchQuery } from './queries.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
export const MATCHES = 100;
/** Temporary files of this run; removed by `removeScratch`. */
export const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-http-'));

export function removeScratch(): void {
  fs.rmSync(scratch, { recursive: true, force: true });
}

export interface Daemon {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `trawl serve` with `config` (anonymous access on unless the config says otherwise) and waits until it is healthy. */
export async function startDaemon(config: object, env: NodeJS.ProcessEnv = {}): Promise<Daemon> {
  const file = path.join(scratch, `config-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify({ auth: { anonymousAccess: true }, ...config, listen: { host: '127.0.0.1', port: 0 } }));
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, TRAWL_LOG_LEVEL: 'error', ...env } });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = /trawl listening on (\S+)/.exec(out);
      if (found) resolve(found[1]!);
    });
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  for (let ready = false; !ready; ) {
    ready = (await fetch(`${url}/api/health`)).status === 200;
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export function searchBody(q: BenchQuery): string {
  return JSON.stringify({ query: q.query, matches: MATCHES, isRegexEnabled: q.regex ?? false, isCaseSensitivityEnabled: q.caseSensitive ?? false });
}

/** A wrk script that POSTs `bodies` to `path` in turn, with `headers` besides the JSON content type. */
export function wrkScript(name: string, apiPath: string, bodies: string[], headers: Record<string, string> = {}): string {
  const file = path.join(scratch, `${name}.lua`);
  const allHeaders = Object.entries({ 'Content-Type': 'application/json', ...headers })
    .map(([key, value]) => `["${key}"] = "${value}"`)
    .join(', ');
  fs.writeFileSync(
    file,
    `local bodies = { ${bodies.map((body) => `[==[${body}]==]`).join(', ')} }
local headers = { ${allHeaders} }
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "${apiPath}", headers, bodies[(i % #bodies) + 1])
end
`,
  );
  return file;
}

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit]!;

/** Runs wrk (asynchronously, so samplers keep running) and reads its report. */
export async function runWrk(url: string, script: string, connections: number, seconds: number) {
  const { stdout: out } = await promisify(execFile)('wrk', ['-t', String(Math.min(2, connections)), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '15s', '--latency', '-s', script, url], { encoding: 'utf8' });
  const percentile = (p: string) => {
    const found = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    return found ? toMs(found[1]!, found[2]!) : NaN;
  };
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p50: percentile('50'),
    p99: percentile('99'),
    failed: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((a, b) => a + Number(b), 0) ?? 0),
  };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
export const formatMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

/** CPU seconds used so far by the daemon's main thread and by all its other threads (workers, indexer, GC helpers). */
export function threadCpuSeconds(pid: number): { main: number; workers: number } {
  const ticks = (file: string) => {
    const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in USER_HZ (100 on Linux)
  };
  const all = fs.readdirSync(`/proc/${pid}/task`).map((tid) => ({ tid: Number(tid), seconds: ticks(`/proc/${pid}/task/${tid}/stat`) }));
  const main = all.find((thread) => thread.tid === pid)?.seconds ?? 0;
  return { main, workers: all.reduce((sum, thread) => sum + thread.seconds, 0) - main };
}
