/**
 * WAL checkpoints off the event loop. A checkpoint copies committed pages from the WAL
 * into the database file (and syncs both): at a million objects it is a third of the
 * cost of a bulk write when the writing connection does it itself, which is SQLite's
 * default (after any commit that leaves more than 1,000 pages in the WAL). Here a worker
 * thread with its own connection checkpoints every CHECKPOINT_INTERVAL_MS, on the other
 * core, while the writer goes on.
 *
 * The writer's own automatic checkpoint stays as a backstop, at WRITER_CHECKPOINT_PAGES:
 * should the worker fall behind or fail, the WAL still never grows past that by more
 * than one transaction (the writer then only copies what the worker has not).
 */
import type { Database } from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

export const CHECKPOINT_INTERVAL_MS = 100;
/** 16,384 pages of 4 KiB: 64 MiB of WAL. */
export const WRITER_CHECKPOINT_PAGES = 16_384;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(db: Database, path: string) {
    db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    this.worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path, intervalMs: CHECKPOINT_INTERVAL_MS },
    });
    // A failed worker only leaves the checkpoints to the writer's backstop.
    this.worker.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // The thread does not keep the process alive.
    this.worker.unref();
  }

  /** Stops the worker and waits until its connection is closed. */
  async stop(): Promise<void> {
    this.worker.ref(); // its exit is now awaited
    this.worker.postMessage('stop');
    await this.exited;
  }
}
