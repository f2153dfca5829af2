/**
 * Writes benchmark results into docs/benchmarks.md. Each benchmark owns one
 * block between `<!-- NAME:start -->` and `<!-- NAME:end -->`, replaced whole
 * on every run, stamped with the machine and the commit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

import { fileURLToPath } from 'node:url';

/** Benchmarks run compiled, from dist/bench/. */
const REPORT = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

export function machineDescription(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${cpu}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/** The load average now (1, 5, 15 min), for a benchmark to print at its start and end: these machines are shared. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(', ');
}

export function commitDescription(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim();
    // This report itself changes with every benchmark run: it does not make the code measured uncommitted.
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)docs/benchmarks.md'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${commit} + uncommitted changes` : commit;
  } catch {
    return 'unknown commit';
  }
}

/** `text` with each paragraph of prose on one line: tables, lists, headings and comments stay as they are. */
export function paragraphsOnOneLine(text: string): string {
  const isProse = (line: string) => line.trim() !== '' && !/^(\||- |\* |#|<!--|```)/.test(line);
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    const last = lines.length - 1;
    if (last >= 0 && isProse(line) && isProse(lines[last]!)) lines[last] += ` ${line.trim()}`;
    else lines.push(line);
  }
  return lines.join('\n');
}

/** Replaces (or appends) the named block of docs/benchmarks.md with `body`, its paragraphs each on one line. */
export function writeReportBlock(name: string, body: string): string {
  const file = REPORT;
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const stamped = `${start}\n_Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; commit ${commitDescription()}._\n\n${paragraphsOnOneLine(body.trim())}\n${end}`;
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  const updated = from !== -1 && to > from ? text.slice(0, from) + stamped + text.slice(to + end.length) : `${text.trimEnd()}\n\n${stamped}\n`;
  fs.writeFileSync(file, updated);
  return file;
}
