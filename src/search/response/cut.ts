/**
 * The one cut of a search's ranked files: at `matches` results (match ranges; files for type:file and
 * type:repo) and at a bound on the content the answer carries. Files are offered best first.
 */

/**
 * Bytes of file content (chunks, and whole files with `whole`) one response may carry, whatever `matches`
 * asks: past it the rest of the files are left out and the response says so (`FLUSH_REASON_MAX_SIZE`, not
 * exhaustive). 100,000 matches with `whole` over the Linux corpus would otherwise build a response of its whole 1.3 GB.
 */
export const RESPONSE_CONTENT_BYTES = 64 << 20;

export class Cut {
  /** Match ranges the files taken hold (the answer's `actualMatchCount`). */
  matchRanges = 0;
  /** Whether the bound on content left files out. */
  tooLarge = false;
  private contentBytes = 0;

  /** `budget`: the request's `matches`. */
  constructor(
    public budget: number,
    private readonly maxContentBytes = RESPONSE_CONTENT_BYTES,
  ) {}

  /** Whether another file may be taken: results are left, and the content taken is within the bound (else `tooLarge`). */
  room(): boolean {
    if (this.budget <= 0) return false;
    if (this.contentBytes > this.maxContentBytes) this.tooLarge = true;
    return !this.tooLarge;
  }

  /** Takes a file that counts `counted` results against `matches`, holding `matchRanges` ranges and `contentBytes` of content. */
  take(counted: number, matchRanges: number, contentBytes: number): void {
    this.budget -= counted;
    this.matchRanges += matchRanges;
    this.contentBytes += contentBytes;
  }
}
