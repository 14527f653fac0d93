import { SEGMENT_BITS, segmentOf, SEGMENT_SIZE, type SegmentSource } from './lazy-map.ts';
import { lowerBound } from './lower-bound.ts';
import { StoredSegment } from './stored-segment.ts';


/** The segment of any number a walk starts from: below every segment, within one, or past every one (ids are below 2^31). */
const segmentOfAny = (id: number) => (id < 0 ? -1 : id >= 2 ** 31 ? 2 ** (31 - SEGMENT_BITS) : segmentOf(id));

/**
 * A sorted list of message ids (a channel's, topic's or conversation's) kept by segment (lazy-map.ts): it
 * knows which segments hold its ids, and reads a stored one from the data directory only when a lookup
 * needs it. A send appends to the newest segment; a window around an anchor reads the one or two segments
 * around it, kept as their records hold them (stored-segment.ts: a search finds the anchor, and only the ids
 * the window walks are decoded), until a change to one decodes it whole; only a walk of the whole list (`[Symbol.iterator]`: an export, verify, a topic moved whole)
 * reads every segment, and the index it belongs to lets the least recently used ones go again.
 *
 * Positions are not part of the interface: a list is read by id (`has`, `idsFrom`, `first`, `last`), as a
 * position would need every segment before it counted.
 */
export class IdList implements Iterable<number> {
  /** the segments holding ids, ascending, in memory or only stored */
  private readonly segments: number[] = [];
  /**
   * each segment's ids, ascending, never empty: decoded (a plain array, which changes), as stored (read back
   * and not changed since), or null while only stored
   */
  private readonly parts: (number[] | StoredSegment | null)[] = [];
  /** how many ids each segment held when last in memory, and its oldest id; -1: never read */
  private readonly counts: number[] = [];
  private readonly firsts: number[] = [];
  /** where stored segments are read from; null: every segment is in memory (a list built in memory) */
  source: SegmentSource | null = null;
  /** told of every id added or removed: what a snapshot must write again (lazy-map.ts) */
  onChange: ((id: number) => void) | null = null;

  constructor(ids?: Iterable<number>) {
    if (ids) for (const id of ids) this.add(id);
  }

  /** A list whose ids are all stored, in these segments (ascending), read through `source` when needed. */
  static stored(segments: readonly number[]): IdList {
    const list = new IdList();
    for (const segment of segments) {
      list.segments.push(segment);
      list.parts.push(null);
      list.counts.push(-1);
      list.firsts.push(-1);
    }
    return list;
  }

  get isEmpty(): boolean {
    return this.segments.length === 0;
  }

  /** At least as many as the ids it holds: exact once every segment was read, a segment never read counts as full. */
  get sizeBound(): number {
    let size = 0;
    for (const count of this.counts) size += count < 0 ? SEGMENT_SIZE : count;
    return size;
  }

  /** how many of its segments are in memory */
  get residentSegments(): number {
    let count = 0;
    for (const part of this.parts) if (part) count++;
    return count;
  }

  /** The segments that hold ids, ascending. */
  segmentNumbers(): readonly number[] {
    return this.segments;
  }

  /** The segment's ids if it holds any (read and decoded if stored), else null. */
  segmentIds(segment: number): ArrayLike<number> | null {
    const at = lowerBound(this.segments, segment);
    return this.segments[at] === segment ? this.part(at) : null;
  }

  /** Lets a stored segment's ids leave memory; what they weighed (0 if not in memory). */
  drop(segment: number): number {
    const at = lowerBound(this.segments, segment);
    const part = this.segments[at] === segment ? this.parts[at] : null;
    if (!part || this.source === null) return 0;
    this.parts[at] = null;
    return weightOf(part);
  }

  /** Tells `source` of every segment in memory (a list that joins an index with a bound). */
  residentTo(source: SegmentSource): void {
    this.parts.forEach((part, at) => part && source.used(this.segments[at]!, weightOf(part), false));
  }

  has(id: number): boolean {
    const at = lowerBound(this.segments, segmentOfAny(id));
    if (this.segments[at] !== segmentOfAny(id)) return false;
    const part = this.view(at);
    return part instanceof StoredSegment ? part.has(id) : part[lowerBound(part, id)] === id;
  }

  first(): number | undefined {
    return this.segments.length === 0 ? undefined : idAt(this.view(0), 0);
  }

  last(): number | undefined {
    const n = this.segments.length;
    if (n === 0) return undefined;
    const part = this.view(n - 1);
    return idAt(part, part.length - 1);
  }

