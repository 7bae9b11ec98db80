/**
 * The operator's work queue, after client-go's workqueue: keys (`namespace/name`), not
 * objects, so that a Realm changed ten times while it waits is reconciled once with its
 * latest state (level-based). A key is at most once in the queue and at most one worker
 * holds it at a time; a key added while a worker holds it is queued again when the worker is
 * done. N workers take keys in the order they came. A failed key comes back after an
 * exponential backoff with jitter (backoff.ts); a success forgets its failures and may ask to
 * come back later (requeueAfterMs: a tenant key's grace period ending).
 */
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';

export interface ProcessResult {
  /** Reconcile the key again after this many milliseconds (even if nothing changes). */
  requeueAfterMs?: number;
}

export type ProcessKey = (key: string) => Promise<ProcessResult | void>;

/** What the queue tells its owner (metrics, logs). */
export interface QueueHooks {
  /** A key was processed: `ok`, or failed with `error` and will be retried after `retryInMs`. */
  processed?(key: string, outcome: { ok: true; durationMs: number; requeueAfterMs?: number } | { ok: false; durationMs: number; error: unknown; retryInMs: number; failures: number }): void;
  /** The number of keys waiting changed. */
  depthChanged?(depth: number): void;
}

export interface Scheduler {
  /** Runs `fn` after `ms` milliseconds; returns a cancel function. */
  schedule(fn: () => void, ms: number): () => void;
  now(): number;
}

export const realTimers: Scheduler = {
  schedule(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
  now: () => Date.now(),
};

export interface WorkQueueOptions {
  workers: number;
  backoff?: BackoffPolicy;
  hooks?: QueueHooks;
  scheduler?: Scheduler;
  random?: () => number;
}

export class WorkQueue {
  /** Keys waiting, in order; `queued` mirrors it for membership. */
  private readonly waiting: string[] = [];
  private readonly queued = new Set<string>();
  /** Keys a worker holds now. */
  private readonly active = new Set<string>();
  /** Keys added while a worker held them: queued again when it is done. */
  private readonly dirty = new Set<string>();
  /** Failures in a row, by key. */
  private readonly failures = new Map<string, number>();
  /** Delayed adds, by key: when and how to cancel. */
  private readonly delayed = new Map<string, { at: number; cancel: () => void }>();
  private readonly wakers: (() => void)[] = [];
  private readonly running: Promise<void>[] = [];
  private closed = false;
  private readonly backoff: BackoffPolicy;
  private readonly scheduler: Scheduler;

  constructor(
    private readonly process: ProcessKey,
    private readonly options: WorkQueueOptions,
  ) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new Error('a work queue needs at least one worker');
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.scheduler = options.scheduler ?? realTimers;
    for (let i = 0; i < options.workers; i++) this.running.push(this.work());
  }

  /** Queues a key now (a no-op if it waits already, or after close). */
  add(key: string): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.waiting.push(key);
    this.depthChanged();
    this.wakers.shift()?.();
  }

  /** Queues a key after `ms` milliseconds; of several delayed adds of one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.scheduler.now() + ms;
    const pending = this.delayed.get(key);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      pending.cancel();
    }
    const cancel = this.scheduler.schedule(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, cancel });
  }

  /** Keys waiting (not those held by a worker or waiting out a delay). */
  depth(): number {
    return this.waiting.length;
  }

  /** Failures in a row of a key (0 after a success). */
  failuresOf(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Stops taking keys, drops the waiting and delayed ones, and resolves when the workers' current keys are done. */
  async close(): Promise<void> {
    if (this.closed) return Promise.all(this.running).then(() => undefined);
    this.closed = true;
    for (const { cancel } of this.delayed.values()) cancel();
    this.delayed.clear();
    this.waiting.length = 0;
    this.queued.clear();
    this.dirty.clear();
    this.depthChanged();
    for (const wake of this.wakers.splice(0)) wake();
    await Promise.all(this.running);
  }

  private depthChanged(): void {
    this.options.hooks?.depthChanged?.(this.waiting.length);
  }

  private async next(): Promise<string | null> {
    for (;;) {
      if (this.closed) return null;
      const key = this.waiting.shift();
      if (key !== undefined) {
        this.queued.delete(key);
        this.depthChanged();
        return key;
      }
      await new Promise<void>((resolve) => this.wakers.push(resolve));
    }
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.next();
      if (key === null) return;
      this.active.add(key);
      const started = this.scheduler.now();
      try {
        const result = await this.process(key);
        const durationMs = this.scheduler.now() - started;
        this.failures.delete(key);
        const requeueAfterMs = result?.requeueAfterMs;
        this.options.hooks?.processed?.(key, { ok: true, durationMs, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) });
        if (requeueAfterMs !== undefined) this.addAfter(key, requeueAfterMs);
      } catch (error) {
        const durationMs = this.scheduler.now() - started;
        const failures = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, failures);
        const retryInMs = backoffDelay(failures, this.backoff, this.options.random);
        this.options.hooks?.processed?.(key, { ok: false, durationMs, error, retryInMs, failures });
        this.addAfter(key, retryInMs);
      } finally {
        this.active.delete(key);
        if (this.dirty.delete(key)) this.add(key);
      }
    }
  }
}
