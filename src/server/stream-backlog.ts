/**
 * What streamed searches hold for their clients: the bytes of parts made and not yet written, per stream and over
 * all streams. A capped search's stream is cut off past either bound; an exhaustive search's next part waits
 * until its own backlog is small and all streams' are under their bound (docs/operations.md, "Limits and defences").
 */
export interface BacklogLimits {
  /** A capped stream past this many bytes is cut off. */
  perStream: number;
  /** An exhaustive stream makes its next part once at most this many bytes of its own wait. */
  pacedPerStream: number;
  /** All streams together: past it capped streams are cut off, and exhaustive ones wait. */
  allStreams: number;
}

export const STREAM_BACKLOG_LIMITS: BacklogLimits = { perStream: 32 << 20, pacedPerStream: 4 << 20, allStreams: 256 << 20 };

/** The backlogs of a daemon's streams. */
export class Backlogs {
  private bytesInAll = 0;
  /** Exhaustive streams waiting to make their next part. */
  private readonly waiting = new Set<Backlog>();

  constructor(readonly limits: BacklogLimits = STREAM_BACKLOG_LIMITS) {}

  /** Bytes made for all streams and not yet written. */
  get bytes(): number {
    return this.bytesInAll;
  }

  open(): Backlog {
    return new Backlog(this);
  }

  /** @internal Backlog's bookkeeping. */
  change(bytes: number): void {
    this.bytesInAll += bytes;
    if (bytes >= 0) return;
    for (const backlog of this.waiting) if (backlog.wake()) this.waiting.delete(backlog);
  }

  /** @internal */
  wait(backlog: Backlog): void {
    this.waiting.add(backlog);
  }

  /** Whether `own` bytes of one exhaustive stream may grow. */
  paced(own: number): boolean {
    return own <= this.limits.pacedPerStream && this.bytesInAll <= this.limits.allStreams;
  }
}

/** One stream's backlog. */
export class Backlog {
  private own = 0;
  private waiters: (() => void)[] = [];
  /** Set once the stream's search is stopped (its client gone, say): it waits for nothing more. */
  private closed = false;

  constructor(private readonly all: Backlogs) {}

  /**
   * `bytes` more made for the client; false when a capped stream is past its bound or all streams are past
   * theirs (it should be cut off: the bytes are not counted).
   */
  add(bytes: number, capped: boolean): boolean {
    const { perStream, allStreams } = this.all.limits;
    if (capped && (this.own + bytes > perStream || this.all.bytes + bytes > allStreams)) return false;
    this.own += bytes;
    this.all.change(bytes);
    return true;
  }

  /** `bytes` written to the client, or dropped. */
  taken(bytes: number): void {
    this.own -= bytes;
    this.all.change(-bytes);
    this.wake();
  }

  /** Its search is stopped: what waits, and whatever asks later, goes on at once (to find itself cancelled). */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /** Resolves once this stream may make its next part (Backlogs.paced), or it is closed. */
  readonly ready = (): Promise<void> => {
    if (this.closed || this.all.paced(this.own)) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.all.wait(this);
    });
  };

  /** @internal Resolves the waiters once paced; whether none is left. */
  wake(): boolean {
    if (this.waiters.length === 0) return true;
    if (!this.closed && !this.all.paced(this.own)) return false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
    return true;
  }
}
