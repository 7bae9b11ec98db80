/**
 * The body of the search indexer's worker thread (search-indexer.ts): a read-only
 * connection to the database and the only writing connection to its search file
 * (search-file.ts). It applies the database's queued index work when woken by the store
 * after a write, and every `pollMs` when the database changed (a write by another
 * process), and reports the last entry applied.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { BACKGROUND_PRIORITY, lowerThreadPriority } from '../../runtime/thread-priority.js';
import { prepareSearchFile, SearchFile, searchFilePath } from './search-file.js';

interface Options {
  path: string;
  pollMs: number;
}

export type WorkerReport = { type: 'applied'; seq: number } | { type: 'failed'; message: string };

const { path, pollMs } = workerData as Options;
const port = parentPort;
if (port === null) throw new Error('search-worker runs as a worker thread');
// Indexing yields the CPU to the event loop (runtime/thread-priority.ts).
lowerThreadPriority(BACKGROUND_PRIORITY);

const main = new Database(path, { fileMustExist: true });
main.pragma('busy_timeout = 5000');
main.pragma('query_only = 1');
main.pragma('mmap_size = 1073741824');
const search = new Database(searchFilePath(path));
prepareSearchFile(search);
const file = new SearchFile(main, search);
const dataVersion = main.prepare('PRAGMA data_version').pluck();

let reported = -1;
let failed = false;
const report = (message: WorkerReport): void => port.postMessage(message);

function drain(): void {
  try {
    const applied = file.catchUp();
    failed = false;
    if (applied !== reported) {
      reported = applied;
      report({ type: 'applied', seq: applied });
    }
  } catch (err) {
    // Retried on the next wake or poll (a busy database, a full disk): said once.
    if (!failed) report({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    failed = true;
  }
}

let version = dataVersion.get();
const timer = setInterval(() => {
  const now = dataVersion.get();
  if (now === version && !failed) return;
  version = now;
  drain();
}, pollMs);

port.on('message', (message: unknown) => {
  if (message === 'wake') {
    version = dataVersion.get();
    drain();
    return;
  }
  if (message === 'stop') {
    clearInterval(timer);
    search.close();
    main.close();
    port.close();
  }
});

drain();
