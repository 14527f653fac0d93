/**
 * A persisted per-key index of a realm's messages is stored in segments: the ids of one key within 2^17
 * consecutive message ids are one record. A snapshot rewrites only the segments a change touched (the
 * newest, for a send), and a key is read back by reading its segments in order.
 */
export const SEGMENT_BITS = 17;

export const segmentOf = (messageId: number) => messageId >>> SEGMENT_BITS;

/**
 * Keys of a per-key index that stay in memory, per index and organization (the most recently used): a
 * channel's or topic's id list, a user's flag or mention set. CHAT_MESSAGE_KEY_CACHE sets another size.
 */
export const DEFAULT_KEY_CACHE = 4096;

/** What a lazy index's values are: how their ids are read, and how a value reports its own changes. */
export interface ValueKind<V> {
  /** the value's ids, ascending, to mark every segment of a value set whole */
  ids(value: V): Iterable<number>;
  /** a value that reports its own changes (IdSet.onChange) is told whom to report to */
  watch?(value: V, changed: ((id: number) => void) | null): void;
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
 */
export class LazyMap<K extends string | number, V> extends Map<K, V> {
  /** keys stored in the data directory and not in memory */
  private readonly stored = new Set<K>();
  private loader: KeyLoader<V> | null = null;
  private limit = Infinity;
  private last: K | undefined = undefined;
  /** key -> segments changed since the last snapshot; a key without a value: its segments go */
  private dirty = new Map<K, Set<number>>();
  private readonly held = new Map<K, number>();
  /** counts takeDirty calls: a value's reporter remembers the segment it last marked in this generation */
  private generation = 0;

  constructor(
    private readonly parse: (key: string) => K,
    private readonly kind: ValueKind<V>,
  ) {
    super();
  }

  /** Reads values through `loader` from now on; `limit` keys stay in memory. */
  attach(loader: KeyLoader<V>, limit: number): void {
    this.loader = loader;
    this.limit = limit;
    this.trim();
  }

  /** Reads from where `other` reads (an index loaded for a realm started with another). */
  adopt(other: LazyMap<K, V>): void {
    if (other.loader) this.attach(other.loader, other.limit);
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
      if (key !== this.last && super.size >= this.limit) {
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
    super.set(key, value);
    this.last = key;
    if (super.size > this.limit) this.trim();
    return value;
  }

  /** The value if it is in memory, without reading it. */
  peek(key: K): V | undefined {
    return super.get(key);
  }

  /** A new value for a key: all its segments are written by the next snapshot. */
  override set(key: K, value: V): this {
    this.stored.delete(key);
    super.set(key, value);
    this.last = key;
    this.kind.watch?.(value, this.reporter(key));
    this.touch(key);
    for (const id of this.kind.ids(value)) this.mark(key, id);
    return this;
  }

  override delete(key: K): boolean {
    const value = super.get(key);
    if (value !== undefined) this.kind.watch?.(value, null);
    this.touch(key);
    return super.delete(key) || this.stored.delete(key);
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

  /** Marks every segment of every value in memory: a store loaded whole is written whole by the next snapshot. */
  markAll(): void {
    for (const [key, value] of super.entries()) {
      const segments = this.touch(key);
      for (const id of this.kind.ids(value)) segments.add(segmentOf(id));
    }
  }

  /** The segments changed since the last snapshot, now counted as saved; they stay in memory until `release`. */
  takeDirty(): Map<K, Set<number>> {
    const taken = this.dirty;
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
  }

  private trim(): void {
    if (this.loader === null || super.size <= this.limit) return;
    for (const key of [...super.keys()]) {
      if (super.size <= this.limit) break;
      // The key just read stays, whatever the limit.
      if (key === this.last || this.dirty.has(key) || this.held.has(key)) continue;
      this.kind.watch?.(super.get(key)!, null);
      super.delete(key);
      this.stored.add(key);
    }
  }
}
