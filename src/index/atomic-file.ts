/**
 * Atomic file publishing: bytes go to `<path>.tmp`, are fsynced, renamed over
 * `<path>`, and the directory is fsynced, so a reader sees the old file or
 * the complete new one, never a torn one, even across a crash.
 */
import fs from 'node:fs';
import path from 'node:path';

const WRITEV_BATCH_BYTES = 4 << 20;

export class AtomicFileWriter {
  readonly tmpPath: string;
  private fd: number | null;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** Bytes accepted so far. */
  position = 0;

  constructor(readonly finalPath: string) {
    this.tmpPath = `${finalPath}.tmp`;
    this.fd = fs.openSync(this.tmpPath, 'w', 0o644);
  }

  write(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    this.position += chunk.length;
    if (this.pendingBytes >= WRITEV_BATCH_BYTES || this.pending.length >= 1024) this.flush();
  }

  /** Replaces bytes already written at `position` (e.g. a header filled in last). */
  overwrite(chunk: Uint8Array, position: number): void {
    if (position + chunk.length > this.position) throw new RangeError('overwrite past the end of the written bytes');
    this.flush();
    fs.writeSync(this.openFd(), chunk, 0, chunk.length, position);
  }

  /** Flushes, fsyncs, renames into place and fsyncs the directory. */
  commit(): void {
    this.flush();
    const fd = this.openFd();
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    this.fd = null;
    fs.renameSync(this.tmpPath, this.finalPath);
    fsyncDirectory(path.dirname(this.finalPath));
  }

  /** Drops the temporary file; safe to call after a failed write or twice. */
  abort(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
    fs.rmSync(this.tmpPath, { force: true });
  }

  private flush(): void {
    const fd = this.openFd();
    let chunks = this.pending;
    while (chunks.length > 0) {
      const written = fs.writevSync(fd, chunks);
      chunks = dropWritten(chunks, written);
    }
    this.pending = [];
    this.pendingBytes = 0;
  }

  private openFd(): number {
    if (this.fd === null) throw new Error(`${this.tmpPath}: writer already closed`);
    return this.fd;
  }
}

/** The chunks still to write after `written` bytes of them went out (writev may be partial). */
function dropWritten(chunks: Uint8Array[], written: number): Uint8Array[] {
  let index = 0;
  while (index < chunks.length && written >= chunks[index]!.length) written -= chunks[index++]!.length;
  if (index === chunks.length) return [];
  const rest = chunks.slice(index);
  rest[0] = rest[0]!.subarray(written);
  return rest;
}

function fsyncDirectory(directory: string): void {
  const fd = fs.openSync(directory, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a whole small file atomically. */
export function writeFileAtomicSync(finalPath: string, data: string | Uint8Array): void {
  const writer = new AtomicFileWriter(finalPath);
  try {
    writer.write(typeof data === 'string' ? Buffer.from(data) : data);
    writer.commit();
  } catch (error) {
    writer.abort();
    throw error;
  }
}

/** The text of a file published with `writeFileAtomicSync`, or null when there is none. */
export function readPublishedFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
