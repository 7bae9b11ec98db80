/**
 * What an attempt's result means for a sendToUrl delivery, and how long to wait before the
 * next one. Pure.
 *
 * A 2xx delivers. A network error, a timeout, a 5xx or a 429 may pass: retried, with
 * exponential backoff and jitter (and at least the receiver's Retry-After, up to the cap). Any
 * other answer is the receiver's final word: a 4xx is not retried, and a 3xx is not followed
 * (a redirect could lead anywhere, past the address check), so it fails the delivery.
 */
import type { PostResult } from './http-post.js';

export type Verdict = { kind: 'delivered' } | { kind: 'retry'; reason: string; notBeforeMs: number } | { kind: 'failed'; reason: string };

export function verdictOf(result: PostResult): Verdict {
  if (result.kind === 'unreachable') return { kind: 'retry', reason: result.reason, notBeforeMs: 0 };
  const { status } = result;
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status >= 300 && status < 400) {
    const to = result.location === null ? '' : ` to ${result.location.slice(0, 200)}`;
    return { kind: 'failed', reason: `HTTP ${status}: the redirect${to} is not followed` };
  }
  if (status === 429 || status >= 500) return { kind: 'retry', reason: `HTTP ${status}`, notBeforeMs: result.retryAfterMs ?? 0 };
  return { kind: 'failed', reason: `HTTP ${status}` };
}

export interface Backoff {
  /** The wait before the first retry; each further retry waits twice as long. */
  baseMs: number;
  /** The longest wait (Retry-After included). */
  maxMs: number;
}

/**
 * The wait before retry number `retry` (1 for the first): half of the exponential step fixed,
 * the other half random, so that deliveries that failed together do not retry together.
 */
export function backoffMs(retry: number, backoff: Backoff, notBeforeMs = 0, random: () => number = Math.random): number {
  const step = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (retry - 1));
  return Math.min(backoff.maxMs, Math.max(notBeforeMs, step / 2 + (random() * step) / 2));
}
