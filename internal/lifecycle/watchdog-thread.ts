/**
 * The body of the shutdown watchdog's thread (shutdown-watchdog.ts). It has an event loop
 * of its own, so its timer fires even while the main thread is stuck in synchronous work;
 * then it writes its log line straight to stdout and kills the process.
 */
import { writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';

const { afterMs, line } = workerData as { afterMs: number; line: string };
setTimeout(() => {
  writeSync(1, line + '\n');
  process.kill(process.pid, 'SIGKILL');
}, afterMs);
