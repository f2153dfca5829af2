/**
 * What the HTTP benchmarks share: the daemon as users run it (`trawl serve`
 * on a config file, port 0) and wrk driving it with a Lua script, its report
 * parsed.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { searchRequest, type BenchQuery } from './queries.js';

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

/**
 * Starts `trawl serve` with `config` (anonymous access on unless the config says otherwise) and waits until it is
 * healthy (or, `untilHealthy` false, listening); `nodeFlags` go to its node (their output to stdout, as `--trace-gc`'s,
 * is left to the caller to read).
 */
export async function startDaemon(config: object, env: NodeJS.ProcessEnv = {}, nodeFlags: string[] = [], untilHealthy = true): Promise<Daemon> {
  const file = path.join(scratch, `config-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify({ auth: { anonymousAccess: true }, ...config, listen: { host: '127.0.0.1', port: 0 } }));
  const child = spawn(process.execPath, [...nodeFlags, CLI, 'serve', '--config', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, TRAWL_LOG_LEVEL: 'error', ...env },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const listen = (chunk: Buffer) => {
      out += chunk.toString();
      const found = /trawl listening on (\S+)/.exec(out);
      if (!found) return;
      child.stdout!.off('data', listen); // the stream keeps flowing: later output is dropped unless the caller reads it
      resolve(found[1]!);
    };
    child.stdout!.on('data', listen);
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  for (let ready = !untilHealthy; !ready;) {
    ready = (await fetch(`${url}/api/health`)).status === 200;
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child, stop: () => terminated(child) };
}

/** A port free now on 127.0.0.1 (closed again: the server about to start binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Sends `child` SIGTERM; resolves once it has exited. */
export function terminated(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(); // gone already (killed, say)
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function searchBody(q: BenchQuery): string {
  return JSON.stringify(searchRequest(q, MATCHES));
}

/** A wrk script that POSTs `bodies` to `path` in turn, with `headers` besides the JSON content type. */
export function wrkScript(name: string, apiPath: string, bodies: string[], headers: Record<string, string> = {}): string {
  return writeScript(
    name,
    `${requestTable(bodies, headers)}
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "${apiPath}", headers, bodies[(i % #bodies) + 1])
end
`,
  );
}

/** A wrk script that GETs `paths` in turn (a peer's search URLs). */
export function wrkGetScript(name: string, paths: string[]): string {
  return writeScript(
    name,
    `local paths = { ${paths.map((url) => `[==[${url}]==]`).join(', ')} }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
`,
  );
}

/**
 * A wrk script that offers requests at a fixed rate (`wrk … -- RATE THREADS`)
 * instead of as fast as connections free up, and measures each request's
 * latency from when the schedule meant to send it, not from when a free
 * connection sent it: a stall then counts against every request it delays,
 * as wrk2 counts it (no coordinated omission). The first second is not
 * measured. Each request carries its scheduled time as its X-Request-Id,
 * which the daemon echoes. Prints one line: `paced n N p50 … p90 … p99 … max …` (ms).
 */
export function pacedWrkScript(name: string, apiPath: string, bodies: string[]): string {
  return writeScript(
    name,
    `${requestTable(bodies, {})}
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long seconds; long nanoseconds; } trawl_timespec;
int clock_gettime(int clock, trawl_timespec *time);
]]
local clock = ffi.new("trawl_timespec")
local function nowMs()
  ffi.C.clock_gettime(1, clock) -- CLOCK_MONOTONIC
  return tonumber(clock.seconds) * 1000 + tonumber(clock.nanoseconds) / 1e6
end

local threadCount, threads = 0, {}
setup = function(thread)
  threadCount = threadCount + 1
  thread:set("id", threadCount)
  table.insert(threads, thread)
end

-- Per thread: its share of the rate as send slots every \`interval\` ms, claimed in turn by its connections.
local interval, nextSlot, measuredFrom = 0, 0, 0
local slots, firstSlot, lastSlot = {}, 1, 0
local i = 0
latencies = {}
init = function(args)
  local rate, count = tonumber(args[1]), tonumber(args[2])
  interval = 1000 * count / rate
  nextSlot = nowMs() + interval * (id - 1) / count
  measuredFrom = nextSlot + 1000
end
-- Called before each request but a connection's first: waits for the next slot (never sends early).
delay = function()
  lastSlot = lastSlot + 1
  slots[lastSlot] = nextSlot
  nextSlot = nextSlot + interval
  return math.max(0, math.ceil(slots[lastSlot] - nowMs()))
end
request = function()
  if firstSlot > lastSlot then delay() end
  local slot = slots[firstSlot]
  slots[firstSlot] = nil
  firstSlot = firstSlot + 1
  i = i + 1
  headers["X-Request-Id"] = string.format("%.3f", slot)
  return wrk.format("POST", "${apiPath}", headers, bodies[(i % #bodies) + 1])
end
response = function(status, responseHeaders)
  local slot = tonumber(responseHeaders["X-Request-Id"])
  if slot and slot >= measuredFrom then latencies[#latencies + 1] = nowMs() - slot end
end
done = function()
  local all = {}
  for _, thread in ipairs(threads) do
    for _, latency in ipairs(thread:get("latencies")) do all[#all + 1] = latency end
  end
  table.sort(all)
  local function rank(p) return all[math.max(1, math.ceil(p * #all))] or 0 end
  io.write(string.format("paced n %d p50 %.3f p90 %.3f p99 %.3f max %.3f\\n", #all, rank(0.5), rank(0.9), rank(0.99), rank(1)))
end
`,
  );
}

