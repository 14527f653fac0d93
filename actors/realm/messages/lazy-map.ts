import type { StoredSegment } from './stored-segment.ts';

/**
 * A persisted per-key index of a realm's messages is stored in segments: the ids of one key within 2^17
 * consecutive message ids are one record. A snapshot rewrites only the segments a change touched (the
 * newest, for a send), and a key's id list reads back only the segments a lookup needs (id-list.ts).
 *
 * CHAT_MESSAGE_SEGMENT_BITS sets another size, for tests only (a history of a few thousand messages then
 * spans several segments): a data directory is always read with the size it was written with
 * (MessageHeadRecord.segmentBits), and a boot refuses another.
 */
export const DEFAULT_SEGMENT_BITS = 17;
export const SEGMENT_BITS = segmentBits(process.env.CHAT_MESSAGE_SEGMENT_BITS);
export const SEGMENT_SIZE = 2 ** SEGMENT_BITS;

function segmentBits(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_SEGMENT_BITS;
  const bits = Number(value);
  if (!Number.isInteger(bits) || bits < 8 || bits > 30) throw new Error(`CHAT_MESSAGE_SEGMENT_BITS must be an integer from 8 to 30, not ${value}`);
  return bits;
}

export const segmentOf = (messageId: number) => messageId >>> SEGMENT_BITS;

/**
 * Keys of a per-key index that stay in memory, per index and organization (the most recently used): a
 * channel's or topic's id list, a user's flag or mention set. CHAT_MESSAGE_KEY_CACHE sets another size. The
 * per-user indexes keep at least as many as the organization has users (realm/snapshot.ts attachChunks).
 */
export const DEFAULT_KEY_CACHE = 4096;

/**
 * Ids of the stored segments of an index's id lists that stay in memory, per index and organization (the
 * segments most recently used): 2^22 ids, about 32 segments of a channel that holds most of the history,
 * 32 MB as arrays of small integers. A segment kept as stored (stored-segment.ts) counts for what it weighs
 * in those units: half its record's 4-byte values. A segment changed since the last snapshot stays until
 * the snapshot stores it. CHAT_MESSAGE_SEGMENT_CACHE sets another size.
 */
export const DEFAULT_SEGMENT_CACHE = 2 ** 22;

/** How a value kept by segment (id-list.ts) reads its stored segments, and tells its index which are in memory. */
export interface SegmentSource {
  /** the stored segment's ids, ascending, as its record holds them */
  read(segment: number): StoredSegment;
  /** the segment is in memory, weighing `ids` ids (0: it is gone; stored-segment.ts), and was just used; `read`: it grew (read from the data directory, or decoded) */
  used(segment: number, ids: number, read: boolean): void;
}

/** What a lazy index's values are: how their ids are read, and how a value reports its own changes. */
export interface ValueKind<V> {
  /** the value's ids, ascending, to mark every segment of a value set whole */
  ids(value: V): Iterable<number>;
  /** a value that reports its own changes (IdSet.onChange) is told whom to report to */
  watch?(value: V, changed: ((id: number) => void) | null): void;
  /** a value kept by segment: the segments it holds (marked whole rather than by `ids`) */
  segments?(value: V): Iterable<number>;
  /** a value kept by segment is told where to read them from */
  bind?(value: V, source: SegmentSource): void;
  /** lets a stored segment of the value leave memory; how many ids it held */
  drop?(value: V, segment: number): number;
}

/** A segment of a value in memory, in its index's order of use. */
interface Resident<K, V> {
  key: K;
  value: V;
  segment: number;
  ids: number;
}

/** Reads a key's value back from its stored segments; undefined: nothing stored. */
export type KeyLoader<V> = (key: string) => V | undefined;

/**
 * A Map of message ids by key (channel, topic, conversation, user) whose values are read from the data
 * directory when first asked for, and leave memory again, least recently used first, past a limit. The keys
 * are all known (the snapshot's head lists them), so `has`, `size` and `keys()` read nothing; iterating the
 * entries reads every value, a walk over the whole history (export, verify).
 *
 * Every change to a value must be told (`mark`, or the value's own onChange), with the message id it
 * touched: the segments marked are what the next snapshot writes (`takeDirty`). A key with unsaved changes,
 * or whose snapshot is being written (`hold`), stays in memory.
 *
 * A value kept by segment (IdList) is read as its list of stored segments alone, and reads a segment when a
 * lookup needs it: the index keeps the segments in memory in their order of use, and past `segmentLimit`
 * ids lets the least recently used go, but those with unsaved changes or held.
 */
