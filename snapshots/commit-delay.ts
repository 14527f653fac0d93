/** A log entry, encoded, as the store writes it. */
export interface Entry {
  seq: number;
  bytes: Buffer;
}

/** Long enough for the writers a commit answered to come back, under load; a timer's least. */
export const DEFAULT_COMMIT_DELAY_MS = 1;

/**
 * After this long with no append outstanding, the writers of the last batch are taken to be gone: the next
 * append is written at once. With 1 ms (the delay) instead, on a loaded machine the writers a commit
 * answered often came back later than that: the first found the store quiet and went alone, a commit of 1
 * and then one of 15 with 16 writers (11 sends per commit instead of 13-16).
 */
const QUIET_MS = 10;

interface Waiting {
  entries: Entry[];
  promise: Promise<void>;
  release: (written: Promise<void>) => void;
}

/**
 * Gathers log appends into fewer, larger commits while several writers are busy, as PostgreSQL's
 * `commit_delay` with `commit_siblings`: a durable LMDB commit costs about the same CPU whatever it holds
 * (bench/README.md, "Fifth pass"), so under load each one should hold more. One batch of appends is in
 * flight at a time; those that come meanwhile wait for it to be durable. A batch is handed over once it
 * holds as many appends as were outstanding at once during the last one (the writers that commit answered
 * have come back), or `delayMs` after it could have been, whichever is first. A lone writer (one append
 * outstanding at a time, or one turn of the event loop's) is written at once, as is the first append after a
 * quiet spell. Each append's promise settles with the commit that holds it: no answer or event comes before
 * its entry is durable.
 */
export class CommitDelay {
  /** batches handed to the store whose commit has not settled */
  private inFlight = 0;
  private waiting: Waiting | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** appends not yet settled, waiting or in flight */
  private outstanding = 0;
  /** the most appends outstanding at once since the last batch was handed over */
  private peak = 0;
  /** when the last append settled with none left outstanding */
  private idleSince = 0;
  /** a lone append was written in this turn of the event loop: the turn's other appends go with it */
  private turnOpen = false;
  private readonly closeTurn = () => {
    this.turnOpen = false;
  };
  /** the commit of the last batch handed over */
  last: Promise<void> = Promise.resolve();
  private readonly settle = (count: number) => () => this.settled(count);
  private readonly expire = () => {
    this.timer = null;
    this.flush();
  };

  /** `write` hands the entries to LMDB in one event-loop turn, hence one commit, which its promise follows. */
  constructor(private readonly delayMs: number, private readonly write: (entries: Entry[]) => Promise<void>) {}

  append(entry: Entry): Promise<void> {
    if (this.delayMs === 0 || (this.turnOpen && this.waiting === null)) return (this.last = this.write([entry]));
    if (this.outstanding === 0 && performance.now() - this.idleSince > QUIET_MS) this.peak = 0;
    if (++this.outstanding > this.peak) this.peak = this.outstanding;
    if (this.inFlight === 0 && this.waiting === null && this.peak === 1) {
      // The turn's later appends (a request that commits twice) share this commit, as lmdb-js batches a
      // turn's writes, and are not counted as writers of their own.
      this.turnOpen = true;
      setImmediate(this.closeTurn);
      return this.start([entry]);
    }
    const waiting = (this.waiting ??= CommitDelay.waiting());
    waiting.entries.push(entry);
    if (this.inFlight === 0) this.flushOrWait(waiting);
    return waiting.promise;
  }

  /** Hands the waiting appends over now: before a write that must come after them (a snapshot), or a close. */
  flush(): void {
    const waiting = this.waiting;
    if (waiting === null) return;
    this.waiting = null;
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    waiting.release(this.start(waiting.entries));
  }

  private flushOrWait(waiting: Waiting): void {
    if (waiting.entries.length >= this.peak) this.flush();
    else this.timer ??= setTimeout(this.expire, this.delayMs);
  }

  private start(entries: Entry[]): Promise<void> {
    this.inFlight++;
    this.peak = this.outstanding;
    const written = (this.last = this.write(entries));
    const settle = this.settle(entries.length);
    written.then(settle, settle);
    return written;
  }

  private settled(count: number): void {
    this.inFlight--;
    this.outstanding -= count;
    if (this.outstanding === 0) this.idleSince = performance.now();
    if (this.inFlight === 0 && this.waiting !== null) this.flushOrWait(this.waiting);
  }

  private static waiting(): Waiting {
    let release!: (written: Promise<void>) => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    return { entries: [], promise, release };
  }
}

