import { IdSet } from './id-set.ts';
import { segmentOf, SEGMENT_SIZE } from './lazy-map.ts';
import { lowerBound } from './lower-bound.ts';

/** Reads a stored segment's ids into the set as runs ([from, to) pairs), without telling it as a change. */
export type SegmentRuns = (segment: number) => ArrayLike<number>;

/**
 * A user's flag or mention set (IdSet) read from the data directory by segment (lazy-map.ts): it knows
 * which stored segments hold its ids and reads one only when a lookup reaches it. A send adds to the newest
 * segment; `has` reads the id's segment; a walk from an anchor (`idsFrom`) reads the segments as it reaches
 * them; only a walk of the whole set (iterating it, `size`) reads them all. A user's unread set over
 * 50,000,000 messages is no longer read whole by the first message sent to them.
 */
export class StoredIdSet extends IdSet {
  /** the stored segments not read yet, ascending */
  private readonly pending: number[];

  constructor(segments: readonly number[], private readonly readRuns: SegmentRuns) {
    super();
    this.pending = [...segments];
  }

  /** how many of its stored segments are not read yet */
  get pendingSegments(): number {
    return this.pending.length;
  }

  override get isEmpty(): boolean {
    return this.pending.length === 0 && super.size === 0;
  }

  /** At least as many as it holds: exact once every segment was read, a segment not read counts as full. */
  override get sizeBound(): number {
    return super.size + this.pending.length * SEGMENT_SIZE;
  }

  /** Exact: reads every stored segment. */
  override get size(): number {
    this.readAll();
    return super.size;
  }

  override has(id: number): boolean {
    if (this.pending.length > 0) this.need(segmentOf(id));
    return super.has(id);
  }

  override add(id: number): this {
    if (this.pending?.length > 0) this.need(segmentOf(id));
    return super.add(id);
  }

  override addRange(from: number, to: number): this {
    this.needRange(from, to);
    return super.addRange(from, to);
  }

  override delete(id: number): boolean {
    if (this.pending.length > 0) this.need(segmentOf(id));
    return super.delete(id);
  }

  override runs(from: number, to: number): number[] {
    this.needRange(from, to);
    return super.runs(from, to);
  }

  override *[Symbol.iterator](): IterableIterator<number> {
    this.readAll();
    yield* super[Symbol.iterator]();
  }

  override *idsFrom(from: number, down: boolean): Generator<number, void, undefined> {
    let at = from;
    for (;;) {
      // The nearest stored segment not read yet, in the walk's direction: the walk reads it once it gets there.
      const next = this.nextPending(at, down);
      if (next === undefined) {
        yield* super.idsFrom(at, down);
        return;
      }
      for (const id of super.idsFrom(at, down)) {
        if (down ? segmentOf(id) <= next : segmentOf(id) >= next) break;
        yield id;
        at = id;
      }
      this.need(next);
    }
  }

  /** The nearest segment not read yet that may hold ids beyond `at` in the direction, or undefined. */
  private nextPending(at: number, down: boolean): number | undefined {
    const pending = this.pending;
    if (pending.length === 0) return undefined;
    // Ids are below 2^31; `at` may be any number (a walk from Infinity, from 0).
    const segment = at < 0 ? -1 : at >= 2 ** 31 ? Infinity : segmentOf(at);
    if (down) {
      const i = lowerBound(pending, segment + 1) - 1;
      return i >= 0 ? pending[i] : undefined;
    }
    const i = lowerBound(pending, segment);
    return i < pending.length ? pending[i] : undefined;
  }

  private needRange(from: number, to: number): void {
    if (this.pending.length === 0 || from >= to) return;
    const last = segmentOf(to - 1);
    for (let i = lowerBound(this.pending, segmentOf(from)); i < this.pending.length && this.pending[i]! <= last; ) this.need(this.pending[i]!);
  }

  private readAll(): void {
    while (this.pending.length > 0) this.need(this.pending[0]!);
  }

  /** Reads the segment's ids in if it is stored and not read yet: what was stored, not a change. */
  private need(segment: number): void {
    const i = lowerBound(this.pending, segment);
    if (this.pending[i] !== segment) return;
    this.pending.splice(i, 1);
    const runs = this.readRuns(segment);
    const changed = this.onChange;
    this.onChange = null;
    try {
      this.addRuns(runs);
    } finally {
      this.onChange = changed;
    }
  }
}