  /**
   * The ids beyond `from` (any number: it need not be in the list), the nearest first: below it, descending,
   * when `down`, else above it, ascending. Reads only the segments it walks into, and decodes none. The list
   * must not change while this is iterated: a walk in slices starts again from the last id it examined.
   */
  *idsFrom(from: number, down: boolean): Generator<number, void, undefined> {
    for (let at = this.segmentFrom(from, down); at >= 0 && at < this.segments.length; at += down ? -1 : 1) {
      const part = this.view(at);
      const start = IdList.startIn(part, from, down);
      if (part instanceof StoredSegment) {
        if (down) for (let i = start; i >= 0; i--) yield part.idAt(i);
        else for (let i = start; i < part.length; i++) yield part.idAt(i);
      } else if (down) for (let i = start; i >= 0; i--) yield part[i]!;
      else for (let i = start; i < part.length; i++) yield part[i]!;
    }
  }

  /**
   * A walk by hand, as `idsFrom` without a generator (a window, the hot path): the position among the
   * segments of the first a walk from `from` reaches (out of range: none), then for each segment the ids
   * the walk reaches first (`near`).
   */
  segmentFrom(from: number, down: boolean): number {
    const fromSegment = segmentOfAny(Math.floor(from));
    return down ? lowerBound(this.segments, fromSegment + 1) - 1 : lowerBound(this.segments, fromSegment);
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /**
   * The ids of the segment at `at` a walk from `from` reaches, read by index from `start` on (descending when
   * `down`; -1 or the length: none), and whether the segment holds more beyond them. A segment in memory
   * gives them all; one as stored decodes at least `count` of them (or up to its end): a window asks for
   * as many as it still needs, and again from the last it examined if its narrow passed over some.
   */
  near(at: number, from: number, down: boolean, count: number): [ids: ArrayLike<number>, start: number, more: boolean] {
    const part = this.view(at);
    const start = IdList.startIn(part, from, down);
    if (!(part instanceof StoredSegment)) return [part, start, false];
    if (down) {
      const low = Math.max(0, start - Math.max(1, count) + 1);
      const ids = part.slice(low, start + 1);
      return [ids, ids.length - 1, low > 0];
    }
    const high = Math.min(part.length, start + Math.max(1, count));
    return [part.slice(start, high), 0, high < part.length];
  }

  /** Where in a segment's ids a walk from `from` starts: the nearest below it when `down`, else above it. */
  static startIn(ids: ArrayLike<number> | StoredSegment, from: number, down: boolean): number {
    if (ids instanceof StoredSegment) {
      const i = ids.lowerBound(from);
      return down ? i - 1 : i < ids.length && ids.idAt(i) === from ? i + 1 : i;
    }
    const i = lowerBound(ids, from);
    return down ? i - 1 : ids[i] === from ? i + 1 : i;
  }

  /**
   * How many ids, from the newest back, pass `recent`, which holds of every id from some id on (ids grow with
   * time: sent since a moment), and the oldest of them. A segment read once is counted again from its
   * remembered count and oldest id, without reading it; only the segment where `recent` starts to hold is
   * searched.
   */
  newestRun(recent: (id: number) => boolean): { count: number; oldest: number | undefined } {
    let count = 0;
    let oldest: number | undefined;
    for (let at = this.segments.length - 1; at >= 0; at--) {
      if (this.parts[at] === null && this.counts[at]! > 0 && recent(this.firsts[at]!)) {
        count += this.counts[at]!;
        oldest = this.firsts[at]!;
        continue;
      }
      const part = this.view(at);
      if (part.length > 0 && recent(idAt(part, 0))) {
        count += part.length;
        oldest = idAt(part, 0);
        continue;
      }
      let low = 0;
      let high = part.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (recent(idAt(part, middle))) high = middle;
        else low = middle + 1;
      }
      if (low < part.length) oldest = idAt(part, low);
      return { count: count + part.length - low, oldest };
    }
    return { count, oldest };
  }

  /** Each segment's ids, ascending, the oldest segment first or (`down`) the newest: reads each as it is reached, and decodes it for the walk alone. */
  *segmentsFrom(down: boolean): Generator<ArrayLike<number>, void, undefined> {
    const n = this.segments.length;
    for (let k = 0; k < n; k++) {
      const part = this.view(down ? n - 1 - k : k);
      yield part instanceof StoredSegment ? part.toArray() : part;
    }
  }

  /** Every id, ascending: a walk of the whole list, which reads every stored segment. */
  *[Symbol.iterator](): IterableIterator<number> {
    for (const part of this.segmentsFrom(false)) for (let i = 0; i < part.length; i++) yield part[i]!;
  }

