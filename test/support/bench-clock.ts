/** The clock of the benches that time messages across processes, and the fixed pace they write at. */
import { performance } from 'node:perf_hooks';

/** Now, in ms since the epoch with sub-millisecond precision (the clock of V1Client's arrival times). */
export const now = (): number => performance.timeOrigin + performance.now();

/**
 * Runs `step` once every `interval` ms from `started` (at once when behind) until `clock()`
 * reaches `until`; each step gets its number and the time it runs at, and is awaited when it
 * returns a promise.
 */
export async function paced(
  clock: () => number,
  started: number,
  interval: number,
  until: number,
  step: (k: number, at: number) => void | Promise<void>,
): Promise<void> {
  for (let k = 0; clock() < until; k++) {
    const wait = started + k * interval - clock();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const pending = step(k, clock());
    if (pending !== undefined) await pending;
  }
}
