/**
 * Objects in SQLite: the ObjectStore port, made of parts named for what they do:
 * - object-writes.ts, the write path (batches of patches, the bulk-ingest hot path, and
 *   deletes), run in group commits (group-commit.ts: the writes of one turn of the event
 *   loop share a transaction);
 * - object-reads.ts, reads of one object, lists (filters and shapes pushed down to the
 *   indexes) and full-text search;
 * - object-history.ts, history pages and retention;
 * - the in-memory state they share: the spatial index (location-index.ts), recently
 *   written objects (recent-objects.ts) and the realm keys, kept exact when another
 *   connection writes the file (syncHeld: `PRAGMA data_version`).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { ObjectChange, ObjectPatch, TrackedObject } from '../../domain/types.js';
import type { HistoryEntry, HistoryQuery, ObjectListQuery, ObjectStore, Page, SearchHit, SearchQuery } from '../port.js';
import { FilterIndexes } from './filter-indexes.js';
import { GroupCommit } from './group-commit.js';
import { HistoryChunks } from './history-chunks.js';
import { CHUNK_LIMITS, PAST_BUFFER_FIXES, type ChunkLimits } from './history-rows.js';
import { LocationIndex } from './location-index.js';
import { ObjectHistory } from './object-history.js';
import { ObjectReads, spatialCandidateCap, type PlannedList } from './object-reads.js';
import { ObjectWrites, type QueuedUpsert, type UpsertWork } from './object-writes.js';
import { RecentObjects } from './recent-objects.js';
import { MAX_BACKLOG_ROWIDS, type SearchIndexer } from './search-indexer.js';
import { isWriteSpecific, settle, translateSqliteError } from './sqlite-errors.js';
import type { StoreOwnershipMode } from './store-owner.js';

export { pageStart, toPage } from '../pages.js';
export { spatialCandidateCap, type ListPlan } from './object-reads.js';
export { sameSnapshot } from './object-writes.js';

export interface ObjectStoreOptions {
  /**
   * The spatial plan serves a shape while it holds fewer hits than this (default
   * spatialCandidateCap). Tests set it to force either plan.
   */
  spatialCap?: (limit: number) => number;
  /** Hears of a failure of the full-text indexer's thread (it is retried; searches wait or fail meanwhile). */
  onIndexerError?: (err: Error) => void;
  /** Past fixes an object row holds before they move to `history` (default PAST_BUFFER_FIXES; tests lower it). */
  pastBuffer?: number;
  /** How `history` cuts past fixes into chunks (default CHUNK_LIMITS; tests lower them). */
  chunks?: ChunkLimits;
  /**
   * How far behind (object rowids) the full-text indexer must be for a write to send it
   * the text of new objects rather than their rowids (default TEXT_FOR_NEW_BEHIND; tests
   * set 0 or Infinity to take one way).
   */
  textForNewBehind?: number;
  /** Queued object rowids beyond which writes wait for the full-text indexer (default MAX_BACKLOG_ROWIDS; tests lower it). */
  indexerBacklog?: number;
  /**
   * `shared`: other server processes write the file too (store-owner.ts; a bus between
   * processes carries the events). Writes then check that a realm exists before they
   * give it a key, and close checkpoints without waiting for the others. Default
   * `exclusive`.
   */
  ownership?: StoreOwnershipMode;
}

/**
 * The indexer backlog (object rowids) from which writes send it the text of new objects.
 * A long import is bound by the indexer (FTS5 writes): once it is this far behind, the
 * writer has time to spare and the indexer none. A quarter of MAX_BACKLOG_ROWIDS, where
 * writes start to wait.
 */
const TEXT_FOR_NEW_BEHIND = MAX_BACKLOG_ROWIDS / 4;

/**
 * A group commit takes no more writes once it holds this many patches: larger groups
 * gain little (at 4,000 location updates a commit, the WAL takes about half the bytes per
 * update of 1,000) and make the first write's caller wait for all of them.
 */
const GROUP_PATCHES = 10_000;

export class SqliteObjectStore implements ObjectStore {
  /** The spatial index (in memory, per realm), kept current after each committed write. */
  readonly locations: LocationIndex;
  /** Recently updated objects, so that their next write reads no row. */
  readonly recent = new RecentObjects();
  /** The realms' filter indexes (filter-indexes.ts), as the schema holds them. */
  private readonly filterIndexes: FilterIndexes;
  private readonly reads: ObjectReads;
  private readonly writer: ObjectWrites;
  private readonly historyOf: ObjectHistory;
  /** Writes of one turn of the event loop share a transaction (group-commit.ts). */
  private readonly writes: GroupCommit<QueuedUpsert, UpsertWork, ObjectChange[]>;
  private readonly selectVersion: Statement<[], number>;
  private version: number;
  /** The last write that waited for the indexer's room (upsertMany): later ones wait behind it. */
  private roomTurn: Promise<void> | null = null;

