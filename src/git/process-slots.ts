/**
 * Git child processes (blame) run at most `slots` at once, at a lower CPU priority than the search workers;
 * requests waiting for one are served caller by caller in turn, first in, first out within a caller, and at
 * most `maxWaiting` wait in all (docs/operations.md, "Limits and defences"). One caller's hundred blames delay
 * another caller's next one by a turn, not by the hundred; a request whose limit fires while it waits leaves.
 */
import { GitReadStoppedError, type ReadLimit } from './errors.js';

/** Every slot is taken and the wait is full. */
export class GitProcessesBusyError extends Error {
  constructor(maxWaiting: number) {
    super(`too many git reads are running or waiting (${maxWaiting} waiting at most); try again in a second`);
    this.name = 'GitProcessesBusyError';
  }
}

interface Waiter {
  start(): void;
}

export class ProcessSlots {
  private running = 0;
  private readonly waitersOf = new Map<string, Waiter[]>();
  /** The callers with requests waiting, in the order of their turns. */
  private readonly turns: string[] = [];
  private waitingCount = 0;

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
  ) {}

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.waitingCount;
  }

  /**
   * Runs `task` in a slot of `caller`'s once its turn comes. GitProcessesBusyError when the wait is full;
   * GitReadStoppedError (`what`, `narrow`) when `limit` fires first.
   */
  async run<T>(caller: string, limit: ReadLimit, what: string, narrow: string, task: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots || this.waitingCount > 0) await this.wait(caller, limit, what, narrow);
    else this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.startNext();
    }
  }

  private wait(caller: string, limit: ReadLimit, what: string, narrow: string): Promise<void> {
    if (this.waitingCount >= this.maxWaiting) throw new GitProcessesBusyError(this.maxWaiting);
    return new Promise<void>((resolve, reject) => {
      const giveUp = () => {
        this.remove(caller, waiter);
        reject(new GitReadStoppedError(what, 'time', limit.budgetMs, narrow));
      };
      const waiter: Waiter = {
        start: () => {
          limit.signal.removeEventListener('abort', giveUp);
          resolve();
        },
      };
      limit.signal.addEventListener('abort', giveUp, { once: true });
      const waiters = this.waitersOf.get(caller);
      if (waiters) waiters.push(waiter);
      else {
        this.waitersOf.set(caller, [waiter]);
        this.turns.push(caller);
      }
      this.waitingCount++;
    });
  }

  /** Gives a free slot to the next waiter of the caller whose turn it is; that caller's next turn comes after every other's. */
  private startNext(): void {
    const caller = this.turns.shift();
    if (caller === undefined) return;
    const waiters = this.waitersOf.get(caller)!;
    const waiter = waiters.shift()!;
    this.waitingCount--;
    if (waiters.length > 0) this.turns.push(caller);
    else this.waitersOf.delete(caller);
    this.running++;
    waiter.start();
  }

  private remove(caller: string, waiter: Waiter): void {
    const waiters = this.waitersOf.get(caller);
    const index = waiters?.indexOf(waiter) ?? -1;
    if (index < 0) return;
    waiters!.splice(index, 1);
    this.waitingCount--;
    if (waiters!.length === 0) {
      this.waitersOf.delete(caller);
      this.turns.splice(this.turns.indexOf(caller), 1);
    }
  }
}
