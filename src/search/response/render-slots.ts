/**
 * Shared memory the search workers write rendered responses into, one slot
 * per search in flight, so that a response reaches the front end's thread
 * without a new ArrayBuffer there.
 *
 * Why: docs/design.md, "The hot path's memory".
 *
 * Layout of a slot: PREFIX_ROOM bytes in which the front end writes the
 * response's opening `{"stats":{…},` right-aligned, then the members the
 * worker wrote (`"files":…,"repositoryInfo":…,"isSearchExhaustive":…}`).
 * A slot belongs to one search from `acquire` until its `release`: the
 * worker writes it while the task runs, the front end after the task
 * answered, and uWS copies it when the response is written.
 */
import type { RenderSlotsShare } from '../../worker/search-protocol.js';

/** Bytes before a slot's members for the stats prefix (≈ 450 bytes of JSON with 21 counters, at most ≈ 900). */
export const PREFIX_ROOM = 2048;

/** A response in a slot, valid until `release` (idempotent). */
export interface SlotResponse {
  body: Buffer;
  release(): void;
}

export class RenderSlots {
  private readonly bytes: Buffer;
  /** Free slots, a stack: the slots reused are the ones whose pages are already resident. */
  private readonly free: number[];

  constructor(
    private readonly count: number,
    private readonly slotBytes: number,
  ) {
    if (!Number.isInteger(slotBytes) || slotBytes <= PREFIX_ROOM) throw new RangeError(`slotBytes must be an integer over ${PREFIX_ROOM}, got ${slotBytes}`);
    // Allocated lazily by the kernel: only slots that are used take memory.
    this.bytes = Buffer.from(new SharedArrayBuffer(count * slotBytes));
    this.free = Array.from({ length: count }, (_, index) => count - 1 - index);
  }

  get share(): RenderSlotsShare {
    return { buffer: this.bytes.buffer as SharedArrayBuffer, slotBytes: this.slotBytes };
  }

  get inUse(): number {
    return this.count - this.free.length;
  }

  /** A free slot, or undefined when every slot is taken (the response then travels as bytes of its own). */
  acquire(): number | undefined {
    return this.free.pop();
  }

  release(slot: number): void {
    this.free.push(slot);
  }

  /**
   * The response whose members the worker wrote into `slot` (`membersBytes`
   * bytes), `prefix` before them. The slot goes with the response; a prefix
   * over its room makes a copy, and the slot is free at once.
   */
  response(slot: number, prefix: string, membersBytes: number): SlotResponse {
    const { body, inPlace } = prefixedResponse(this.bytes.subarray(slot * this.slotBytes), prefix, membersBytes);
    if (!inPlace) {
      this.release(slot);
      return { body, release: () => {} };
    }
    let released = false;
    return {
      body,
      release: () => {
        if (released) return;
        released = true;
        this.release(slot);
      },
    };
  }
}

/**
 * A response from `bytes`, which start with PREFIX_ROOM bytes of room and then hold `membersBytes` of members:
 * `prefix` written right-aligned into the room, the body in place; a copy when the prefix outgrows the room.
 */
export function prefixedResponse(bytes: Buffer, prefix: string, membersBytes: number): { body: Buffer; inPlace: boolean } {
  const start = PREFIX_ROOM - Buffer.byteLength(prefix);
  if (start < 0) return { body: Buffer.concat([Buffer.from(prefix), bytes.subarray(PREFIX_ROOM, PREFIX_ROOM + membersBytes)]), inPlace: false };
  bytes.write(prefix, start);
  return { body: bytes.subarray(start, PREFIX_ROOM + membersBytes), inPlace: true };
}

/**
 * Worker side: the parts of `members`, one after the other, written into
 * `slot` after its prefix room (`results` null, `slotBytesUsed` written);
 * or, with no slot or when they do not fit, in `results`, a buffer of their
 * own laid out as a slot is (PREFIX_ROOM bytes of room, then the members),
 * so that the task's answer can hand its memory over (search-thread.ts) and
 * the front end write the prefix in place (`prefixedResponse`).
 */
export function placeMembers(
  share: RenderSlotsShare,
  slot: number | undefined,
  members: readonly Uint8Array[],
): { results: Uint8Array | null; slotBytesUsed: number } {
  const length = members.reduce((sum, part) => sum + part.length, 0);
  const room = share.slotBytes - PREFIX_ROOM;
  const inSlot = slot !== undefined && length <= room;
  // Memory of its own, not Buffer's pool (it is handed over); not zeroed: a body holds only bytes written.
  const target = inSlot ? new Uint8Array(share.buffer, slot * share.slotBytes + PREFIX_ROOM, room) : Buffer.allocUnsafeSlow(PREFIX_ROOM + length);
  let at = inSlot ? 0 : PREFIX_ROOM;
  for (const part of members) {
    target.set(part, at);
    at += part.length;
  }
  return inSlot ? { results: null, slotBytesUsed: length } : { results: target, slotBytesUsed: 0 };
}
