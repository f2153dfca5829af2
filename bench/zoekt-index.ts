/**
 * One measured `zoekt-index` build of a directory, the peer beside trawl's
 * index build (docs/benchmarks.md, "Peers", says how to build the binary). Zoekt finds
 * ctags as `universal-ctags` on PATH: a symbols build gets a PATH with only
 * that link to the `ctags` trawl uses, a plain build an empty PATH.
 * Peak RSS is read by GNU time (`apt-get install time`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ZoektMeasurement {
  seconds: number;
  peakRssMiB: number;
  shards: number;
  shardBytes: number;
}

const GNU_TIME = '/usr/bin/time';

export function zoektIndexRun(zoektIndex: string, corpus: string, symbols: boolean): ZoektMeasurement {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-zoekt-'));
  try {
    return zoektIndexInto(zoektIndex, corpus, path.join(scratch, 'index'), symbols);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** Zoekt's index of `corpus` with symbols in `indexDir` under the bench directory, built when it holds no shard. */
export function ensureZoektIndex(zoektIndex: string, corpus: string, indexDir: string): string {
  const built = fs.existsSync(indexDir) && fs.readdirSync(indexDir).some((name) => name.endsWith('.zoekt'));
  if (!built) {
    console.error(`Zoekt indexing ${corpus} into ${indexDir} …`);
    zoektIndexInto(zoektIndex, corpus, indexDir, true);
  }
  return indexDir;
}

/** One measured build of `corpus` into `indexDir`. */
function zoektIndexInto(zoektIndex: string, corpus: string, indexDir: string, symbols: boolean): ZoektMeasurement {
  if (!fs.existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing: apt-get install time`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'trawl-bench-zoekt-'));
  try {
    const binDir = path.join(scratch, 'bin');
    fs.mkdirSync(binDir);
    if (symbols) fs.symlinkSync(commandPath('ctags'), path.join(binDir, 'universal-ctags'));
    const timing = path.join(scratch, 'time');
    const args = ['-f', '%M', '-o', timing, zoektIndex, ...(symbols ? ['-require_ctags'] : []), '-index', indexDir, corpus];
    const started = performance.now();
    execFileSync(GNU_TIME, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PATH: symbols ? binDir : '' } });
    const seconds = (performance.now() - started) / 1000;
    const shardFiles = fs.readdirSync(indexDir).filter((name) => name.endsWith('.zoekt'));
    return {
      seconds,
      peakRssMiB: Number(fs.readFileSync(timing, 'utf8').trim().split('\n').pop()) / 1024,
      shards: shardFiles.length,
      shardBytes: shardFiles.reduce((sum, name) => sum + fs.statSync(path.join(indexDir, name)).size, 0),
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The absolute path of `command` as PATH finds it. */
function commandPath(command: string): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${command} is not on PATH`);
}
