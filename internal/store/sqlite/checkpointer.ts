/**
 * WAL checkpoints off the event loop. A checkpoint copies committed pages from the WAL
 * into the database file (and syncs both): at a million objects it is a third of the
 * cost of a bulk write when the writing connection does it itself, which is SQLite's
 * default (after any commit that leaves more than 1,000 pages in the WAL). Here a worker
 * thread with its own connection checkpoints on the other core, while the writer goes
 * on: pass after pass while the writer adds frames (so that the WAL is rewound in the
 * writer's pauses, see checkpoint-worker.ts), every CHECKPOINT_IDLE_MS otherwise.
 *
 * The writer's own automatic checkpoint stays as a backstop, at WRITER_CHECKPOINT_PAGES:
 * should the worker fall behind or fail, the WAL still never grows past that by more
 * than one transaction (the writer then only copies what the worker has not).
 */
import type { Database } from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/** Between passes while the writer adds frames, and between looks when it does not (checkpoint-worker.ts). */
export const CHECKPOINT_BUSY_MS = 1;
export const CHECKPOINT_IDLE_MS = 50;
/** What a PASSIVE checkpoint reports: frames in the WAL, and how many of them are copied. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * The wait before the worker's next pass: CHECKPOINT_BUSY_MS while the writer is at work
 * (frames not copied yet, or new since the last look, `framesBefore`), else
 * CHECKPOINT_IDLE_MS.
 */
export function nextPassDelay(result: CheckpointResult | undefined, framesBefore: number): number {
  const working = result === undefined || result.checkpointed < result.log || result.log !== framesBefore;
  return working ? CHECKPOINT_BUSY_MS : CHECKPOINT_IDLE_MS;
}

/** 16,384 pages of 4 KiB: 64 MiB of WAL. */
export const WRITER_CHECKPOINT_PAGES = 16_384;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(db: Database, path: string) {
    db.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    this.worker = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
      workerData: { path },
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
