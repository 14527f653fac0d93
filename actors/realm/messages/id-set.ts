import { SEGMENT_SIZE } from './lazy-map.ts';
import { lowerBound } from './lower-bound.ts';

/** A block covers 1,024 consecutive ids: as a bitmap, 32 words. */
const BLOCK_BITS = 10;
const WORDS = 1 << (BLOCK_BITS - 5);
/** A block holds up to this many ids as a sorted list; one more and it becomes a bitmap (about the same bytes). */
const LIST_LIMIT = 32;

type Block = number[] | Int32Array;
/** addRange tells onChange of an id at least this often: no more than the smallest span a listener tells apart (lazy-map.ts SEGMENT_SIZE) */
const RANGE_STEP = Math.min(1 << 12, SEGMENT_SIZE);

/**
 * A set of message ids (a user's unread, starred or collapsed messages), iterated in ascending order. Ids are
 * kept in blocks of 1,024: a block with few ids as a short sorted list, a block with many as a bitmap with its
 * count in the last word. A user with a million unread messages costs about 130 KB, not the 20 MB of a
 * `Set`, and a boot adds a chunk's flags without rehashing a growing table. Ids are below 2^31.
 */
export class IdSet implements Iterable<number> {
  private readonly blocks = new Map<number, Block>();
  private count = 0;
  /** the block keys in ascending order, for iteration; null after a block came or went */
  private keys: number[] | null = null;
  /** told of every id added or removed (and of each end of a range added): what a snapshot must write again (lazy-map.ts) */
  onChange: ((id: number) => void) | null = null;

  constructor(ids?: Iterable<number>) {
    if (ids) for (const id of ids) this.add(id);
  }

  get size(): number {
    return this.count;
  }

  get isEmpty(): boolean {
    return this.count === 0;
  }

  /** At least as many as it holds, without reading what is stored (StoredIdSet); exact here. */
  get sizeBound(): number {
    return this.count;
  }

  has(id: number): boolean {
    const block = this.blocks.get(id >>> BLOCK_BITS);
    if (block === undefined) return false;
    if (block instanceof Int32Array) return (block[(id >>> 5) & (WORDS - 1)]! & (1 << (id & 31))) !== 0;
    return block.includes(id);
  }

  add(id: number): this {
    const key = id >>> BLOCK_BITS;
    const block = this.blocks.get(key);
    this.onChange?.(id);
    if (block === undefined) {
      this.blocks.set(key, [id]);
      this.keys = null;
      this.count++;
    } else if (block instanceof Int32Array) {
      const word = (id >>> 5) & (WORDS - 1);
      const bit = 1 << (id & 31);
      if ((block[word]! & bit) !== 0) return this;
      block[word]! |= bit;
      block[WORDS]!++;
      this.count++;
    } else {
      // Ids mostly come in ascending order: appending is the common case.
      let at = block.length;
      while (at > 0 && block[at - 1]! >= id) at--;
      if (block[at] === id) return this;
      this.count++;
      if (block.length < LIST_LIMIT) {
        block.splice(at, 0, id);
        return this;
      }
      const bitmap = new Int32Array(WORDS + 1);
      for (const other of block) setBit(bitmap, other);
      setBit(bitmap, id);
      bitmap[WORDS] = block.length + 1;
      this.blocks.set(key, bitmap);
    }
    return this;
  }

  /** Adds the ids in [from, to): a whole block's worth at once as a bitmap (a boot adds unread messages by the thousand). */
  addRange(from: number, to: number): this {
    if (this.onChange && from < to) {
      for (let at = from; at < to; at += RANGE_STEP) this.onChange(at);
      this.onChange(to - 1);
    }
    let id = from;
    while (id < to) {
      const key = id >>> BLOCK_BITS;
      const end = Math.min(to, (key + 1) << BLOCK_BITS);
      let block = this.blocks.get(key);
      // A short run into a list (or no block yet) goes id by id, so that a sparse block stays a list.
      if (!(block instanceof Int32Array) && (end - id < LIST_LIMIT || block !== undefined)) {
        for (; id < end; id++) this.add(id);
        continue;
      }
      if (block === undefined) {
        this.blocks.set(key, (block = new Int32Array(WORDS + 1)));
        this.keys = null;
      }
      let added = 0;
      for (; id < end; id++) {
        const word = (id >>> 5) & (WORDS - 1);
        const bit = 1 << (id & 31);
        if ((block[word]! & bit) === 0) {
          block[word]! |= bit;
          added++;
        }
      }
      block[WORDS]! += added;
      this.count += added;
    }
    return this;
  }

  /**
   * Adds runs of ids ([from, to) pairs, ascending, as a stored segment holds them). A block the runs fill
   * past a list's limit is made a bitmap first, so that addRange sets its bits by the word rather than id by
   * id: a user's unread messages come in many short runs (those of one channel among others).
   */
  addRuns(runs: ArrayLike<number>): this {
    let counting = -1;
    let count = 0;
    const bitmapIfFull = () => {
      if (counting >= 0 && count > LIST_LIMIT && !this.blocks.has(counting)) {
        this.blocks.set(counting, new Int32Array(WORDS + 1));
        this.keys = null;
      }
    };
    for (let r = 0; r < runs.length; r += 2) {
      const to = runs[r + 1]!;
      for (let id = runs[r]!; id < to; ) {
        const key = id >>> BLOCK_BITS;
        const end = Math.min(to, (key + 1) << BLOCK_BITS);
        if (key !== counting) {
          bitmapIfFull();
          counting = key;
          count = 0;
        }
        count += end - id;
        id = end;
      }
    }
    bitmapIfFull();
    for (let r = 0; r < runs.length; r += 2) this.addRange(runs[r]!, runs[r + 1]!);
    return this;
  }

