/**
 * Per-token token buckets: `rate` requests per second refill a bucket of `burst`.
 * Pure arithmetic over an injected clock; idle buckets are dropped when full again.
 */
export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one request would be allowed (for Retry-After). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweepMs = 0;

  take(key: string, rate: number, burst: number, nowMs: number): RateDecision {
    this.sweep(rate, burst, nowMs);
    const bucket = this.buckets.get(key) ?? { tokens: burst, updatedMs: nowMs };
    const refilled = Math.min(burst, bucket.tokens + ((nowMs - bucket.updatedMs) / 1000) * rate);
    if (refilled >= 1) {
      this.buckets.set(key, { tokens: refilled - 1, updatedMs: nowMs });
      return { allowed: true, retryAfterSeconds: 0 };
    }
    this.buckets.set(key, { tokens: refilled, updatedMs: nowMs });
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - refilled) / rate)) };
  }

  /** Forgets buckets that have refilled completely, at most once a minute. */
  private sweep(rate: number, burst: number, nowMs: number): void {
    if (nowMs - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = nowMs;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.updatedMs) / 1000) * rate >= burst) this.buckets.delete(key);
    }
  }
}
