/**
 * Blob contents in bulk from one long-lived `git cat-file --batch` process:
 * requests are pipelined and answered in order.
 * Not nodegit's Repository.getBlob: per blob, its call overhead and inflate on
 * the libuv pool cost the index build several times the CPU (docs/benchmarks.md, "Index build").
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

interface Pending {
  oid: string;
  resolve: (content: Buffer) => void;
  reject: (error: Error) => void;
}

const OID = /^[0-9a-f]{40}$/;

export class BlobStream {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending: Pending[] = [];
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  /** Size of the blob whose bytes are being received, or -1 while a header is expected. */
  private expecting = -1;
  private failure: Error | null = null;
  /** Request lines not yet written (`request`). */
  private requests = '';

  constructor(readonly repositoryPath: string) {
    // safe.directory: the daemon's user need not own the repositories it indexes read-only.
    this.child = spawn('git', ['-c', `safe.directory=${repositoryPath}`, 'cat-file', '--batch'], {
      cwd: repositoryPath,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, GIT_DIR: undefined },
    });
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString();
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stdin.on('error', () => {}); // reported through 'exit' / 'error'
    this.child.on('error', (error) => this.fail(new Error(`git cat-file could not run: ${error.message}`)));
    this.child.on('exit', (code, signal) =>
      this.fail(new Error(`git cat-file exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim().slice(0, 500)}` : ''}`)),
    );
  }

  /** The bytes of the blob `oid` (40 hex digits). */
  read(oid: string): Promise<Buffer> {
    if (this.failure) return Promise.reject(this.failure);
    if (!OID.test(oid)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(oid)}`));
    return new Promise((resolve, reject) => {
      this.pending.push({ oid, resolve, reject });
      this.request(`${oid}\n`);
    });
  }

  /** Queues a request line: the lines of one tick reach git in one write, not a system call each. */
  private request(line: string): void {
    if (this.requests === '') process.nextTick(() => this.flushRequests());
    this.requests += line;
  }

  private flushRequests(): void {
    const lines = this.requests;
    this.requests = '';
    if (!this.child.stdin.writableEnded) this.child.stdin.write(lines);
  }

  close(): void {
    this.failure ??= new Error('blob stream closed');
    this.child.stdin.end();
    this.child.kill();
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    for (;;) {
      if (this.expecting < 0) {
        const head = this.take(this.headerLength());
        if (head === null) return;
        const header = head.toString('latin1', 0, head.length - 1);
        const [, type, size] = header.split(' ');
        if (type === 'blob' && size !== undefined) this.expecting = Number(size);
        else this.pending.shift()?.reject(new Error(`git cat-file: ${header}`));
        continue;
      }
      const body = this.take(this.expecting + 1); // the content and its trailing newline
      if (body === null) return;
      this.expecting = -1;
      this.pending.shift()?.resolve(body.subarray(0, body.length - 1));
    }
  }

  /** Bytes up to and including the next newline, or -1 when no newline has arrived. */
  private headerLength(): number {
    let seen = 0;
    for (const chunk of this.chunks) {
      const newline = chunk.indexOf(10);
      if (newline !== -1) return seen + newline + 1;
      seen += chunk.length;
    }
    return -1;
  }

  /** Removes and returns the next `length` buffered bytes, or null when fewer have arrived. */
  private take(length: number): Buffer | null {
    if (length < 0 || this.bufferedBytes < length) return null;
    const first = this.chunks[0]!;
    let taken: Buffer;
    if (first.length >= length) {
      taken = first.subarray(0, length); // no copy: small blobs share their chunk
      if (first.length === length) this.chunks.shift();
      else this.chunks[0] = first.subarray(length);
    } else {
      taken = Buffer.allocUnsafeSlow(length);
      let at = 0;
      while (at < length) {
        const chunk = this.chunks[0]!;
        const part = Math.min(chunk.length, length - at);
        chunk.copy(taken, at, 0, part);
        at += part;
        if (part === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(part);
      }
    }
    this.bufferedBytes -= length;
    return taken;
  }

  private fail(error: Error): void {
    if (this.failure && this.pending.length === 0) return;
    this.failure ??= error;
    for (const pending of this.pending.splice(0)) pending.reject(error);
  }
}
