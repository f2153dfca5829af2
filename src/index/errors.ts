/** Why a shard could not be read. */
export type ShardErrorCode =
  | 'TRUNCATED' // the file is shorter than its header or table of contents says
  | 'BAD_MAGIC' // not a trawl shard at all
  | 'UNSUPPORTED_VERSION' // a format version this build cannot read
  | 'CHECKSUM' // a header, table of contents or section checksum mismatch
  | 'CORRUPT'; // a structurally impossible value: an offset out of bounds, unsorted keys, a bad varint

/** The one error a shard reader throws for bad bytes; callers count it, never crash on it. */
export class ShardFormatError extends Error {
  constructor(
    readonly code: ShardErrorCode,
    message: string,
    readonly file?: string,
  ) {
    super(file === undefined ? message : `${file}: ${message}`);
    this.name = 'ShardFormatError';
  }

  /** The same error, naming the shard file it came from. */
  inFile(file: string): ShardFormatError {
    return this.file === undefined ? new ShardFormatError(this.code, this.message, file) : this;
  }
}
