/**
 * The searches in flight, counted by caller, at most `limit`. A caller alone may fill the queue; when it is
 * full, a caller holding at least two fewer than the caller holding the most still gets in: the youngest of
 * that caller's searches that no worker has answered yet gives up its place (docs/design.md, "Workers").
 */

/** A search's place in the queue. */
export class Admission {
  /** Set once the search gave its place to another caller's. */
  displaced = false;

  /** `onDisplaced` stops the search; without it (a regex check, say) the place is never given up. */
  constructor(
    readonly caller: string,
    private onDisplaced: (() => void) | undefined,
  ) {}

  /** A worker answered a task of the search: it keeps its place. */
  keep(): void {
    this.onDisplaced = undefined;
  }

  /** Gives the place up if the search still may; whether it did. */
  displace(): boolean {
    const stop = this.onDisplaced;
    if (stop === undefined) return false;
    this.onDisplaced = undefined;
    this.displaced = true;
    stop();
    return true;
  }
}

export class Admissions {
  private held = 0;
  /** Each caller's searches in flight, oldest first. */
  private readonly heldBy = new Map<string, Set<Admission>>();
  /** The callers by how many searches they hold, so the one holding most is found at once. */
  private readonly callersHolding = new Map<number, Set<string>>();
  private most = 0;

  constructor(private readonly limit: number) {}

  /** Searches in flight. */
  get size(): number {
    return this.held;
  }

  /** A place for a search of `caller` (displacing another caller's when full, see above), or undefined: the queue is full. */
  admit(caller: string, onDisplaced?: () => void): Admission | undefined {
    if (this.held >= this.limit && !this.displaceFor(caller)) return undefined;
    const admission = new Admission(caller, onDisplaced);
    const mine = this.heldBy.get(caller) ?? new Set<Admission>();
    this.heldBy.set(caller, mine);
    mine.add(admission);
    this.held++;
    this.moveCaller(caller, mine.size - 1, mine.size);
    return admission;
  }

  /** Gives the place of `admission` back; again (a displaced search ending) does nothing. */
  release(admission: Admission): void {
    const mine = this.heldBy.get(admission.caller);
    if (!mine?.delete(admission)) return;
    this.held--;
    if (mine.size === 0) this.heldBy.delete(admission.caller);
    this.moveCaller(admission.caller, mine.size + 1, mine.size);
  }

  /** Makes room for `caller` by displacing a search of the caller holding most, if it holds two more and has one to give. */
  private displaceFor(caller: string): boolean {
    const heaviest = this.callersHolding.get(this.most)?.values().next().value;
    if (heaviest === undefined || (this.heldBy.get(caller)?.size ?? 0) + 2 > this.most) return false;
    const theirs = [...this.heldBy.get(heaviest)!];
    for (let i = theirs.length - 1; i >= 0; i--) {
      if (theirs[i]!.displace()) {
        this.release(theirs[i]!);
        return true;
      }
    }
    return false;
  }

  private moveCaller(caller: string, from: number, to: number): void {
    const before = this.callersHolding.get(from);
    before?.delete(caller);
    if (before?.size === 0) this.callersHolding.delete(from);
    if (to > 0) {
      const after = this.callersHolding.get(to) ?? new Set<string>();
      this.callersHolding.set(to, after);
      after.add(caller);
    }
    if (to > this.most) this.most = to;
    else if (from === this.most && !this.callersHolding.has(from)) this.most = from - 1;
  }
}
