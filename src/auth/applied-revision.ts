/** How far a node applied the cluster's credential log (etcd-journal.ts), and the callers waiting for it to get further. */
export class AppliedRevision {
  /** The revision of the last commit applied. */
  head = 0;
  private readonly waiters: { revision: number; resolve(): void }[] = [];

  /** Resolves true once the log is applied through `revision`, false when that takes over `timeoutMs`. */
  reached(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.head >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** The log is applied through `head`: the callers waiting for it are woken. */
  advance(head: number): void {
    this.head = head;
    for (const waiter of this.waiters.filter((waiter) => waiter.revision <= head)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}
