/**
 * The sendToUrl deliveries of this process: a bounded queue per realm, worked off a few at a
 * time per realm, each delivery vetted (url-guard.ts), POSTed (http-post.ts) and retried as
 * retry-policy.ts says. Writes never wait for it: `enqueue` takes a delivery or drops it at
 * once (a full queue), and never throws.
 *
 * Every delivery ends in one outcome, handed to its `done` callback (the runtime removes the
 * outbox row then) and counted: `success`, `failed` (gave up, or the receiver's final no),
 * `refused` (the guard), `dropped` (the realm's queue was full). All but `success` are also
 * instruction log events. Deliveries cut short by `stopRealm` or `close` get no outcome: their
 * outbox rows stay, and the next holder of the realm sends them again, with the same key.
 */
import type { Logger } from 'pino';
import { newAgents, postJson, headerValue, type Agents } from './http-post.js';
import type { InstructionLog } from './instruction-log.js';
import { backoffMs, verdictOf, type Backoff } from './retry-policy.js';
import { shownUrl, type UrlGuard } from './url-guard.js';

export interface Delivery {
  realm: string;
  /** The instruction whose action this is (header X-Locus-Instruction). */
  instruction: string;
  /** The outbox key (PendingAction.key): the Idempotency-Key header, the same at every attempt and every holder. */
  key: string;
  url: string;
  /** The JSON text to POST (hivekit-body.ts sendToUrlBody). */
  body: string;
}

export type DeliveryOutcome = 'success' | 'failed' | 'refused' | 'dropped';

export interface DeliveryResult {
  outcome: DeliveryOutcome;
  /** POSTs made (0: refused or dropped before any). */
  attempts: number;
  /** Why it did not succeed. */
  reason: string | null;
}

/** Told of every outcome (observability/metrics/delivery-metrics.ts counts them). */
export interface DeliveryMetrics {
  /** `seconds`: from enqueue to the outcome, for deliveries that were sent (success, failed). */
  settled(outcome: DeliveryOutcome, seconds: number | null): void;
}

export interface DeliveryQueueOptions {
  guard: UrlGuard;
  log: Pick<InstructionLog, 'append'>;
  /** Deliveries waiting or under way per realm (LOCUS_SEND_TO_URL_QUEUE); more are dropped. */
  capacity: number;
  /** Deliveries under way at once per realm (LOCUS_SEND_TO_URL_CONCURRENCY). */
  concurrency: number;
  /** Per attempt (LOCUS_SEND_TO_URL_TIMEOUT_MS). */
  timeoutMs: number;
  /** Attempts after the first (LOCUS_SEND_TO_URL_RETRIES). */
  retries: number;
  backoff?: Backoff;
  metrics?: DeliveryMetrics;
  /** Where a `done` callback's failure is reported. */
  logger?: Logger;
}

export const defaultBackoff: Backoff = { baseMs: 500, maxMs: 30_000 };

type Done = (result: DeliveryResult) => void | Promise<void>;

interface Job {
  delivery: Delivery;
  done: Done | null;
  enqueuedAt: number;
  abort: AbortController;
}

interface Lane {
  waiting: Job[];
  running: Set<Job>;
}