  delete(id: number): boolean {
    const key = id >>> BLOCK_BITS;
    const block = this.blocks.get(key);
    if (block === undefined) return false;
    let left: number;
    if (block instanceof Int32Array) {
      const word = (id >>> 5) & (WORDS - 1);
      const bit = 1 << (id & 31);
      if ((block[word]! & bit) === 0) return false;
      block[word]! &= ~bit;
      left = --block[WORDS]!;
    } else {
      const at = block.indexOf(id);
      if (at < 0) return false;
      block.splice(at, 1);
      left = block.length;
    }
    this.count--;
    this.onChange?.(id);
    if (left === 0) {
      this.blocks.delete(key);
      this.keys = null;
    }
    return true;
  }

  *[Symbol.iterator](): IterableIterator<number> {
    this.keys ??= [...this.blocks.keys()].sort((a, b) => a - b);
    for (const key of this.keys) {
      const block = this.blocks.get(key);
      if (block === undefined) continue;
      if (!(block instanceof Int32Array)) {
        yield* block.slice();
        continue;
      }
      const base = key << BLOCK_BITS;
      for (let word = 0; word < WORDS; word++) {
        let bits = block[word]!;
        while (bits !== 0) {
          const low = bits & -bits;
          yield base + word * 32 + (31 - Math.clz32(low));
          bits ^= low;
        }
      }
    }
  }

  /**
   * The ids in [from, to) as runs of consecutive ids, [from, to) pairs one after the other: a bitmap's full
   * words are taken whole, so that a user's 100,000 unread messages make a few runs in microseconds.
   */
  runs(from: number, to: number): number[] {
    const out: number[] = [];
    const push = (start: number, end: number) => {
      if (out.length > 0 && out[out.length - 1] === start) out[out.length - 1] = end;
      else out.push(start, end);
    };
    this.keys ??= [...this.blocks.keys()].sort((a, b) => a - b);
    const first = from >>> BLOCK_BITS;
    const last = (to - 1) >>> BLOCK_BITS;
    for (const key of this.keys) {
      if (key < first) continue;
      if (key > last) break;
      const block = this.blocks.get(key);
      if (block === undefined) continue;
      if (!(block instanceof Int32Array)) {
        for (const id of block) if (id >= from && id < to) push(id, id + 1);
        continue;
      }
      const base = key << BLOCK_BITS;
      for (let word = 0; word < WORDS; word++) {
        let bits = block[word]!;
        if (bits === 0) continue;
        const wordBase = base + word * 32;
        if (bits === -1 && wordBase >= from && wordBase + 32 <= to) {
          push(wordBase, wordBase + 32);
          continue;
        }
        while (bits !== 0) {
          const low = bits & -bits;
          const id = wordBase + (31 - Math.clz32(low));
          if (id >= from && id < to) push(id, id + 1);
          bits ^= low;
        }
      }
    }
    return out;
  }

  values(): IterableIterator<number> {
    return this[Symbol.iterator]();
  }

  /**
   * The ids beyond `from` (any number: it need not be in the set), the nearest first: below it, descending,
   * when `down`, else above it, ascending. Reaching the first costs a search over the blocks, not a walk of
   * the ids before it, so a walk resumed by the last id it examined starts where it stopped. The set must not
   * change while this is iterated.
   */
  *idsFrom(from: number, down: boolean): Generator<number, void, undefined> {
    const keys = (this.keys ??= [...this.blocks.keys()].sort((a, b) => a - b));
    // The block `from` falls in (ids are below 2^31: a larger bound is past every block).
    const fromKey = Math.floor(Math.min(Math.max(from, -1), MAX_ID + 1) / (1 << BLOCK_BITS));
    if (down) {
      for (let k = lowerBound(keys, fromKey + 1) - 1; k >= 0; k--) {
        const key = keys[k]!;
        const block = this.blocks.get(key)!;
        if (!(block instanceof Int32Array)) {
          for (let i = block.length - 1; i >= 0; i--) if (block[i]! < from) yield block[i]!;
          continue;
        }
        const base = key << BLOCK_BITS;
        for (let word = WORDS - 1; word >= 0; word--) {
          let bits = block[word]!;
          while (bits !== 0) {
            const high = 31 - Math.clz32(bits);
            bits &= ~(1 << high);
            const id = base + word * 32 + high;
            if (id < from) yield id;
          }
        }
      }
      return;
    }
    for (let k = lowerBound(keys, fromKey); k < keys.length; k++) {
      const key = keys[k]!;
      const block = this.blocks.get(key)!;
      if (!(block instanceof Int32Array)) {
        for (const id of block) if (id > from) yield id;
        continue;
      }
      const base = key << BLOCK_BITS;
      for (let word = 0; word < WORDS; word++) {
        let bits = block[word]!;
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const id = base + word * 32 + (31 - Math.clz32(low));
          if (id > from) yield id;
        }
      }
    }
  }
}

const MAX_ID = 2 ** 31 - 1;

function setBit(bitmap: Int32Array, id: number): void {
  bitmap[(id >>> 5) & (WORDS - 1)]! |= 1 << (id & 31);
}
