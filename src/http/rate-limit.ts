import { ChatError, ErrorCode } from '../../actors/errors.ts';

const SWEEP_AT = 10_000;

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  /** seconds until a request is allowed again */
  retryAfter: number;
}

/**
 * A token bucket per key: `limit` requests per `windowSeconds`, refilled continuously. One bucket is two
 * numbers, so a realm of many users costs little; idle buckets are dropped when full again.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;
  /**
   * Past this many buckets the full ones are dropped. Raised after a sweep that leaves many (a crowd of
   * addresses, each with a recent request), so that sweeps stay rare instead of running on every request.
   */
  private sweepAt = SWEEP_AT;

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = limit / (windowSeconds * 1000);
  }

  /** Spends one request if allowed. */
  hit(key: string): RateDecision {
    const bucket = this.refill(key);
    const decision = this.decide(bucket.tokens);
    if (decision.allowed) {
      bucket.tokens -= 1;
      decision.remaining = Math.floor(bucket.tokens);
    }
    return decision;
  }

  /** Gives back one request spent by `hit` (a login that turned out right does not count as a failure). */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.limit, bucket.tokens + 1);
  }

  private refill(key: string) {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = { tokens: this.limit, at: now }));
    bucket.tokens = Math.min(this.limit, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    if (this.buckets.size > this.sweepAt) {
      this.dropFull(now);
      this.sweepAt = Math.max(SWEEP_AT, 2 * this.buckets.size);
    }
    return bucket;
  }

  private decide(tokens: number): RateDecision {
    if (tokens >= 1) return { allowed: true, remaining: Math.floor(tokens) - 1, retryAfter: 0 };
    return { allowed: false, remaining: 0, retryAfter: (1 - tokens) / this.perMs / 1000 };
  }

  private dropFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.limit) this.buckets.delete(key);
    }
  }
}

/** The original's answer to a caller over a budget: 429 RATE_LIMIT_HIT, the seconds to wait in the body and headers. */
export function rateLimitHit(message: string, retryAfterSeconds: number, limit: number): ChatError {
  return new ChatError(ErrorCode.RATE_LIMIT_HIT, message, 429, { 'retry-after': Math.ceil(retryAfterSeconds * 1000) / 1000 }, {
    'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': '0',
  });
}

/** Throws the 429 for a refused decision of `limiter`. */
export function refuseOver(limiter: RateLimiter, decision: RateDecision, message: string): void {
  if (!decision.allowed) throw rateLimitHit(message, decision.retryAfter, limiter.limit);
}
