/**
 * Background threads yield the CPU to the event loop. The SQLite store's full-text
 * indexer thread is busiest right after and during heavy
 * writes, when the event loop is too: with more runnable threads than cores, the
 * kernel then parts each core between them, and a request on the event loop waits out
 * the indexer's time slice. At a lower priority the indexer still gets every core the event
 * loop leaves idle.
 *
 * Linux keeps a nice value per thread, so `setpriority` on the calling thread (pid 0)
 * lowers that thread only. Elsewhere it would lower the whole process, event loop
 * included: there nothing is changed.
 */
import { constants, setPriority } from 'node:os';

/** The nice value of a thread that may fall behind for a while (the full-text indexer). */
export const BACKGROUND_PRIORITY = constants.priority.PRIORITY_LOW;

/** Lowers the calling thread's CPU priority to `priority` (Linux only); true when done. */
export function lowerThreadPriority(priority: number, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'linux') return false;
  try {
    setPriority(priority);
    return true;
  } catch {
    // Lowering is always permitted; should a sandbox refuse it, the thread runs as before.
    return false;
  }
}
