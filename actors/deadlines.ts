import type { Clock } from './realm/decide.ts';

/** setTimeout and clearTimeout, injectable so that a test can drive the timer by hand. */
export interface TimerApi {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const nodeTimers: TimerApi = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    // A pending deadline must not keep a stopping process alive.
    handle.unref();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Node's timers overflow above 2^31-1 ms (about 24.8 days) and fire at once; a far deadline wakes early and re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One timer for many absolute deadlines: the deadlines live in an indexed min-heap and a single setTimeout
 * waits for the earliest, re-armed whenever the earliest changes. The owners keep the deadlines in their
 * state (so they survive a restart) and re-register them at boot; this holds no durable state.
 */
export class DeadlineTimer<K> {
  private readonly heap: { key: K; at: number }[] = [];
  /** key -> its position in the heap */
  private readonly position = new Map<K, number>();
  private handle: unknown = null;
  /** the deadline the armed timer is for */
  private armedAt = Infinity;
  private running = false;

  constructor(
    private readonly clock: Clock,
    /** told the due keys, earliest first, already removed */
    private readonly onDue: (keys: K[]) => void,
    private readonly timers: TimerApi = nodeTimers,
  ) {}

  get size(): number {
    return this.heap.length;
  }

  /** The deadline of `key`, UNIX ms, if one is set. */
  deadline(key: K): number | undefined {
    const at = this.position.get(key);
    return at === undefined ? undefined : this.heap[at]!.at;
  }

  /** Sets or moves the deadline of `key` (UNIX ms). */
  set(key: K, at: number): void {
    const index = this.position.get(key);
    if (index === undefined) {
      this.heap.push({ key, at });
      this.position.set(key, this.heap.length - 1);
      this.up(this.heap.length - 1);
    } else {
      const previous = this.heap[index]!.at;
      this.heap[index]!.at = at;
      if (at < previous) this.up(index);
      else this.down(index);
    }
    this.arm();
  }

  delete(key: K): void {
    const index = this.position.get(key);
    if (index === undefined) return;
    this.removeAt(index);
    this.arm();
  }

  /** Starts firing: what is already due goes at once, on the next turn. */
  start(): void {
    this.running = true;
    this.arm(true);
  }

  stop(): void {
    this.running = false;
    this.disarm();
  }

  /**
   * Fires what is due now and re-arms. The timer calls it; so may a test whose clock jumped forward
   * (a timer armed for a far deadline does not know the clock moved).
   */
  wake(): void {
    this.disarm();
    if (!this.running) return;
    const now = this.clock.now();
    const due: K[] = [];
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      due.push(this.heap[0]!.key);
      this.removeAt(0);
    }
    if (due.length > 0) this.onDue(due);
    this.arm();
  }

  private arm(force = false): void {
    if (!this.running) return;
    const earliest = this.heap[0]?.at ?? Infinity;
    if (!force && earliest === this.armedAt) return;
    this.disarm();
    if (earliest === Infinity) return;
    this.armedAt = earliest;
    const delay = Math.min(Math.max(0, earliest - this.clock.now()), MAX_TIMER_MS);
    this.handle = this.timers.setTimeout(() => {
      this.handle = null;
      this.armedAt = Infinity;
      this.wake();
    }, delay);
  }

  private disarm(): void {
    if (this.handle !== null) this.timers.clearTimeout(this.handle);
    this.handle = null;
    this.armedAt = Infinity;
  }

  private removeAt(index: number): void {
    const removed = this.heap[index]!;
    const last = this.heap.pop()!;
    this.position.delete(removed.key);
    if (index === this.heap.length) return;
    this.heap[index] = last;
    this.position.set(last.key, index);
    this.up(index);
    this.down(this.position.get(last.key)!);
  }

  private up(index: number): void {
    const { heap } = this;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= heap[index]!.at) return;
      this.swap(index, parent);
      index = parent;
    }
  }

  private down(index: number): void {
    const { heap } = this;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && heap[left]!.at < heap[smallest]!.at) smallest = left;
      if (right < heap.length && heap[right]!.at < heap[smallest]!.at) smallest = right;
      if (smallest === index) return;
      this.swap(index, smallest);
      index = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const { heap, position } = this;
    [heap[a], heap[b]] = [heap[b]!, heap[a]!];
    position.set(heap[a]!.key, a);
    position.set(heap[b]!.key, b);
  }
}
