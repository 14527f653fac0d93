/** What the sweep keeps on each queue: its slot, -1 once it has none. */
export interface Sweepable {
  sweepSlot: number;
}

const INITIAL_SLOTS = 1024;

/**
 * When each live queue may next have something for the sweep to do (a heartbeat, an idle collection), by
 * slot: a lower bound, which the sweep makes exact when it comes. The sweep reads the bounds, 8 bytes a
 * queue in a row, and visits only the queues whose time has come; it used to fetch every queue object each
 * second, 5-9 ms at 100,000 queues (bench/sweep.ts). A bound may only be late by being lowered too little:
 * whoever moves a queue's next heartbeat earlier lowers it (`lower`); what moves things later needs nothing.
 */
export class SweepSlots<T extends Sweepable> {
  private bounds = new Float64Array(INITIAL_SLOTS).fill(Infinity);
  private readonly items: (T | null)[] = [];
  private readonly free: number[] = [];

  /** A slot for a new item, with its first bound. */
  take(item: T, bound: number): void {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.items.length;
      this.items.push(null);
      if (slot >= this.bounds.length) {
        const grown = new Float64Array(this.bounds.length * 2).fill(Infinity);
        grown.set(this.bounds);
        this.bounds = grown;
      }
    }
    this.items[slot] = item;
    this.bounds[slot] = bound;
    item.sweepSlot = slot;
  }

  /** The item is gone: its slot is free (once, however often it is released). */
  release(item: T): void {
    const slot = item.sweepSlot;
    if (slot < 0 || this.items[slot] !== item) return;
    this.items[slot] = null;
    this.bounds[slot] = Infinity;
    this.free.push(slot);
    item.sweepSlot = -1;
  }

  /** Something for the item may now come as early as `at`. */
  lower(item: T, at: number): void {
    const slot = item.sweepSlot;
    if (slot >= 0 && at < this.bounds[slot]!) this.bounds[slot] = at;
  }

  /** The item's bound, made exact by the sweep. */
  set(item: T, bound: number): void {
    const slot = item.sweepSlot;
    if (slot >= 0) this.bounds[slot] = bound;
  }

  /** The items whose bound has come, in slot order: a list of its own, so the caller may release or re-bound them as it goes. */
  due(now: number): T[] {
    const due: T[] = [];
    const bounds = this.bounds;
    const end = this.items.length;
    for (let slot = 0; slot < end; slot++) if (bounds[slot]! <= now) due.push(this.items[slot]!);
    return due;
  }
}
