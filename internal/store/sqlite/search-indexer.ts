/**
 * The full-text index kept current off the event loop. Writes queue what to index in
 * their own transaction (schema.ts `search_queue`); a worker thread (search-worker.ts)
 * applies the queue to the search file (search-file.ts) on the other core, while the
 * writer goes on. Writing the FTS5 entries of a new object took about half of its write
 * cost when the writer did it.
 *
 * Searches stay read-your-writes: a search first waits until the worker has applied
 * every entry queued when it was asked (caughtUp), then reads the search file, attached
 * to the store's connection, joined with the objects. Writes wait only when the worker
 * is more than MAX_BACKLOG_ROWIDS behind (room), so that a search never waits long.
 *
 * The worker tells which entry it has applied; applied entries are then dropped from the
 * queue. Should the worker fail or exit, searches fail with `unavailable` until it runs
 * again (restarted after RESTART_MS).
 */
import type { Database, Statement } from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import { LocusError } from '../../errors.js';
import { configureCache } from './schema.js';
import { searchFilePath } from './search-file.js';
import type { WorkerReport } from './search-worker.js';

/** How often the worker looks for writes by other processes (the admin CLI). */
export const POLL_MS = 250;
/** Queued object rowids beyond which writes wait for the worker. */
export const MAX_BACKLOG_ROWIDS = 200_000;
/** How long a search waits for the index before `unavailable`. */
const CATCH_UP_TIMEOUT_MS = 60_000;
const RESTART_MS = 1_000;
/**
 * How long stop waits for the worker to finish what it is doing (a rebuild takes about 20 s
 * per million objects) before ending it: its transaction is then rolled back, and the
 * work is done again at the next start.
 */
const STOP_GRACE_MS = 3_000;

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class SearchIndexer {
  /** The last entry the worker applied; -1 until it first said (its file may not exist before). */
  private applied = -1;
  private waiters: Waiter[] = [];
  /** Entries this process queued and the worker has not applied: [seq, rowids]. */
  private backlog: [number, number][] = [];
  private backlogRowids = 0;
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private attached = false;
  private readonly lastSeq: Statement<[], number | null>;
  private readonly dropApplied: Statement<[number]>;
  private readonly enqueue: Statement<[string, string]>;

  /** `onError` hears of each failure of the worker (an exception, a failed apply); `maxBacklog`: see room(). */
  constructor(
    private readonly db: Database,
    private readonly path: string,
    private readonly onError: (err: Error) => void = () => undefined,
    private readonly maxBacklog = MAX_BACKLOG_ROWIDS,
  ) {
    this.lastSeq = db.prepare<[], number | null>('SELECT max(seq) FROM search_queue').pluck();
    this.dropApplied = db.prepare('DELETE FROM search_queue WHERE seq <= ?');
    this.enqueue = db.prepare('INSERT INTO search_queue (op, body) VALUES (?, ?)');
    this.start();
  }

  /**
   * Queues index work inside the caller's write transaction: `put` with a body made by
   * search-file.ts putBody (objects whose entries are written), `rows` for a range of
   * rowids whose entries are written from the rows (new objects), `del` for rowids whose
   * entries go. Returns the entry's seq.
   */
  queue(op: 'put', body: string): number;
  queue(op: 'rows', range: readonly [first: number, last: number]): number;
  queue(op: 'del', rowids: readonly number[]): number;
  queue(op: 'put' | 'rows' | 'del', what: string | readonly number[]): number {
    return Number(this.enqueue.run(op, typeof what === 'string' ? what : JSON.stringify(what)).lastInsertRowid);
  }

  /** After the transaction that queued entry `seq` (of `rowids` objects) committed. */
  queued(seq: number, rowids: number): void {
    this.backlog.push([seq, rowids]);
    this.backlogRowids += rowids;
    this.worker?.postMessage('wake');
  }

  /** Object rowids this process queued that the worker has not applied yet. */
  get behind(): number {
    return this.backlogRowids;
  }

  /** Whether the backlog is small enough for another write now. */
  get hasRoom(): boolean {
    return this.backlogRowids <= this.maxBacklog;
  }

  /** Resolves once the backlog is small enough for another write. */
  room(): Promise<void> {
    if (this.hasRoom) return Promise.resolve();
    const last = this.backlog[this.backlog.length - 1];
    return last === undefined ? Promise.resolve() : this.waitFor(last[0]);
  }

  /** Resolves once every entry queued so far (by any process) is applied. */
  caughtUp(): Promise<void> {
    return this.waitFor(this.lastSeq.get() ?? 0);
  }

  /** Attaches the search file to the store's connection as `search` (once, after the worker made it). */
  attach(): void {
    if (this.attached) return;
    this.db.prepare('ATTACH DATABASE ? AS search').run(searchFilePath(this.path));
    configureCache(this.db, 'search');
    this.attached = true;
  }

  /** Stops the worker; waits until it has closed its connections. */
  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (worker !== null) {
      worker.ref();
      worker.postMessage('stop');
      const grace = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
      await this.exited;
      clearTimeout(grace);
    }
    this.fail(new LocusError('unavailable', 'store is closed'));
  }

  private waitFor(seq: number): Promise<void> {
    if (this.applied >= seq) return Promise.resolve();
    if (this.stopping) return Promise.reject(new LocusError('unavailable', 'store is closed'));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        seq,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new LocusError('unavailable', 'the search index is behind; try again later'));
        }, CATCH_UP_TIMEOUT_MS),
      };
      this.waiters.push(waiter);
      this.worker?.postMessage('wake');
    });
  }

  private start(): void {
    const worker = new Worker(new URL('./search-worker.js', import.meta.url), { workerData: { path: this.path, pollMs: POLL_MS } });
    this.worker = worker;
    worker.on('message', (report: WorkerReport) => {
      if (report.type === 'applied') this.advance(report.seq);
      else this.onError(new Error(`search indexer: ${report.message}`));
    });
    // An error ends the thread: the exit handler below restarts it.
    worker.on('error', (err) => this.onError(err));
    this.exited = new Promise((resolve) => {
      worker.once('exit', () => {
        this.worker = null;
        resolve();
        if (this.stopping) return;
        this.fail(new LocusError('unavailable', 'the search index is unavailable'));
        setTimeout(() => {
          if (!this.stopping) this.start();
        }, RESTART_MS).unref();
      });
    });
    // Waiting searches hold the process; an idle worker does not.
    worker.unref();
  }

  private advance(seq: number): void {
    if (seq <= this.applied) return;
    this.applied = seq;
    while (this.backlog.length > 0 && (this.backlog[0]?.[0] ?? Infinity) <= seq) {
      this.backlogRowids -= this.backlog.shift()?.[1] ?? 0;
    }
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= seq) {
        clearTimeout(waiter.timer);
        waiter.resolve();
      } else still.push(waiter);
    }
    this.waiters = still;
    // Applied entries are no longer needed (the search file's state holds the count). A
    // failure (the database busy) leaves them for the next time.
    if (!this.db.open || this.db.inTransaction) return;
    try {
      this.dropApplied.run(seq);
    } catch {
      // dropped with a later entry
    }
  }

  private fail(err: Error): void {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
    }
    this.waiters = [];
  }
}
