/**
 * The last resort of a shutdown: a thread that kills the process (SIGKILL, exit status
 * 137) when it is still alive some time after the shutdown deadline. The deadline timer of
 * signal-shutdown.ts runs on the main event loop and cannot fire while that loop is held by
 * synchronous work (a long query, a WAL checkpoint); this thread can.
 */
import { Worker } from 'node:worker_threads';

export interface Watchdog {
  disarm(): void;
}

/** Starts the watchdog; `line` is the JSON log line it writes before the kill. */
export function armWatchdog(afterMs: number, line: string): Watchdog {
  // Not the process's flags: some (--input-type) would stop the thread from starting at all.
  const worker = new Worker(new URL('./watchdog-thread.js', import.meta.url), { workerData: { afterMs, line }, execArgv: [] });
  // It must never be what keeps the process alive, nor fail it.
  worker.unref();
  worker.on('error', () => undefined);
  return { disarm: () => void worker.terminate() };
}
