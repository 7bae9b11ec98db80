/**
 * Token buckets by key (a token id, a source address): `rate` requests per second refill
 * a bucket of `burst`. Pure arithmetic over an injected clock; a bucket is dropped once
 * it is full again, so idle keys cost nothing.
 */
export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one request would be allowed (for Retry-After). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
  rate: number;
  burst: number;
}

const allowed: RateDecision = { allowed: true, retryAfterSeconds: 0 };

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweepMs = 0;

  /** Takes one request from the key's bucket. */
  take(key: string, rate: number, burst: number, nowMs: number): RateDecision {
    this.sweep(nowMs);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: burst, updatedMs: nowMs, rate, burst };
      this.buckets.set(key, bucket);
    }
    // Updated in place: this runs once per action on the ingest path.
    bucket.rate = rate;
    bucket.burst = burst;
    bucket.tokens = refilled(bucket, nowMs);
    bucket.updatedMs = nowMs;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return allowed;
    }
    return { allowed: false, retryAfterSeconds: retryAfter(bucket) };
  }

  /** Whether the key's bucket has a request left, without taking it. */
  peek(key: string, nowMs: number): RateDecision {
    const bucket = this.buckets.get(key);
    if (bucket === undefined || refilled(bucket, nowMs) >= 1) return allowed;
    return { allowed: false, retryAfterSeconds: retryAfter({ ...bucket, tokens: refilled(bucket, nowMs) }) };
  }

  /** Forgets buckets that have refilled completely, at most once a minute. */
  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = nowMs;
    for (const [key, bucket] of this.buckets) {
      if (refilled(bucket, nowMs) >= bucket.burst) this.buckets.delete(key);
    }
  }
}

function refilled(bucket: Bucket, nowMs: number): number {
  return Math.min(bucket.burst, bucket.tokens + (Math.max(0, nowMs - bucket.updatedMs) / 1000) * bucket.rate);
}

function retryAfter(bucket: Bucket): number {
  return Math.max(1, Math.ceil((1 - bucket.tokens) / bucket.rate));
}
