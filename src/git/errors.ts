/** Errors of the git read layer; the HTTP routes map them to INVALID_GIT_REF and FILE_NOT_FOUND. */

/** A ref that is malformed (or a form trawl refuses), or that does not resolve to a commit (`unresolved`). */
export class InvalidRefError extends Error {
  constructor(
    readonly ref: string,
    reason: string,
    readonly unresolved = false,
  ) {
    super(`invalid git ref ${JSON.stringify(ref)}: ${reason}`);
    this.name = 'InvalidRefError';
  }
}

/** A path that is malformed or not in the tree at that revision. */
export class PathNotFoundError extends Error {
  constructor(readonly filePath: string, reason: string) {
    super(`${JSON.stringify(filePath)} ${reason}`);
    this.name = 'PathNotFoundError';
  }
}

/** A git read stopped before its end: past the request's time budget, or its client went away. */
export class GitReadStoppedError extends Error {
  constructor(what: string, budgetMs: number) {
    super(`${what} ran past the ${budgetMs} ms time budget (or its client went away); narrow it (a path, since or until)`);
    this.name = 'GitReadStoppedError';
  }
}
