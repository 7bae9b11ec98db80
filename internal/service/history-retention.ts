/**
 * History retention: deletes location fixes older than each realm's
 * `historyRetentionDays` (0 keeps everything). server.ts starts it with the server: it
 * prunes every realm at once, then every hour; close() stops it (an ongoing pass stops
 * between two store transactions).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/port.js';
import { isoTime, type Clock } from './clock.js';

const DAY_MS = 86_400_000;
export const retentionIntervalMs = 3_600_000;

/** Repeats `run` every `ms`; returns a cancel function. Injected by tests. */
export type Scheduler = (run: () => void, ms: number) => () => void;

const intervalScheduler: Scheduler = (run, ms) => {
  const timer = setInterval(run, ms);
  timer.unref();
  return () => clearInterval(timer);
};

export interface RetentionOptions {
  intervalMs?: number;
  scheduler?: Scheduler;
  logger?: Logger;
}

export interface RetentionPass {
  /** Fixes deleted per realm (realms that keep everything are left out). */
  deleted: Record<string, number>;
}

export class HistoryRetention {
  private cancel: (() => void) | null = null;
  private running: Promise<RetentionPass> | null = null;
  private abort = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly options: RetentionOptions = {},
  ) {}

  /** Starts the first pass now (in the background) and schedules the next ones. */
  start(): void {
    if (this.cancel !== null) return;
    this.abort = new AbortController();
    const tick = (): void => {
      // A pass still running when the next is due is not doubled.
      if (this.running === null) void this.runOnce().catch(() => undefined);
    };
    this.cancel = (this.options.scheduler ?? intervalScheduler)(tick, this.options.intervalMs ?? retentionIntervalMs);
    tick();
  }

  /** One pass over every realm; resolves with what it deleted. Concurrent calls share one pass. */
  runOnce(): Promise<RetentionPass> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Stops the schedule and waits for an ongoing pass to stop. */
  async stop(): Promise<void> {
    this.cancel?.();
    this.cancel = null;
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<RetentionPass> {
    const deleted: Record<string, number> = {};
    const signal = this.abort.signal;
    try {
      for (const realm of await this.store.realms.list()) {
        if (signal.aborted) break;
        const days = realm.settings.historyRetentionDays;
        if (days <= 0) continue;
        const before = isoTime(this.clock() - days * DAY_MS);
        deleted[realm.id] = await this.store.objects.pruneHistory(realm.id, before, { signal });
      }
    } catch (err) {
      this.options.logger?.error({ err }, 'history retention pass failed');
      throw err;
    }
    const total = Object.values(deleted).reduce((a, b) => a + b, 0);
    if (total > 0) this.options.logger?.info({ deleted: total }, 'history retention deleted old fixes');
    return { deleted };
  }
}