  constructor(
    db: Database,
    private readonly indexer: SearchIndexer,
    options: ObjectStoreOptions = {},
  ) {
    this.filterIndexes = new FilterIndexes(db);
    this.locations = new LocationIndex(db);
    this.selectVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.selectVersion.get() ?? 0;
    this.reads = new ObjectReads(db, indexer, this.locations, options.spatialCap ?? spatialCandidateCap, this.filterIndexes);
    // A later fix of an equal time replaces the stored one (history-chunks.ts).
    const chunks = new HistoryChunks(db, options.chunks ?? CHUNK_LIMITS);
    this.historyOf = new ObjectHistory(db, chunks);
    this.writer = new ObjectWrites(db, indexer, chunks, this.recent, {
      bufferFixes: Math.max(1, Math.floor(options.pastBuffer ?? PAST_BUFFER_FIXES)),
      textForNewBehind: options.textForNewBehind ?? TEXT_FOR_NEW_BEHIND,
      shared: options.ownership === 'shared',
    });
    this.writes = new GroupCommit(db, {
      write: (write) => this.writer.write(write),
      // Committed: the spatial index and the realm key follow, the full-text indexer is told.
      committed: ({ realm, key, changes, queued, moves }) => {
        this.writer.keys.set(realm, key);
        this.locations.apply(realm, moves);
        if (queued !== null) this.indexer.queued(queued[0], queued[1]);
        return changes;
      },
      begin: () => this.syncHeld(),
      // The recent objects may hold what the group wrote (object-writes.ts).
      rolledBack: () => this.recent.clear(),
      translate: translateSqliteError,
      retryAlone: isWriteSpecific,
      weight: (write) => write.patches.length,
      maxWeight: GROUP_PATCHES,
    });
  }

  upsertMany(realm: string, patches: ObjectPatch[], now: string): Promise<ObjectChange[]> {
    const write: QueuedUpsert = { realm, patches, now };
    // Queued at once, to be committed with the other writes of this turn of the event
    // loop (pipelined v1 writes share one commit), in the order they were asked for. The
    // order of writes to one object is the service's (service/write-order.ts WriteOrder):
    // this store is correct per call.
    if (this.roomTurn === null && this.indexer.hasRoom) return this.writes.submit(write);
    // While the full-text indexer is far behind, a write waits (searches wait for it), and
    // the writes asked for after it wait behind it: they still run in order.
    const turn = (this.roomTurn ?? Promise.resolve()).then(() => this.indexer.room());
    this.roomTurn = turn;
    const done = (): void => {
      if (this.roomTurn === turn) this.roomTurn = null;
    };
    turn.then(done, done);
    return turn.then(() => this.writes.submit(write));
  }

  /** Runs the writes queued for the next group commit now: before an operation that must follow them. */
  flushWrites(): void {
    this.writes.flush();
  }

  get(realm: string, id: string): Promise<TrackedObject | null> {
    return settle(() => this.reads.get(realm, id));
  }

  list(realm: string, query: ObjectListQuery): Promise<Page<TrackedObject>> {
    return settle(() => this.reads.list(realm, query));
  }

  /** The SQL (with its parameters) and plan of a list query; exposed for EXPLAIN QUERY PLAN tests. */
  listPlan(realm: string, query: ObjectListQuery): PlannedList | null {
    return this.reads.plan(realm, query);
  }

  delete(realm: string, id: string, now: string): Promise<ObjectChange | null> {
    this.flushWrites();
    return settle(() => {
      const deleted = this.writer.delete(realm, id, now, () => this.syncHeld());
      if (deleted === null) return null;
      this.locations.apply(realm, [[deleted.rowid, null, null]]);
      this.recent.delete(realm, id);
      this.indexer.queued(deleted.queued, 1);
      return deleted.change;
    });
  }

  /** A realm was deleted: its in-memory state goes, and a later write for it checks that it exists again. */
  forgetRealm(realm: string): void {
    this.writer.forgetRealm(realm);
    this.locations.forget(realm);
    this.recent.forget(realm);
  }

  /**
   * At the start of a write transaction (which holds the write lock: nothing else commits
   * until it ends): drops the recent objects and realm keys, and the spatial index's
   * grids, when another connection has committed to the file (one read of `PRAGMA
   * data_version`). Read before the lock instead, another process's commit could fall
   * between the read and the write, which would then start from state it had replaced.
   */
  private syncHeld(): void {
    const version = this.selectVersion.get() ?? 0;
    this.locations.noteVersion(version);
    if (version === this.version) return;
    this.version = version;
    this.recent.clear();
    this.writer.keys.clear();
  }

  /** Resolves once the full-text index holds every write made so far (searches wait for it themselves). */
  indexed(): Promise<void> {
    return this.indexer.caughtUp();
  }

  async search(realm: string, query: SearchQuery): Promise<SearchHit[]> {
    if (!this.reads.searchable(query)) return [];
    // Read-your-writes: every write queued before this search is in the index.
    await this.indexer.caughtUp();
    return settle(() => this.reads.search(realm, query));
  }

  history(realm: string, id: string, query: HistoryQuery): Promise<Page<HistoryEntry>> {
    return settle(() => this.historyOf.read(realm, id, query));
  }

  async pruneHistory(realm: string, before: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    let deleted = 0;
    let after: string | null = '';
    while (after !== null && options.signal?.aborted !== true) {
      const from: string = after;
      this.flushWrites();
      const chunk = await settle(() => {
        const pruned = this.historyOf.pruneChunk(realm, from, before);
        // The rows changed under the recent objects (past fixes moved, current fixes pruned).
        this.recent.forget(realm);
        return pruned;
      });
      deleted += chunk.deleted;
      after = chunk.last;
      // Let requests in between: a large realm is pruned in many short transactions.
      if (after !== null) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return deleted;
  }
}