/** The Lua tables \`bodies\` and \`headers\` (JSON content type and \`extra\`) of a wrk script. */
function requestTable(bodies: string[], extra: Record<string, string>): string {
  const headers = Object.entries({ 'Content-Type': 'application/json', ...extra })
    .map(([key, value]) => `["${key}"] = "${value}"`)
    .join(', ');
  return `local bodies = { ${bodies.map((body) => `[==[${body}]==]`).join(', ')} }
local headers = { ${headers} }`;
}

function writeScript(name: string, text: string): string {
  const file = path.join(scratch, `${name}.lua`);
  fs.writeFileSync(file, text);
  return file;
}

const toMs = (value: string, unit: string) => Number(value) * ({ us: 0.001, ms: 1, s: 1000 } as Record<string, number>)[unit]!;

/** Runs wrk (asynchronously, so samplers keep running) and reads its report. */
export async function runWrk(url: string, script: string, connections: number, seconds: number) {
  const out = await wrk(url, script, connections, seconds);
  const percentile = (p: string) => {
    const found = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
    return found ? toMs(found[1]!, found[2]!) : NaN;
  };
  return { rps: requestsPerSecond(out), p50: percentile('50'), p99: percentile('99'), failed: failures(out) };
}

/** Runs a pacedWrkScript offering `rate` requests/s in all over `connections`, and reads its report. */
export async function runPacedWrk(url: string, script: string, rate: number, connections: number, seconds: number) {
  const out = await wrk(url, script, connections, seconds, [String(rate), String(wrkThreads(connections))]);
  const found = /^paced n \d+ p50 ([\d.]+) p90 ([\d.]+) p99 ([\d.]+) max ([\d.]+)$/m.exec(out);
  if (!found) throw new Error(`wrk printed no paced report:\n${out}`);
  const [p50, p90, p99, max] = found.slice(1).map(Number) as [number, number, number, number];
  return { rps: requestsPerSecond(out), p50, p90, p99, max, failed: failures(out) };
}

const wrkThreads = (connections: number) => Math.min(2, connections);

async function wrk(url: string, script: string, connections: number, seconds: number, scriptArgs: string[] = []): Promise<string> {
  const args = ['-t', String(wrkThreads(connections)), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '15s', '--latency', '-s', script, url];
  const { stdout } = await promisify(execFile)('wrk', scriptArgs.length > 0 ? [...args, '--', ...scriptArgs] : args, { encoding: 'utf8' });
  return stdout;
}

const requestsPerSecond = (out: string) => Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);

/** Non-2xx responses and socket errors in a wrk report. */
function failures(out: string): number {
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1) ?? [];
  return Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + socketErrors.reduce((sum, count) => sum + Number(count), 0);
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
export const formatMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

/** CPU seconds of `pid` (every thread, ended ones too) and its waited-for children (git), and its peak RSS in MiB. */
export function processCost(pid: number): { cpuSeconds: number; peakRssMiB: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0); // utime stime cutime cstime
  const peak = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuSeconds: ticks / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })), peakRssMiB: Number(peak) / 1024 };
}

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
