import { IdSet } from './id-set.ts';
import { SEGMENT_BITS, segmentOf, SEGMENT_SIZE } from './lazy-map.ts';
import { lowerBound } from './lower-bound.ts';
import type { StoredSegment } from './stored-segment.ts';

/** Reads a stored segment of the set as its record holds it. */
export type SegmentReader = (segment: number) => StoredSegment;

/**
 * A lookup (`has`) reads a sixteenth of a stored segment, the part that holds the id: 8,192 ids of a
 * segment of 131,072. A message's flags for a cold window of 50 then add a part or two of each set, not a
 * whole segment of a user's unread messages (74,000 ids in 8,000 runs: 2.3 ms).
 */
const PART_BITS = SEGMENT_BITS - 4;
const PART_SIZE = 2 ** PART_BITS;

/**
 * The segment record a lookup read last, of any set: a window's flags look up each of its messages in the
 * same user's sets, so the parts they need come from one read of the record (a user's unread messages over
 * 131,072 ids: about 100 KB, copied twice on the way out of LMDB). One record at most stays in memory. A
 * record of a segment not read yet never changes while its set lives: a change reads the segment first.
 */
let lastRead: { set: StoredIdSet; segment: number; stored: StoredSegment } | null = null;

/**
 * A user's flag or mention set (IdSet) read from the data directory by segment (lazy-map.ts): it knows
 * which stored segments hold its ids and reads one only when a lookup reaches it. A send adds to the newest
 * segment; `has` reads the part of the id's segment that holds it; a walk from an anchor (`idsFrom`) reads
 * the segments as it reaches them; only a walk of the whole set (iterating it, `size`) reads them all. A
 * user's unread set over 50,000,000 messages is no longer read whole by the first message sent to them.
 */
export class StoredIdSet extends IdSet {
  /** the stored segments not read yet, ascending */
  private readonly pending: number[];
  /** of a segment not read yet, the parts read for a lookup, a bit each (never changed: a change reads the segment first) */
  private readonly partsRead = new Map<number, number>();
  /** adding what is stored (IdSet.addRuns calls add and addRange): nothing more to read */
  private reading = false;

  constructor(segments: readonly number[], private readonly readSegment: SegmentReader) {
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
    if (this.pending.length > 0) this.needPart(id);
    return super.has(id);
  }

  override add(id: number): this {
    if (this.pending?.length > 0 && !this.reading) this.need(segmentOf(id));
    return super.add(id);
  }

  override addRange(from: number, to: number): this {
    if (!this.reading) this.needRange(from, to);
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

  /** Reads the part of the id's segment that holds it if the segment is stored and not read yet. */
  private needPart(id: number): void {
    const segment = segmentOf(id);
    if (this.pending[lowerBound(this.pending, segment)] !== segment) return;
    const bit = 1 << ((id >>> PART_BITS) & 15);
    const read = this.partsRead.get(segment) ?? 0;
    if ((read & bit) !== 0) return;
    const from = Math.floor(id / PART_SIZE) * PART_SIZE;
    if (lastRead === null || lastRead.set !== this || lastRead.segment !== segment) {
      // A segment whose parts are looked up again later (a small history, windows all over it) is read whole
      // the second time, as before parts: its record is not read again for each part.
      if (read !== 0) {
        this.need(segment);
        return;
      }
      lastRead = { set: this, segment, stored: this.readSegment(segment) };
    }
    this.partsRead.set(segment, read | bit);
    this.addStored(lastRead.stored.runs(from, from + PART_SIZE));
  }

  /**
   * Reads the segment's ids in if it is stored and not read yet: what was stored, not a change. The parts
   * a lookup read are added again, which changes nothing: no change reached them.
   */
  private need(segment: number): void {
    const i = lowerBound(this.pending, segment);
    if (this.pending[i] !== segment) return;
    this.pending.splice(i, 1);
    this.partsRead.delete(segment);
    let stored: StoredSegment;
    if (lastRead !== null && lastRead.set === this && lastRead.segment === segment) {
      stored = lastRead.stored;
      lastRead = null;
    } else stored = this.readSegment(segment);
    this.addStored(stored.runs());
  }

  /** Adds stored ids: not a change, and nothing more to read for them. */
  private addStored(runs: ArrayLike<number>): void {
    const changed = this.onChange;
    this.onChange = null;
    this.reading = true;
    try {
      this.addRuns(runs);
    } finally {
      this.onChange = changed;
      this.reading = false;
    }
  }
}
