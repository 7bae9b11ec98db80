/**
 * The clock of an `every` instruction: ticks aligned to its period counted from the Unix
 * epoch (an `every 1 min` ticks at each whole minute, on every process alike, so a takeover
 * keeps the rhythm). A tick that comes late, after downtime or a stalled event loop, runs
 * once and the next is the next aligned one: missed ticks are never caught up.
 */
import type { Clock } from '../../service/clock.js';

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The first tick strictly after `nowMs` of a period of `periodMs`. */
export function nextTickMs(nowMs: number, periodMs: number): number {
  return (Math.floor(nowMs / periodMs) + 1) * periodMs;
}

export class EveryClock {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly periodMs: number,
    private readonly onTick: () => void,
  ) {}

  /** Schedules the next aligned tick. */
  start(): void {
    this.stopped = false;
    this.schedule(nextTickMs(this.clock(), this.periodMs));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(dueMs: number): void {
    if (this.stopped) return;
    const delay = Math.min(Math.max(0, dueMs - this.clock()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = this.clock();
      // Woken early (a period longer than a timer can wait, or a clock that moved back): wait on.
      if (now < dueMs) return this.schedule(dueMs);
      this.onTick();
      this.schedule(nextTickMs(now, this.periodMs));
    }, delay);
    this.timer.unref();
  }
}
