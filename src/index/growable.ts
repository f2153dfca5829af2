/** An append-only Uint32 vector that doubles its storage as it grows. */
export class GrowableUint32Array {
  private data: Uint32Array;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Uint32Array(Math.max(16, initialCapacity));
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = value;
  }

  /**
   * Makes room for `extra` more values and returns the backing array, for
   * writers (e.g. native code) that fill it directly and then set `length`.
   */
  reserve(extra: number): Uint32Array {
    while (this.data.length - this.length < extra) this.grow();
    return this.data;
  }

  /** A view of the values pushed so far (shares storage until the next push). */
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }

  private grow(): void {
    const bigger = new Uint32Array(this.data.length * 2);
    bigger.set(this.data);
    this.data = bigger;
  }
}
