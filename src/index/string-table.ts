/** Interns strings to dense indexes, in first-seen order. */
export class StringTable {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  constructor(initial: string[] = []) {
    for (const value of initial) this.intern(value);
  }

  intern(value: string): number {
    let id = this.index.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.index.set(value, id);
    }
    return id;
  }
}