  /** Adds the id; false if it was there. Ids mostly come in ascending order: appending is the common case. */
  add(id: number): boolean {
    const segment = segmentOf(id);
    const n = this.segments.length;
    let at = n - 1;
    if (n === 0 || this.segments[at]! < segment) {
      this.segments.push(segment);
      this.parts.push([id]);
      this.counts.push(1);
      this.firsts.push(id);
      this.source?.used(segment, 1, false);
      this.onChange?.(id);
      return true;
    }
    if (this.segments[at] !== segment) {
      at = lowerBound(this.segments, segment);
      if (this.segments[at] !== segment) {
        this.segments.splice(at, 0, segment);
        this.parts.splice(at, 0, [id]);
        this.counts.splice(at, 0, 1);
        this.firsts.splice(at, 0, id);
        this.source?.used(segment, 1, false);
        this.onChange?.(id);
        return true;
      }
    }
    const part = this.part(at);
    if (part[part.length - 1]! < id) part.push(id);
    else {
      const i = lowerBound(part, id);
      if (part[i] === id) return false;
      part.splice(i, 0, id);
    }
    this.grew(at, part);
    this.onChange?.(id);
    return true;
  }

  /** Removes the id; false if it was not there. */
  delete(id: number): boolean {
    const at = lowerBound(this.segments, segmentOf(id));
    if (this.segments[at] !== segmentOf(id) || !this.has(id)) return false;
    const part = this.part(at);
    part.splice(lowerBound(part, id), 1);
    this.onChange?.(id);
    this.grew(at, part);
    return true;
  }

  /** Removes every id of `ids` in one pass per segment they fall in (a move takes a topic along). */
  deleteAll(ids: ReadonlySet<number>): void {
    const touched = new Set<number>();
    for (const id of ids) touched.add(segmentOf(id));
    for (const segment of [...touched].sort((a, b) => a - b)) {
      const at = lowerBound(this.segments, segment);
      if (this.segments[at] !== segment) continue;
      const part = this.part(at);
      let kept = 0;
      for (let i = 0; i < part.length; i++) {
        const id = part[i]!;
        if (!ids.has(id)) part[kept++] = id;
        else this.onChange?.(id);
      }
      part.length = kept;
      this.grew(at, part);
    }
  }

  /** Merges ascending `ids` in, one pass per segment they fall in, without an id twice. */
  mergeSorted(ids: readonly number[]): void {
    for (let start = 0; start < ids.length; ) {
      const segment = segmentOf(ids[start]!);
      let end = start + 1;
      while (end < ids.length && segmentOf(ids[end]!) === segment) end++;
      const at = lowerBound(this.segments, segment);
      const part: number[] = this.segments[at] === segment ? this.part(at) : [];
      const merged: number[] = [];
      let i = 0;
      let j = start;
      while (i < part.length || j < end) {
        const next = j >= end || (i < part.length && part[i]! <= ids[j]!) ? part[i++]! : ids[j++]!;
        if (merged.length === 0 || merged[merged.length - 1] !== next) merged.push(next);
      }
      for (let k = start; k < end; k++) this.onChange?.(ids[k]!);
      if (this.segments[at] === segment) {
        this.parts[at] = merged;
        this.grew(at, merged);
      } else {
        this.segments.splice(at, 0, segment);
        this.parts.splice(at, 0, merged);
        this.counts.splice(at, 0, merged.length);
        this.firsts.splice(at, 0, merged[0]!);
        this.source?.used(segment, merged.length, false);
      }
      start = end;
    }
  }

  /** The segment's ids in memory as they are (decoded, or as stored), read if only stored. */
  private view(at: number): number[] | StoredSegment {
    const part = this.parts[at];
    if (part) {
      this.source?.used(this.segments[at]!, weightOf(part), false);
      return part;
    }
    const stored = this.source!.read(this.segments[at]!);
    this.parts[at] = stored;
    this.counts[at] = stored.length;
    this.firsts[at] = stored.length > 0 ? stored.idAt(0) : -1;
    this.source!.used(this.segments[at]!, stored.weight, true);
    return stored;
  }

  /** The segment's ids decoded, to change them or read them whole: read if only stored, decoded if as stored. */
  private part(at: number): number[] {
    const part = this.view(at);
    if (!(part instanceof StoredSegment)) return part;
    const ids = part.toArray();
    this.parts[at] = ids;
    this.source?.used(this.segments[at]!, ids.length, true);
    return ids;
  }

  /** After the segment's ids changed: a segment left empty goes (its stored record with it, as its change was told). */
  private grew(at: number, part: number[]): void {
    if (part.length > 0) {
      this.counts[at] = part.length;
      this.firsts[at] = part[0]!;
      this.source?.used(this.segments[at]!, part.length, false);
      return;
    }
    const segment = this.segments[at]!;
    this.segments.splice(at, 1);
    this.parts.splice(at, 1);
    this.counts.splice(at, 1);
    this.firsts.splice(at, 1);
    this.source?.used(segment, 0, false);
  }
}

/** What a segment in memory weighs in its index's bound (lazy-map.ts): a plain array's ids, or a stored one's (stored-segment.ts). */
const weightOf = (part: number[] | StoredSegment) => (part instanceof StoredSegment ? part.weight : part.length);

const idAt = (part: number[] | StoredSegment, position: number) => (part instanceof StoredSegment ? part.idAt(position) : part[position]!);
