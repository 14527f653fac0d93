import { lowerBound } from './lower-bound.ts';

/**
 * One stored segment of a key's ids (lazy-map.ts) as its record holds them (key-records.ts), read in place:
 * the ids themselves, or runs of consecutive ids ([from, to) pairs) with the position of each run's first id.
 * A lookup finds an id or a position by a binary search, and a walk from an anchor decodes only the ids it
 * reaches (`slice`): the segment of a channel that holds most of the history is a few runs, and a cold window
 * of 50 needs 50 of its 131,072 ids, not an array of them all (1 MB, which the collector then moves and marks).
 * Never changed: a list or set that changes a segment decodes it whole first.
 */
export class StoredSegment {
  /**
   * for runs: how many ids come before each run (one more entry: the length), counted when a position is
   * first asked for (a set reads runs alone); null for ids
   */
  private counted: Int32Array | null = null;

  private constructor(
    /** ids ascending, or runs: [from, to) pairs, ascending */
    private readonly values: Int32Array,
    private readonly isRuns: boolean,
  ) {}

  static ofIds(ids: Int32Array): StoredSegment {
    return new StoredSegment(ids, false);
  }

  static ofRuns(runs: Int32Array): StoredSegment {
    return new StoredSegment(runs, true);
  }

  /** how many ids it holds */
  get length(): number {
    const positions = this.positions;
    return positions === null ? this.values.length : positions[positions.length - 1]!;
  }

  private get positions(): Int32Array | null {
    if (!this.isRuns || this.counted !== null) return this.counted;
    const runs = this.values;
    const count = runs.length >> 1;
    const positions = new Int32Array(count + 1);
    for (let r = 0; r < count; r++) positions[r + 1] = positions[r]! + runs[2 * r + 1]! - runs[2 * r]!;
    return (this.counted = positions);
  }

  static readonly EMPTY = StoredSegment.ofIds(new Int32Array(0));

  /**
   * What it costs in memory, counted as ids of a plain array (8 B each): the unit of an index's bound on
   * the segments it keeps (CHAT_MESSAGE_SEGMENT_CACHE). Its values are 4 B each; at least 1.
   */
  get weight(): number {
    return Math.max(1, (this.values.length * (this.isRuns ? 1.5 : 1) + 1) >> 1);
  }

  /** The id at a position (0 to length - 1). */
  idAt(position: number): number {
    const positions = this.positions;
    if (positions === null) return this.values[position]!;
    const run = positions.length === 2 ? 0 : this.runAt(position);
    return this.values[2 * run]! + position - positions[run]!;
  }

  /** The position of the first id >= `id` (the length: none). */
  lowerBound(id: number): number {
    const values = this.values;
    const positions = this.positions;
    if (positions === null) return lowerBound(values, id);
    let low = 0;
    // The first run that ends past `id`.
    let high = positions.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (values[2 * middle + 1]! <= id) low = middle + 1;
      else high = middle;
    }
    if (low === positions.length - 1) return this.length;
    return positions[low]! + Math.max(0, id - values[2 * low]!);
  }

  has(id: number): boolean {
    const at = this.lowerBound(id);
    return at < this.length && this.idAt(at) === id;
  }

  /** The ids at positions [from, to), ascending, as a plain array. */
  slice(from: number, to: number): number[] {
    const ids = new Array<number>(Math.max(0, to - from));
    const positions = this.positions;
    const values = this.values;
    if (positions === null) {
      for (let i = from; i < to; i++) ids[i - from] = values[i]!;
      return ids;
    }
    let at = 0;
    for (let run = from < to ? this.runAt(from) : positions.length - 1; run < positions.length - 1 && at < ids.length; run++) {
      const start = values[2 * run]!;
      for (let id = start + Math.max(0, from - positions[run]!), end = values[2 * run + 1]!; id < end && at < ids.length; id++) ids[at++] = id;
    }
    return ids;
  }

  /** Every id, as a plain array: what a list decodes before changing the segment. */
  toArray(): number[] {
    return this.slice(0, this.length);
  }

  /** The ids in [from, to) as runs ([from, to) pairs), ascending: a set's part read without the rest. */
  runs(from = -Infinity, to = Infinity): ArrayLike<number> {
    const values = this.values;
    if (this.isRuns) {
      if (from === -Infinity && to === Infinity) return values;
      const out: number[] = [];
      const runs = values.length >> 1;
      // The first run that ends past `from`.
      let run = 0;
      let high = runs;
      while (run < high) {
        const middle = (run + high) >>> 1;
        if (values[2 * middle + 1]! <= from) run = middle + 1;
        else high = middle;
      }
      for (; run < runs && values[2 * run]! < to; run++) out.push(Math.max(from, values[2 * run]!), Math.min(to, values[2 * run + 1]!));
      return out;
    }
    const out: number[] = [];
    for (let i = from === -Infinity ? 0 : this.lowerBound(from); i < values.length && values[i]! < to; i++) {
      const id = values[i]!;
      if (out.length > 0 && out[out.length - 1] === id) out[out.length - 1] = id + 1;
      else out.push(id, id + 1);
    }
    return out;
  }

  /** The run holding the position: the last whose first position is at or before it. */
  private runAt(position: number): number {
    const positions = this.positions!;
    let low = 0;
    let high = positions.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (positions[middle]! <= position) low = middle;
      else high = middle - 1;
    }
    return Math.min(low, positions.length - 2);
  }
}
