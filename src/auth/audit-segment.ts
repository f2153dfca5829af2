/**
 * One audit log segment as read for a listing: its records' framing is
 * checked and their offsets kept, but a record is decoded only when it is
 * shown or a binary search over time needs its `at` — a segment holds up to
 * 64 MiB of records (about 400,000), and a listing shows one page.
 */
import { decodeRecordAt, recordOffsets, type StateRecord } from './state-record.js';

export class AuditSegment {
  private readonly offsets: number[];
  /** Byte ranges of damage (a flipped bit, a bad sector) with intact records after them, which are read. */
  readonly damaged: readonly { from: number; to: number }[];
  /** Bytes after the last intact record: a write cut short or under way, or in a closed segment a truncated file. */
  readonly tailBytes: number;

  constructor(private readonly bytes: Buffer) {
    let end: number;
    ({ offsets: this.offsets, damaged: this.damaged, end } = recordOffsets(bytes));
    this.tailBytes = bytes.length - end;
  }

  get count(): number {
    return this.offsets.length;
  }

  /** Record `index`, oldest first. */
  record(index: number): StateRecord {
    return decodeRecordAt(this.bytes, this.offsets[index]!);
  }

  /**
   * The indexes [from, to) of the records made in [since, until] (ms; either
   * open). Records are appended in time order, so both ends are found by
   * binary search.
   */
  window(since: number | undefined, until: number | undefined): { from: number; to: number } {
    const from = since === undefined ? 0 : this.firstIndex((at) => at >= since);
    const to = until === undefined ? this.count : this.firstIndex((at) => at > until);
    return { from, to: Math.max(from, to) };
  }

  /** The first index whose record's time satisfies `reached` (which stays true once it is). */
  private firstIndex(reached: (at: number) => boolean): number {
    let low = 0;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (reached(this.record(middle).at)) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
