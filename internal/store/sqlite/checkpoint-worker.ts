/**
 * The body of the checkpointer's worker thread (checkpointer.ts): its own connection to
 * the database file, moving committed WAL frames into the file with a PASSIVE checkpoint
 * (which never blocks the writer or readers) every `intervalMs`, until told to stop.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

interface Options {
  path: string;
  intervalMs: number;
}

const { path, intervalMs } = workerData as Options;
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

const timer = setInterval(() => {
  checkpoint.run();
}, intervalMs);

parentPort?.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
