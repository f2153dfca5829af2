/**
 * universal-ctags in batch: long-lived `ctags --_interactive` processes fed
 * file after file over stdin (no process per file), answering in order.
 * A process that dies fails only the files it had in flight; the next file
 * starts a fresh process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { CtagsTag } from '../index/symbols.js';
import { primaryExtension } from '../language/languages.js';

const CTAGS_ARGS = ['--_interactive=sandbox', '--output-format=json', '--fields=NnKsZ'];
/** A file ctags has not finished after this long is taken as a hang: the process is killed. */
const DEFAULT_FILE_TIMEOUT_MS = 60_000;

interface Pending {
  tags: CtagsTag[];
  bytes: number;
  resolve: (tags: CtagsTag[]) => void;
  reject: (error: Error) => void;
}

class CtagsProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private buffered = '';
  private failure: Error | null = null;
  /** Bytes of content sent and not yet answered. */
  outstandingBytes = 0;
  /** Armed while ctags works on the file at the head of the queue. */
  private watchdog: NodeJS.Timeout | null = null;

  constructor(
    command: string,
    private readonly fileTimeoutMs: number,
  ) {
    this.child = spawn(command, CTAGS_ARGS, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => this.onOutput(text));
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString();
    });
    this.child.stdin.on('error', () => {}); // reported through 'exit' / 'error' below
    this.child.on('error', (error) => this.fail(new Error(`ctags (${command}) could not run: ${error.message}`)));
    this.child.on('exit', (code, signal) =>
      this.fail(new Error(`ctags exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim().slice(0, 500)}` : ''}`)),
    );
  }

  get alive(): boolean {
    return this.failure === null;
  }

  tags(filename: string, content: Buffer): Promise<CtagsTag[]> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ tags: [], bytes: content.length, resolve, reject });
      if (this.pending.length === 1) this.armWatchdog();
      this.outstandingBytes += content.length;
      this.child.stdin.write(JSON.stringify({ command: 'generate-tags', filename, size: content.length }) + '\n');
      this.child.stdin.write(content);
    });
  }

  close(): Promise<void> {
    if (this.failure) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.stdin.end();
    });
  }

  private onOutput(text: string): void {
    const lastNewline = text.lastIndexOf('\n');
    if (lastNewline === -1) {
      this.buffered += text;
      return;
    }
    // Every complete line of this chunk in one JSON.parse: far cheaper than a parse per tag.
    const complete = this.buffered + text.slice(0, lastNewline);
    this.buffered = text.slice(lastNewline + 1);
    let records: ({ _type?: string } & Partial<CtagsTag>)[];
    try {
      records = JSON.parse(`[${complete.replaceAll('\n', ',')}]`);
    } catch {
      records = complete.split('\n').flatMap((line) => {
        try {
          return [JSON.parse(line)];
        } catch {
          return []; // a non-JSON warning line belongs to no tag
        }
      });
    }
    for (const record of records) this.onRecord(record);
  }

  private onRecord(record: { _type?: string } & Partial<CtagsTag>): void {
    const head = this.pending[0];
    if (record._type === 'tag' && head) {
      head.tags.push({ name: record.name!, line: record.line!, kind: record.kind ?? '', scope: record.scope, scopeKind: record.scopeKind });
    } else if (record._type === 'completed' && head) {
      this.pending.shift();
      this.outstandingBytes -= head.bytes;
      head.resolve(head.tags);
      this.armWatchdog();
    }
  }

  private armWatchdog(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
    if (this.pending.length === 0 || this.failure) return;
    this.watchdog = setTimeout(() => {
      this.fail(new Error(`ctags did not finish a file within ${this.fileTimeoutMs} ms and was killed`));
      this.child.kill('SIGKILL');
    }, this.fileTimeoutMs);
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    if (this.watchdog) clearTimeout(this.watchdog);
    for (const pending of this.pending.splice(0)) pending.reject(error);
    this.outstandingBytes = 0;
  }
}

/** `tools/run` in Python → `tools/run.py`: ctags guesses languages from names only (its -G costs ~14% more time). */
function nameForParserChoice(filename: string, language: string): string {
  const basename = filename.slice(filename.lastIndexOf('/') + 1);
  const extension = basename.includes('.') ? undefined : primaryExtension(language);
  return extension ? filename + extension : filename;
}

/** A few ctags processes; each file goes to the one with the least work queued. */
export class CtagsPool {
  private readonly processes: CtagsProcess[] = [];

  constructor(
    private readonly command: string,
    private readonly size: number,
    private readonly fileTimeoutMs = DEFAULT_FILE_TIMEOUT_MS,
  ) {}

  /**
   * Tags of one file. ctags picks its parser from the file name; `language`
   * (linguist's, from the shebang too) names an extension-less script for it.
   * Rejects when ctags fails on this file; other files are unaffected.
   */
  tags(filename: string, content: Buffer, language: string): Promise<CtagsTag[]> {
    return this.pick().tags(nameForParserChoice(filename, language), content);
  }

  async close(): Promise<void> {
    await Promise.all(this.processes.splice(0).map((process) => process.close()));
  }

  private pick(): CtagsProcess {
    for (let i = this.processes.length - 1; i >= 0; i--) if (!this.processes[i]!.alive) this.processes.splice(i, 1);
    if (this.processes.length < this.size) {
      const fresh = new CtagsProcess(this.command, this.fileTimeoutMs);
      this.processes.push(fresh);
      return fresh;
    }
    return this.processes.reduce((best, process) => (process.outstandingBytes < best.outstandingBytes ? process : best));
  }
}
