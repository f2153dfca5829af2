/**
 * JSON text written as UTF-8 straight into memory, in pieces: how a response's
 * files are rendered, with no object per range and no string per member to
 * encode again, and no copy to grow (docs/design.md, "The hot path's memory").
 * A file's content is escaped from its bytes in the shard, as JSON.stringify
 * escapes the string they decode to, by the addon, which also writes the
 * ranges and chunks (`direct`).
 */
import { native } from '../../../native/index.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A new piece of memory is twice the last one, up to this, or what one write needs when that is more. */
const MAX_PIECE_BYTES = 16 * 1024 * 1024;

export class JsonWriter {
  /** The piece being written, and how much of it is. */
  private bytes: Buffer;
  private length = 0;
  /** The pieces written before `bytes`, in order. */
  private readonly written: Buffer[] = [];
  private writtenBytes = 0;

  /** `memory`: where to start writing (a thread's scratch, reused response after response), or how many bytes to allocate. */
  constructor(memory: Buffer | number = 16 * 1024) {
    this.bytes = typeof memory === 'number' ? Buffer.allocUnsafeSlow(memory) : memory;
  }

  /** Bytes written so far. */
  get byteLength(): number {
    return this.writtenBytes + this.length;
  }

  /** The JSON written so far, in order: views of this writer's memory. */
  pieces(): Buffer[] {
    return [...this.written, this.bytes.subarray(0, this.length)];
  }

  /** Text that is already JSON and ASCII: punctuation and member names. */
  raw(ascii: string): void {
    this.reserve(ascii.length);
    const { bytes } = this;
    let at = this.length;
    for (let i = 0; i < ascii.length; i++) bytes[at++] = ascii.charCodeAt(i);
    this.length = at;
  }

  /** A non-negative integer (positions, ids); anything else as JSON.stringify writes it. */
  integer(value: number): void {
    if (!(value >= 0 && value <= 0xffffffff && Number.isInteger(value))) return this.raw(JSON.stringify(value));
    this.reserve(10);
    let digits = 1;
    for (let rest = value; rest >= 10; rest = (rest / 10) >>> 0) digits++;
    const { bytes } = this;
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      bytes[--at] = 0x30 + (rest % 10);
      rest = (rest / 10) >>> 0;
    } while (rest > 0);
  }

  /** A string, as JSON.stringify writes it. */
  string(text: string): void {
    this.reserve(text.length + 2);
    const { bytes } = this;
    let at = this.length;
    bytes[at++] = QUOTE;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      // Anything to escape or to encode: the general case (nothing was kept: `length` is unchanged).
      if (code < 0x20 || code === QUOTE || code === BACKSLASH || code >= 0x80) return this.value(text);
      bytes[at++] = code;
    }
    bytes[at++] = QUOTE;
    this.length = at;
  }

  /** A value as JSON.stringify writes it (arrays and objects of few members). */
  value(value: unknown): void {
    const json = JSON.stringify(value);
    this.reserve(3 * json.length);
    const { bytes } = this;
    let at = this.length;
    for (let i = 0; i < json.length; i++) {
      const code = json.charCodeAt(i);
      if (code >= 0x80) {
        at = this.length + bytes.write(json, this.length, 'utf8');
        break;
      }
      bytes[at++] = code;
    }
    this.length = at;
  }

  /** JSON.stringify(content.toString('utf8', from, to)), escaped from the bytes by the addon. */
  utf8String(content: Uint8Array, from: number, to: number): void {
    this.direct((bytes, at) => native.writeJsonString(content, from, to, bytes, at));
  }

  /**
   * What `write` writes straight into this writer's memory, from `at`: it returns where it stopped, or minus
   * the room it needs when what is left of the piece is less (the addon's writers, native/index.ts).
   */
  direct(write: (bytes: Buffer, at: number) => number): void {
    let end = write(this.bytes, this.length);
    if (end < 0) {
      this.reserve(-end);
      end = write(this.bytes, this.length);
      if (end < 0) throw new Error(`a direct write asked for ${-end} bytes of room, given ${this.bytes.length - this.length}`);
    }
    this.length = end;
  }

  /** Room for `bytes` more in one piece: the rest of this one, or a new one (what is written is never copied). */
  private reserve(bytes: number): void {
    if (this.length + bytes <= this.bytes.length) return;
    if (this.length > 0) this.written.push(this.bytes.subarray(0, this.length));
    this.writtenBytes += this.length;
    this.bytes = Buffer.allocUnsafeSlow(Math.max(bytes, Math.min(2 * this.bytes.length, MAX_PIECE_BYTES)));
    this.length = 0;
  }
}
