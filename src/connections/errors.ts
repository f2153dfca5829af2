/** Why a connection's sync, or one repository's fetch, failed: a message fit to show an owner (no secrets). */
export class ConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** The host's rate limit holds for longer than a sync waits; the next sync is due at `until`. */
export class RateLimitedError extends ConnectionError {
  constructor(readonly until: Date) {
    super(`the host's rate limit holds until ${until.toISOString()}; the next sync resumes then`);
    this.name = 'RateLimitedError';
  }
}
