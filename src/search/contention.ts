/**
 * How many callers have tasks with the search workers (queued, waiting in a worker's port or running), in memory
 * the workers share: while two or more do, a search task that has run its slice gives its worker up and the rest
 * of its shards go to a task of their own, queued in its caller's turn (docs/design.md, "Workers").
 */
export class CallerContention {
  /** What a worker reads (`contended`). */
  readonly share = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  private readonly callers = new Int32Array(this.share);
  private readonly tasksOf = new Map<string, number>();

  /** A task of `caller` was given to the workers. */
  add(caller: string): void {
    this.tasksOf.set(caller, (this.tasksOf.get(caller) ?? 0) + 1);
    Atomics.store(this.callers, 0, this.tasksOf.size);
  }

  /** A task of `caller` was answered. */
  remove(caller: string): void {
    const left = this.tasksOf.get(caller)! - 1;
    if (left === 0) this.tasksOf.delete(caller);
    else this.tasksOf.set(caller, left);
    Atomics.store(this.callers, 0, this.tasksOf.size);
  }
}

/** Whether, by the counts in `share` (CallerContention's), more than one caller has tasks with the workers. */
export function contended(share: Int32Array): boolean {
  return Atomics.load(share, 0) >= 2;
}
