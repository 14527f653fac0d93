/**
 * Values by message id, in an array indexed by the id: message ids are dense (handed out in order from 1),
 * so a million messages cost an 8 MB array, and a boot fills it without the rehashing and garbage-collector
 * work of a growing `Map` (40 MB, and a third of loading a million messages). Iterates in ascending id order.
 * Ids are non-negative integers below the next id the store hands out.
 */
export class IdMap<T> implements Iterable<[number, T]> {
  private readonly items: (T | undefined)[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): T | undefined {
    return this.items[id];
  }

  has(id: number): boolean {
    return this.items[id] !== undefined;
  }

  set(id: number, value: T): this {
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`not a message id: ${id}`);
    const items = this.items;
    // Filled up to the id, so that the array stays a dense one (a hole far ahead would turn it into a dictionary).
    while (items.length < id) items.push(undefined);
    if (items[id] === undefined) this.count++;
    items[id] = value;
    return this;
  }

  delete(id: number): boolean {
    if (this.items[id] === undefined) return false;
    this.items[id] = undefined;
    this.count--;
    return true;
  }

  *keys(): IterableIterator<number> {
    const items = this.items;
    for (let id = 0; id < items.length; id++) if (items[id] !== undefined) yield id;
  }

  *values(): IterableIterator<T> {
    for (const value of this.items) if (value !== undefined) yield value;
  }

  *entries(): IterableIterator<[number, T]> {
    const items = this.items;
    for (let id = 0; id < items.length; id++) {
      const value = items[id];
      if (value !== undefined) yield [id, value];
    }
  }

  [Symbol.iterator](): IterableIterator<[number, T]> {
    return this.entries();
  }
}