export class LazyMap<K extends string | number, V> extends Map<K, V> {
  /** keys stored in the data directory and not in memory */
  private readonly stored = new Set<K>();
  private loader: KeyLoader<V> | null = null;
  private limitOf: () => number = () => Infinity;
  private last: K | undefined = undefined;
  /** key -> segments changed since the last snapshot; a key without a value: its segments go */
  private dirty = new Map<K, Set<number>>();
  private readonly held = new Map<K, number>();
  /** counts takeDirty calls: a value's reporter remembers the segment it last marked in this generation */
  private generation = 0;
  /** reads a stored segment, for values kept by segment */
  private segmentRead: ((key: string, segment: number) => StoredSegment) | null = null;
  private segmentLimit = Infinity;
  /** the stored segments in memory, least recently used first, and how many ids they hold */
  private readonly order = new Set<Resident<K, V>>();
  private readonly residentOf = new Map<K, Map<number, Resident<K, V>>>();
  private lastResident: Resident<K, V> | null = null;
  private ids = 0;

  constructor(
    private readonly parse: (key: string) => K,
    private readonly kind: ValueKind<V>,
  ) {
    super();
  }

  /**
   * Reads values through `loader` from now on; `limit` keys stay in memory (a function: asked each time, for
   * a limit that follows what it is kept for). A value kept by segment reads its stored segments through
   * `segmentRead`, and those of all values hold about `segmentLimit` ids in memory.
   */
  attach(loader: KeyLoader<V>, limit: number | (() => number), segmentRead: ((key: string, segment: number) => StoredSegment) | null = null, segmentLimit = Infinity): void {
    this.loader = loader;
    this.limitOf = typeof limit === 'number' ? () => limit : limit;
    this.segmentRead = segmentRead;
    this.segmentLimit = segmentLimit;
    if (this.kind.bind && segmentRead) for (const [key, value] of super.entries()) this.bindValue(key, value);
    this.trim();
  }

  /** Reads from where `other` reads (an index loaded for a realm started with another). */
  adopt(other: LazyMap<K, V>): void {
    if (other.loader) this.attach(other.loader, other.limitOf, other.segmentRead, other.segmentLimit);
  }

  /** how many stored segments of the values are in memory, and their ids */
  get residentSegments(): { segments: number; ids: number } {
    return { segments: this.order.size, ids: this.ids };
  }

  /** Keys stored in the data directory (a boot's head lists them), read when first asked for. */
  known(keys: Iterable<string>): void {
    for (const key of keys) this.stored.add(this.parse(key));
  }

  override get size(): number {
    return super.size + this.stored.size;
  }

  /** how many keys are in memory */
  get residentKeys(): number {
    return super.size;
  }

  override has(key: K): boolean {
    return super.has(key) || this.stored.has(key);
  }

  override get(key: K): V | undefined {
    let value = super.get(key);
    if (value !== undefined) {
      // Used again: to the back of the eviction order. Kept only once the cache is full, when the order is
      // next needed: a send reads a key per recipient, and most organizations never fill it.
      if (key !== this.last && super.size >= this.limitOf()) {
        super.delete(key);
        super.set(key, value);
        this.last = key;
      }
      return value;
    }
    if (!this.stored.has(key) || this.loader === null) return undefined;
    this.stored.delete(key);
    value = this.loader(String(key));
    if (value === undefined) return undefined;
    this.kind.watch?.(value, this.reporter(key));
    this.bindValue(key, value);
    super.set(key, value);
    this.last = key;
    if (super.size > this.limitOf()) this.trim();
    return value;
  }

  /** The value if it is in memory, without reading it. */
  peek(key: K): V | undefined {
    return super.get(key);
  }

