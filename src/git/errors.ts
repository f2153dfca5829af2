/** Errors of the git read layer; the HTTP routes map them to INVALID_GIT_REF, FILE_NOT_FOUND, SERVICE_UNAVAILABLE and UNEXPECTED_ERROR. */
import { deadline } from './deadline.js';

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
  constructor(
    readonly filePath: string,
    reason: string,
  ) {
    super(`${JSON.stringify(filePath)} ${reason}`);
    this.name = 'PathNotFoundError';
  }
}

/** An object that a commit or tree names is not in the repository: this server's copy is damaged, or a partial clone. */
export class GitObjectMissingError extends Error {
  constructor(readonly oid: string) {
    super(`git object ${oid} is missing from this server's copy of the repository (damaged, or a partial clone); \`git fsck\` there lists what is lost`);
    this.name = 'GitObjectMissingError';
  }
}

/** libgit2's error for an object its database does not hold as a GitObjectMissingError; any other error as it is. */
export function missingObjectError(error: unknown): unknown {
  const missing = error instanceof Error ? /^object not found - no match for id \(([0-9a-f]{40}(?:[0-9a-f]{24})?)\)/.exec(error.message) : null;
  return missing ? new GitObjectMissingError(missing[1]!) : error;
}

/**
 * A git read stopped before its end: past the request's time budget or its client gone (`time`), or
 * past the bytes it may produce (`size`). Either way the caller narrows the request, and may retry a `time` one.
 */
export class GitReadStoppedError extends Error {
  constructor(
    what: string,
    readonly bound: 'time' | 'size',
    limit: number,
    narrow: string,
  ) {
    super(`${what} ran past ${bound === 'time' ? `the ${limit} ms time budget (or its client went away)` : `${limit} bytes`}; ${narrow}`);
    this.name = 'GitReadStoppedError';
  }
}

/** When a git read must stop: the request's deadline or its client gone (the signal), and the budget it says it ran past. */
export interface ReadLimit {
  signal: AbortSignal;
  budgetMs: number;
}

/** A limit that fires `budgetMs` from now, or at `stop()` (the client gone): a `deadline` over the client's signal. */
export function readLimit(budgetMs: number): { limit: ReadLimit; stop: () => void } {
  const client = new AbortController();
  return { limit: { signal: deadline(client.signal, budgetMs).signal, budgetMs }, stop: () => client.abort() };
}

/** Throws GitReadStoppedError (`time`) for `what` once `limit` has fired. */
export function checkReadLimit(limit: ReadLimit, what: string, narrow: string): void {
  if (limit.signal.aborted) throw new GitReadStoppedError(what, 'time', limit.budgetMs, narrow);
}
