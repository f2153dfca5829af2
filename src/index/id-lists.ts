/**
 * Room for the short-lived document-id lists of a shard's search (decoded
 * postings, intersections, unions), carved from one buffer per thread. A
 * list used to be an ArrayBuffer of its own: a malloc and a backing store for
 * V8 to track and sweep, and for a list of up to 16 ids, held inside the heap,
 * another when the addon was handed it; a shard's search makes dozens.
 *
 * A list taken here is valid until `recycleIdLists()`, which a shard's search
 * calls as it starts: copy a list that must outlive the shard search that
 * made it. Lists taken by code that never recycles stay valid too: when the
 * room is full, lists come from a new buffer and the old one lives on as long
 * as a list in it does.
 */

const INITIAL_IDS = 1 << 16;

let room = new Uint32Array(INITIAL_IDS);
let used = 0;
/** Ids taken since the last recycle, in this room and any it replaced. */
let taken = 0;

/** An id list of `length` ids, of undefined content, valid until the next recycleIdLists. */
export function takeIdList(length: number): Uint32Array {
  if (used + length > room.length) {
    room = new Uint32Array(Math.max(room.length, length));
    used = 0;
  }
  const list = room.subarray(used, used + length);
  used += length;
  taken += length;
  return list;
}

/** A copy of `list` taken as takeIdList takes lists. */
export function copyIdList(list: Uint32Array): Uint32Array {
  const copy = takeIdList(list.length);
  copy.set(list);
  return copy;
}

/** Makes the room of every list taken so far free for new lists (their contents are then undefined). */
export function recycleIdLists(): void {
  // Sized for what the last shard's search took, so the next one like it fits in one buffer.
  if (taken > room.length) room = new Uint32Array(taken);
  used = 0;
  taken = 0;
}