  /**
   * The value, read from the data directory if it is not in memory, without keeping it there: a walk over
   * many keys that reads each once (newest-ids.ts) does not turn the cache over for them. Only to read.
   */
  readOnce(key: K): V | undefined {
    const resident = super.get(key);
    if (resident !== undefined || !this.stored.has(key) || this.loader === null) return resident;
    const value = this.loader(String(key));
    const read = this.segmentRead;
    if (value !== undefined && this.kind.bind && read !== null) {
      const name = String(key);
      this.kind.bind(value, { read: (segment) => read(name, segment), used: () => {} });
    }
    return value;
  }

  /** A new value for a key: all its segments are written by the next snapshot. */
  override set(key: K, value: V): this {
    this.stored.delete(key);
    this.forget(key);
    super.set(key, value);
    this.last = key;
    this.kind.watch?.(value, this.reporter(key));
    this.bindValue(key, value);
    const segments = this.touch(key);
    if (this.kind.segments) for (const segment of this.kind.segments(value)) segments.add(segment);
    else for (const id of this.kind.ids(value)) this.mark(key, id);
    return this;
  }

  override delete(key: K): boolean {
    const value = super.get(key);
    if (value !== undefined) this.kind.watch?.(value, null);
    this.forget(key);
    this.touch(key);
    return super.delete(key) || this.stored.delete(key);
  }

  /** Tells a value kept by segment where its stored segments are read from, and to report those in memory. */
  private bindValue(key: K, value: V): void {
    const read = this.segmentRead;
    if (!this.kind.bind || read === null) return;
    const name = String(key);
    // A window or a send uses one segment over and over: told again, it is already the most recent.
    let recent: Resident<K, V> | null = null;
    this.kind.bind(value, {
      read: (segment) => read(name, segment),
      used: (segment, ids, wasRead) => {
        if (recent !== null && recent === this.lastResident && recent.segment === segment && recent.ids === ids && !wasRead) return;
        recent = this.used(key, value, segment, ids, wasRead);
      },
    });
  }

  /** Notes the segment as used now (the most recent) holding `ids`; its entry, null if it is gone. */
  private used(key: K, value: V, segment: number, ids: number, wasRead: boolean): Resident<K, V> | null {
    let mine = this.residentOf.get(key);
    if (mine === undefined) this.residentOf.set(key, (mine = new Map()));
    let entry = mine.get(segment);
    if (entry === undefined) {
      if (ids === 0) return null;
      mine.set(segment, (entry = { key, value, segment, ids: 0 }));
    }
    this.ids += ids - entry.ids;
    entry.ids = ids;
    if (ids === 0) {
      this.order.delete(entry);
      mine.delete(segment);
      if (this.lastResident === entry) this.lastResident = null;
      return null;
    }
    if (entry !== this.lastResident) {
      this.order.delete(entry);
      this.order.add(entry);
      this.lastResident = entry;
    }
    // Only a read grows memory by more than an id: the index is trimmed then, and as each snapshot is stored.
    if (wasRead && this.ids > this.segmentLimit) this.trimSegments();
    return entry;
  }

  /** The key's value leaves the index: its segments no longer count (a walk holding it may still read them). */
  private forget(key: K): void {
    const mine = this.residentOf.get(key);
    if (mine !== undefined) {
      for (const entry of mine.values()) {
        this.order.delete(entry);
        this.ids -= entry.ids;
        if (this.lastResident === entry) this.lastResident = null;
      }
      this.residentOf.delete(key);
    }
    const value = super.get(key);
    const read = this.segmentRead;
    if (value === undefined || !this.kind.bind || read === null) return;
    const name = String(key);
    this.kind.bind(value, { read: (segment) => read(name, segment), used: () => {} });
  }

  /** Lets the least recently used stored segments go, but the one just used and those a snapshot has yet to store. */
  private trimSegments(): void {
    for (const entry of this.order) {
      if (this.ids <= this.segmentLimit) break;
      if (entry === this.lastResident || this.held.has(entry.key) || this.dirty.get(entry.key)?.has(entry.segment)) continue;
      this.order.delete(entry);
      this.residentOf.get(entry.key)?.delete(entry.segment);
      this.kind.drop!(entry.value, entry.segment);
      this.ids -= entry.ids;
    }
  }

  override clear(): void {
    throw new Error('a message index is never cleared');
  }

