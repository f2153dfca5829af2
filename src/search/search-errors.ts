/** The errors a search pool refuses a search with (server/known-errors.ts maps them to the API's). */

export class SearchQueueFullError extends Error {
  /** `displaced`: the search was admitted, then gave its place to another caller's (admissions.ts). */
  constructor(limit: number, displaced = false) {
    super(`the search queue is full (${limit} searches in flight)${displaced ? ': this search gave its place to another caller' : ''}`);
    this.name = 'SearchQueueFullError';
  }
}
