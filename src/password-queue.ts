import { rateLimitHit } from './http/rate-limit.ts';

/**
 * Who waits for a hash: a caller without credentials (a login, an invitation's sign-up), whose line is
 * bounded, or a signed-in user (a password change, an administrator making an account), already limited by
 * the per-user rate limit, who is never refused and goes first.
 */
export type HashLane = 'anonymous' | 'user';

interface Job {
  start(): void;
}

/** Until hashes have been timed: what one takes on one core here (src/passwords.ts). */
const FIRST_ESTIMATE_MS = 50;

/**
 * Password hashing (scrypt) in a line of its own. Node runs scrypt on libuv's thread pool, which LMDB commits
 * and file reads and writes share: unbounded, a flood of logins took all four threads and every durable
 * write of every organization waited seconds behind it. Here at most `concurrency` hashes run at once, the
 * rest wait in order, and a caller without credentials finding `queueLength` others waiting is refused with
 * the time the line needs to clear.
 */
export class PasswordQueue {
  private running = 0;
  private readonly waiting: Record<HashLane, Job[]> = { user: [], anonymous: [] };
  /** moving average of one hash's duration, for the refusal's Retry-After */
  private averageMs = FIRST_ESTIMATE_MS;

  constructor(
    readonly concurrency: number,
    readonly queueLength: number,
  ) {}

  /** hashes waiting for a turn */
  get queued(): number {
    return this.waiting.user.length + this.waiting.anonymous.length;
  }

  run<T>(lane: HashLane, hash: () => Promise<T>): Promise<T> {
    if (lane === 'anonymous' && this.waiting.anonymous.length >= this.queueLength) {
      const seconds = ((this.queued + this.running) * this.averageMs) / this.concurrency / 1000;
      return Promise.reject(rateLimitHit('Too many password checks at once; try again shortly', seconds, this.queueLength));
    }
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        start: () => {
          this.running++;
          const started = performance.now();
          hash().then(resolve, reject).finally(() => {
            this.averageMs = 0.9 * this.averageMs + 0.1 * (performance.now() - started);
            this.running--;
            this.next();
          });
        },
      };
      this.waiting[lane].push(job);
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.concurrency) {
      const job = this.waiting.user.shift() ?? this.waiting.anonymous.shift();
      if (!job) return;
      job.start();
    }
  }
}