  /** Notes that the key's value changed at `id`. */
  mark(key: K, id: number): void {
    // A value that left memory is no longer the key's: what it is told is no change to the index.
    if (!super.has(key)) return;
    this.touch(key).add(segmentOf(id));
  }

  /** What a value that reports its own changes calls: as `mark`, nearly free for the segment it marked last. */
  private reporter(key: K): (id: number) => void {
    let segment = -1;
    let generation = -1;
    return (id) => {
      const at = segmentOf(id);
      if (at === segment && generation === this.generation) return;
      this.mark(key, id);
      segment = at;
      generation = this.generation;
    };
  }

  private touch(key: K): Set<number> {
    let segments = this.dirty.get(key);
    if (!segments) this.dirty.set(key, (segments = new Set()));
    return segments;
  }

  override *keys(): MapIterator<K> {
    yield* super.keys();
    yield* this.stored;
  }

  override *entries(): MapIterator<[K, V]> {
    for (const key of [...this.keys()]) {
      const value = this.get(key);
      if (value !== undefined) yield [key, value];
    }
  }

  override *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  /** Whether any key changed since the last snapshot. */
  get changed(): boolean {
    return this.dirty.size > 0;
  }

  /** Whether the key changed (or was deleted) since the last snapshot took the changes (takeDirty). */
  hasChanged(key: K): boolean {
    return this.dirty.has(key);
  }

  /** The keys changed since the last snapshot took them (takeDirty): deleted ones too. */
  changedKeys(): IterableIterator<K> {
    return this.dirty.keys();
  }

  private readonly takenListeners: ((keys: Iterable<K>) => void)[] = [];

  /**
   * Tells `listener` the keys each snapshot takes (takeDirty), before they count as unchanged: what keeps a
   * summary of the values (newest-ids.ts, channels/activity.ts) reads these again, as it does the keys
   * changed since.
   */
  onTaken(listener: (keys: Iterable<K>) => void): void {
    this.takenListeners.push(listener);
  }

  /** Marks every segment of every value in memory: a store loaded whole is written whole by the next snapshot. */
  markAll(): void {
    for (const [key, value] of super.entries()) {
      const segments = this.touch(key);
      if (this.kind.segments) for (const segment of this.kind.segments(value)) segments.add(segment);
      else for (const id of this.kind.ids(value)) segments.add(segmentOf(id));
    }
  }

  /** The segments changed since the last snapshot, now counted as saved; they stay in memory until `release`. */
  takeDirty(): Map<K, Set<number>> {
    const taken = this.dirty;
    for (const listener of this.takenListeners) listener(taken.keys());
    this.dirty = new Map();
    this.generation++;
    for (const key of taken.keys()) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    return taken;
  }

  /** After a snapshot that could not be written: its segments are unsaved again. */
  restore(taken: Map<K, Set<number>>): void {
    for (const [key, segments] of taken) {
      const mine = this.touch(key);
      for (const segment of segments) mine.add(segment);
    }
    this.release(taken);
  }

  release(taken: Map<K, Set<number>>): void {
    for (const key of taken.keys()) {
      const holds = this.held.get(key) ?? 0;
      if (holds <= 1) this.held.delete(key);
      else this.held.set(key, holds - 1);
    }
    this.trim();
    if (this.ids > this.segmentLimit) this.trimSegments();
  }

  private trim(): void {
    const limit = this.limitOf();
    if (this.loader === null || super.size <= limit) return;
    // Keys with unsaved changes, or held, stay. With as many of them as the limit there is none to let go, and
    // a walk for one would visit them all, at every key read: a send to more recipients than the limit read
    // each one's unread set so, 10,000 of them in 1 s (2026-11-28). (They may overlap, or name keys not in
    // memory: then fewer may go than could, until the snapshot that writes them.)
    if (super.size - this.dirty.size - this.held.size <= limit) return;
    // Deleting the key being visited leaves the walk where it was (Map iteration).
    for (const key of super.keys()) {
      if (super.size <= limit) break;
      // The key just read stays, whatever the limit.
      if (key === this.last || this.dirty.has(key) || this.held.has(key)) continue;
      this.kind.watch?.(super.get(key)!, null);
      this.forget(key);
      super.delete(key);
      this.stored.add(key);
    }
  }
}
