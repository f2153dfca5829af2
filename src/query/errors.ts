/** A query that does not parse: says what is wrong, where, and quotes the query. */
export class QueryParseError extends Error {
  constructor(
    /** What is wrong, without the position. */
    readonly problem: string,
    readonly query: string,
    /** 0-based offset (UTF-16 code units) of the offending token. */
    readonly position: number,
  ) {
    super(`${problem} at column ${position + 1} of ${JSON.stringify(query)}`);
    this.name = 'QueryParseError';
  }
}
