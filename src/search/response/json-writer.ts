/**
 * JSON text written as UTF-8 straight into memory, in pieces: how a response's
 * files are rendered, with no object per range and no string per member to
 * encode again, and no copy to grow (docs/design.md, "The hot path's memory").
 * A file's content is escaped from its bytes in the shard, as JSON.stringify
 * escapes the string they decode to.
 */

/** JSON.stringify's escape of each byte below 0x20 and of '"' and '\', as bytes; 0 for a byte written as it is. */
const ESCAPES: (Uint8Array | 0)[] = Array.from({ length: 0x80 }, (_, byte) => {
  const escaped = JSON.stringify(String.fromCharCode(byte)).slice(1, -1);
  return escaped.length > 1 ? Buffer.from(escaped, 'latin1') : 0;
});

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** ASCII JSON text (punctuation and member names) as bytes, for JsonWriter.encoded. */
export function encodedJson(ascii: string): Uint8Array {
  return Buffer.from(ascii, 'latin1');
}

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

  /** JSON text encoded once (`encodedJson`): what is written per range, copied faster than a string is read. */
  encoded(text: Uint8Array): void {
    this.reserve(text.length);
    this.bytes.set(text, this.length);
    this.length += text.length;
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

  /** JSON.stringify(content.toString('utf8', from, to)), escaped from the bytes themselves when they are valid UTF-8. */
  utf8String(content: Uint8Array, from: number, to: number): void {
    // Every byte may become a six-byte \u00XX; the quotes.
    this.reserve(6 * (to - from) + 2);
    const { bytes } = this;
    const start = this.length;
    let at = start;
    bytes[at++] = QUOTE;
    for (let i = from; i < to; ) {
      const byte = content[i]!;
      if (byte < 0x80) {
        const escape = ESCAPES[byte]!;
        if (escape === 0) {
          bytes[at++] = byte;
        } else {
          for (let k = 0; k < escape.length; k++) bytes[at++] = escape[k]!;
        }
        i++;
        continue;
      }
      const size = sequenceLength(content, i, to);
      if (size === 0) {
        // Not UTF-8: the decoder's replacement characters are the string's, so the string is written.
        this.length = start;
        return this.string(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8', from, to));
      }
      for (let k = 0; k < size; k++) bytes[at++] = content[i + k]!;
      i += size;
    }
    bytes[at++] = QUOTE;
    this.length = at;
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

/**
 * Bytes of the well-formed UTF-8 sequence starting with the non-ASCII byte at
 * content[at] and ending before `to`, or 0 when it is not one (an overlong form,
 * a surrogate, past U+10FFFF, a stray continuation byte or a cut sequence).
 */
function sequenceLength(content: Uint8Array, at: number, to: number): number {
  const lead = content[at]!;
  let size: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) size = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    size = 3;
    if (lead === 0xe0) low = 0xa0;
    else if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    size = 4;
    if (lead === 0xf0) low = 0x90;
    else if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (at + size > to) return 0;
  const second = content[at + 1]!;
  if (second < low || second > high) return 0;
  for (let k = 2; k < size; k++) {
    const next = content[at + k]!;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return size;
}
