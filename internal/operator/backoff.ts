/**
 * Exponential backoff with jitter for failed reconciles: the n-th failure in a row waits
 * base·2^(n-1), capped, and then a random part of it ("equal jitter": half fixed, half
 * random), so that many Realms failing together (the store down) do not retry in step. Pure
 * but for the random source, which callers may pass.
 */

export interface BackoffPolicy {
  /** Delay after the first failure, in milliseconds. */
  baseMs: number;
  /** Largest delay, in milliseconds. */
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 5 * 60_000 };

/** The delay before retrying after `failures` failures in a row (≥ 1); within [d/2, d] for d = min(cap, base·2^(failures-1)). */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(failures - 1, 52));
  const full = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  const half = full / 2;
  return Math.round(half + half * Math.min(1, Math.max(0, random())));
}
