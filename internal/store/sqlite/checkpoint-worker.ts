/**
 * The body of the checkpointer's worker thread (checkpointer.ts): its own connection to
 * the database file, moving committed WAL frames into the file with PASSIVE checkpoints
 * (which never block the writer or readers), until told to stop.
 *
 * SQLite rewinds the WAL (writes it again from its start) only when a write transaction
 * begins with every frame already copied. A pass takes milliseconds (it syncs the file),
 * so under a steady writer a pass every 100 ms never ended in one of the writer's pauses:
 * the WAL grew to the writer's own backstop (checkpointer.ts), and the writer then
 * checkpointed after its commits, on the event loop (stalls of 50–200 ms at 10,000
 * updates/s, measured). So while frames come in, passes follow each other at once
 * (checkpointer.ts nextPassDelay): one soon ends in a pause, and the next transaction
 * rewinds the WAL. When nothing new has come, the next look is after CHECKPOINT_IDLE_MS.
 *
 * The thread keeps the normal CPU priority, unlike the search indexer
 * (runtime/thread-priority.ts): a checkpointer that falls behind leaves the checkpoints
 * to the writer, on the event loop. Below normal (nice 10) it fell behind under batched
 * ingest on two busy cores: 10–15% fewer updates/s through one connection, measured
 * (docs/performance.md, Tail latency).
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { CHECKPOINT_IDLE_MS, nextPassDelay, type CheckpointResult } from './checkpointer.js';

const { path } = workerData as { path: string };
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const passive = db.prepare<[], CheckpointResult>('PRAGMA wal_checkpoint(PASSIVE)');

let frames = -1;
let timer: NodeJS.Timeout | null = null;
function pass(): void {
  const result = passive.get();
  const delay = nextPassDelay(result, frames);
  frames = result?.log ?? -1;
  timer = setTimeout(pass, delay);
}
timer = setTimeout(pass, CHECKPOINT_IDLE_MS);

parentPort?.once('message', () => {
  if (timer !== null) clearTimeout(timer);
  db.close();
  parentPort?.close();
});