export class DeliveryQueue {
  private readonly lanes = new Map<string, Lane>();
  private readonly agents: Agents = newAgents();
  private readonly backoff: Backoff;
  private readonly underway = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: DeliveryQueueOptions) {
    this.backoff = options.backoff ?? defaultBackoff;
  }

  /**
   * Takes a delivery; false when it does not: the realm's queue is full (`done` hears `dropped`)
   * or the queue is closed (no outcome: the outbox row stays). `done` is never called during
   * this call.
   */
  enqueue(delivery: Delivery, done?: Done): boolean {
    if (this.closed) return false;
    const job: Job = { delivery, done: done ?? null, enqueuedAt: performance.now(), abort: new AbortController() };
    let lane = this.lanes.get(delivery.realm);
    if (lane === undefined) {
      lane = { waiting: [], running: new Set() };
      this.lanes.set(delivery.realm, lane);
    }
    if (lane.waiting.length + lane.running.size >= this.options.capacity) {
      const reason = `the realm's delivery queue is full (${this.options.capacity} deliveries waiting or under way)`;
      queueMicrotask(() => this.settle(job, { outcome: 'dropped', attempts: 0, reason }));
      return false;
    }
    lane.waiting.push(job);
    this.pump(delivery.realm, lane);
    return true;
  }

  /** Deliveries waiting or under way: of one realm, or of all. */
  depth(realm?: string): number {
    if (realm !== undefined) {
      const lane = this.lanes.get(realm);
      return lane === undefined ? 0 : lane.waiting.length + lane.running.size;
    }
    let total = 0;
    for (const lane of this.lanes.values()) total += lane.waiting.length + lane.running.size;
    return total;
  }

  /** Forgets the realm's deliveries (this process no longer holds the realm): no outcomes. */
  stopRealm(realm: string): void {
    const lane = this.lanes.get(realm);
    if (lane === undefined) return;
    this.lanes.delete(realm);
    lane.waiting.length = 0;
    for (const job of lane.running) job.abort.abort();
  }

  /** Takes nothing more, cuts every delivery short (no outcomes) and waits for them to stop. */
  async close(): Promise<void> {
    this.closed = true;
    for (const realm of [...this.lanes.keys()]) this.stopRealm(realm);
    await Promise.allSettled([...this.underway]);
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private pump(realm: string, lane: Lane): void {
    while (lane.running.size < this.options.concurrency && lane.waiting.length > 0) {
      const job = lane.waiting.shift() as Job;
      lane.running.add(job);
      const run = this.run(job).then(
        (result) => {
          lane.running.delete(job);
          if (this.lanes.get(realm) === lane) {
            if (lane.running.size === 0 && lane.waiting.length === 0) this.lanes.delete(realm);
            else this.pump(realm, lane);
          }
          if (result !== null && !job.abort.signal.aborted) this.settle(job, result);
        },
        (err: unknown) => {
          lane.running.delete(job);
          this.options.logger?.error({ err, realm }, 'sendToUrl delivery failed unexpectedly');
        },
      );
      const tracked = run.finally(() => this.underway.delete(tracked));
      this.underway.add(tracked);
    }
  }

  /** The delivery's outcome, or null when it was cut short. */
  private async run(job: Job): Promise<DeliveryResult | null> {
    const { delivery, abort } = job;
    const headers = { 'X-Locus-Instruction': headerValue(delivery.instruction), 'Idempotency-Key': headerValue(delivery.key) };
    let attempts = 0;
    // The receiver's Retry-After, when its last answer had one.
    let notBeforeMs = 0;
    for (let retry = 0; ; retry++) {
      if (retry > 0 && !(await this.wait(backoffMs(retry, this.backoff, notBeforeMs), abort.signal))) return null;
      notBeforeMs = 0;
      const vetting = await this.options.guard.vet(delivery.url);
      if (abort.signal.aborted) return null;
      let reason: string;
      if (vetting.kind === 'refused') return { outcome: 'refused', attempts, reason: vetting.reason };
      if (vetting.kind === 'unresolved') {
        reason = vetting.reason;
      } else {
        attempts++;
        const result = await postJson(vetting.target, delivery.body, headers, this.options.timeoutMs, this.agents, abort.signal);
        if (abort.signal.aborted) return null;
        const verdict = verdictOf(result);
        if (verdict.kind === 'delivered') return { outcome: 'success', attempts, reason: null };
        if (verdict.kind === 'failed') return { outcome: 'failed', attempts, reason: verdict.reason };
        reason = verdict.reason;
        notBeforeMs = verdict.notBeforeMs;
      }
      if (retry >= this.options.retries) return { outcome: 'failed', attempts, reason: `${reason} (gave up after ${retry + 1} tries)` };
    }
  }

  /** Waits `ms`; false when cut short. */
  private wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Counts, logs and reports an outcome; runs outside any caller, so nothing may escape it. */
  private settle(job: Job, result: DeliveryResult): void {
    const { delivery } = job;
    try {
      const sent = result.outcome === 'success' || result.outcome === 'failed';
      this.options.metrics?.settled(result.outcome, sent ? (performance.now() - job.enqueuedAt) / 1000 : null);
      if (result.outcome !== 'success') {
        this.options.log.append(delivery.realm, {
          id: delivery.instruction,
          lvl: result.outcome === 'dropped' ? 'warn' : 'error',
          msg: `sendToUrl ${shownUrl(delivery.url)} ${result.outcome}: ${result.reason ?? ''}`,
        });
      }
      const returned = job.done?.(result);
      if (returned instanceof Promise) returned.catch((err: unknown) => this.reportFailure(err, delivery));
    } catch (err) {
      this.reportFailure(err, delivery);
    }
  }

  private reportFailure(err: unknown, delivery: Delivery): void {
    this.options.logger?.error({ err, realm: delivery.realm, instruction: delivery.instruction }, 'sendToUrl: reporting an outcome failed');
  }
}
