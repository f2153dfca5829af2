/** ripgrep over the corpus tree for a benchmark query: exhaustive, as `rg -c`, process start included. */
import { execFileSync, spawnSync } from 'node:child_process';
import type { BenchQuery } from './queries.js';

/** Milliseconds of one ripgrep run of `q` over `corpus` (path queries: `rg --files` filtered by the query's regex). */
export function ripgrepOnce(corpus: string, q: BenchQuery): number {
  const started = performance.now();
  const common = ['--no-config', '--no-ignore', '--hidden', '-g', '!.git'];
  if (q.rgPathRegex) {
    const out = execFileSync('rg', [...common, '--files', '.'], { cwd: corpus, maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    out.split('\n').filter((file) => q.rgPathRegex!.test(file));
  } else {
    // An explicit path and no stdin: with a piped stdin and no path, rg would search stdin.
    const result = spawnSync('rg', [...common, '-c', ...q.rg!, '--', ...(q.rgPaths ?? ['.'])], {
      cwd: corpus,
      maxBuffer: 1 << 30,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (result.status !== 0 && result.status !== 1) throw new Error(`rg failed: ${result.stderr}`);
  }
  return performance.now() - started;
}
