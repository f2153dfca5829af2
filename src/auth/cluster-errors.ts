/** How the cluster's credential log on etcd (etcd-journal.ts) fails: each is mapped in server/known-errors.ts or said at start. */

/** etcd did not confirm a change in time: it may or may not be saved. */
export class ClusterStateUnavailableError extends Error {
  constructor(what: string, cause?: unknown) {
    super(`the change was not confirmed: ${what}; the cluster's credential log on etcd must be reachable for changes (reads go on)`, { cause });
    this.name = 'ClusterStateUnavailableError';
  }
}

/** The local state is not a checkpoint of the cluster's log: joining would lose its users and keys, or mix two sets. */
export class ForeignStateError extends Error {
  constructor(file: string, why: string) {
    super(`${file} ${why}: move the state directory away to join with the cluster’s users and keys`);
    this.name = 'ForeignStateError';
  }
}

/** A commit in etcd whose bytes do not decode (its checksums fail): nothing after it is applied. */
export class ClusterStateCorruptError extends Error {
  constructor(key: string, problem: string) {
    super(`the cluster's credential log is damaged at ${key} (${problem}): changes after it are not applied; restore etcd from a backup`);
    this.name = 'ClusterStateCorruptError';
  }
}
