/** The ids a cache remembers as read once, per entry it holds (SecondUse). */
export const SECOND_USE_SPAN = 2;

/**
 * Which message ids were asked for recently: a cache of message bodies or views admits a message on its
 * second use (paged.ts a chunk likewise), so that a read over a cold part of the history (50 messages,
 * each read once) leaves nothing behind. Cached, those messages outlived a young-generation collection or
 * two and were then evicted from the old generation: every scavenge copied a few MB of them, and their
 * garbage made the full collections that set the p99 of cold reads (bench/README.md, "Cold reads without
 * cache churn"). A page read again (the newest messages of a busy topic) is cached from its second read on.
 *
 * One id per slot of a typed array, the id modulo their number: nothing on the heap, nothing to collect. Two ids
 * of one slot forget each other, which only delays an admission.
 */
export class SecondUse {
  /** id + 1 per slot, 0 for none (a float: any safe integer id) */
  private readonly slots: Float64Array;

  /** Remembers up to `span` ids: a few times the cache's limit. */
  constructor(span: number) {
    this.slots = new Float64Array(Math.max(1, span));
  }

  /** Was `id` asked for since its slot last changed? (Without remembering it: `again`.) */
  seen(id: number): boolean {
    return this.slots[id % this.slots.length] === id + 1;
  }

  /** Was `id` asked for since its slot last changed? Either way it is remembered now. */
  again(id: number): boolean {
    const slot = id % this.slots.length;
    if (this.slots[slot] === id + 1) return true;
    this.slots[slot] = id + 1;
    return false;
  }
}
