/**
 * The search index file: the FTS5 table `object_fts` in a SQLite file of its own next to
 * the database (`<database>-search`), written by one connection (the indexer's worker
 * thread, search-worker.ts) so that keeping it current runs on another core than the
 * writes it follows.
 *
 * The database says what to index in its table `search_queue` (schema.ts), written in
 * the same transaction as the objects it names:
 * - `put`: objects whose search text may have changed (a new label or data), as a JSON
 *   array of `[rowid, realm key, id, label, data]` with the state the transaction wrote.
 *   The indexer (re)writes their entries from that.
 * - `rows`: new objects, as the range `[first, last]` of their rowids (one transaction's
 *   inserts take rowids that follow each other), while the indexer is not far behind
 *   (past that, writes send new objects as `put`: object-store.ts TEXT_FOR_NEW_BEHIND).
 *   The indexer reads the rows of the range in its snapshot, the same one it reads the
 *   queue in: rows written or deleted by later
 *   entries of that snapshot are then already as those entries leave them, which applying
 *   them repeats (a rowid reused by a later insert is read as the new object, deleted and
 *   written again), and a row gone is skipped. The writer builds no text for a new object:
 *   a bulk import of 10,000 objects spent about 8% of its time building, joining and
 *   storing their JSON (1.2 MB written to the queue, and to the WAL, per batch). The
 *   indexer's thread reads the rows instead: in a busy server the writer's thread is the
 *   scarcer one (a long import is bound by the indexer either way: docs/architecture.md).
 * - `del`: a JSON array of rowids whose entries go (a deleted object, by trigger; every
 *   object of a deleted realm, in one entry).
 * Entries are numbered (`seq`, AUTOINCREMENT: never reused). `search_state.applied` in
 * the search file is the last entry applied, updated in the transaction that applies it,
 * so each entry is applied exactly once and in order, whatever crashes in between: once
 * the index has applied entry n it holds exactly the search text every object had when
 * entry n was written (a later change of an object queues a later entry).
 *
 * The file is derived data: `search_state.source` names the database it indexes (the
 * random id in the database's `search_source`). A missing file, or one made for another
 * database (a restored backup, a copied file), is rebuilt from the objects.
 *
 * Words are what search-index.ts makes of an object (the one tokenizer), each prefixed
 * by the realm's key, so a prefix query only reaches its realm's terms.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Data } from '../../domain/types.js';
import { searchColumns } from './search-index.js';
import { BUSY_TIMEOUT_MS, enableWal, SEARCH_WRITER_CACHE_KIB } from './schema.js';

/** The search file's path for the database at `path`. */
export function searchFilePath(path: string): string {
  return `${path}-search`;
}

/** Rowids one apply transaction handles at most (more entries wait for the next one). */
const APPLY_ROWIDS = 50_000;
/** Objects read per statement while rebuilding. */
const REBUILD_CHUNK = 10_000;
/**
 * Relative cost of deleting one entry versus writing one (measured, rounded): a `del` of
 * more than this share of the index is done by emptying it and writing back the rest.
 */
const DELETE_VS_INSERT = 0.6;
/**
 * FTS5's `hashsize`: the pending terms a transaction of the indexer gathers in memory
 * before it writes them out as a segment (FTS5's default is 1 MiB). An apply transaction
 * of APPLY_ROWIDS new objects holds several MiB of terms: with the default it wrote
 * several small segments, which FTS5 then merged again.
 */
export const SEARCH_HASH_SIZE = 16 * 1024 * 1024;

/** Creates the search file's schema if missing; sets the pragmas its writer relies on. */
export function prepareSearchFile(search: Database): void {
  search.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  enableWal(search);
  // The database drops queue entries once they are applied: an applied entry must be on
  // disk before that, also across a power loss.
  search.pragma('synchronous = FULL');
  search.pragma(`cache_size = -${SEARCH_WRITER_CACHE_KIB}`);
  search.transaction(() => {
    const exists = search.prepare("SELECT 1 FROM sqlite_master WHERE name = 'search_state'").get() !== undefined;
    if (!exists) {
      search.exec(`
        CREATE VIRTUAL TABLE object_fts USING fts5(names, terms, tokenize = 'ascii', content = '', contentless_delete = 1);
        INSERT INTO object_fts (object_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');
        CREATE TABLE search_state (source TEXT NOT NULL, applied INTEGER NOT NULL);
      `);
    }
    // Kept in the file's FTS5 configuration: set once, also in files made before it was.
    const hashSize = search.prepare<[], number>("SELECT v FROM object_fts_config WHERE k = 'hashsize'").pluck().get();
    if (hashSize !== SEARCH_HASH_SIZE) search.exec(`INSERT INTO object_fts (object_fts, rank) VALUES ('hashsize', ${SEARCH_HASH_SIZE})`);
  }).immediate();
}

interface QueueEntry {
  seq: number;
  op: string;
  body: string;
}

/** One object of a `put` entry. */
export type PutItem = [rowid: number, key: number, id: string, label: string | null, data: Data];

/**
 * The body of a `put` entry: one JSON.stringify of the items (about half the time of
 * formatting each item and joining them, which a bulk write far behind the indexer did
 * for every new object).
 */
export function putBody(items: readonly PutItem[]): string {
  return JSON.stringify(items);
}

interface IndexRow {
  rowid: number;
  key: number;
  id: string;
  label: string | null;
  data: string;
}

/** Keeps one search file current with one database (both connections owned by the caller). */
export class SearchFile {
  private readonly source: Statement<[], { id: string }>;
  private readonly state: Statement<[], { source: string; applied: number }>;
  private readonly setState: Statement<[string, number]>;
  private readonly clearState: Statement;
  private readonly lastSeq: Statement<[], { seq: number | null }>;
  private readonly entries: Statement<[number, number], QueueEntry>;
  private readonly chunk: Statement<[number], IndexRow>;
  private readonly range: Statement<[number, number], [rowid: number, realm: string, id: string, label: string | null, data: string]>;
  private readonly realmKey: Statement<[string], number>;
  private readonly entryCount: Statement<[], { n: number }>;
  private readonly write: Statement<[number, string, string]>;
  private readonly remove: Statement<[number]>;
  private readonly removeAll: Statement;
  private readonly begin: Statement;
  private readonly commit: Statement;

  /** `main`: a connection to the database, only read. `search`: to the search file, prepared. */
  constructor(
    main: Database,
    private readonly search: Database,
  ) {
    this.begin = main.prepare('BEGIN');
    this.commit = main.prepare('COMMIT');
    this.source = main.prepare('SELECT id FROM search_source');
    this.lastSeq = main.prepare('SELECT max(seq) AS seq FROM search_queue');
    this.entries = main.prepare('SELECT seq, op, body FROM search_queue WHERE seq > ? AND seq <= ? ORDER BY seq');
    // objects.data is JSONB (schema.ts version 5): json() gives its JSON text.
    const columns = 'o.rowid AS rowid, k.key AS key, o.id AS id, o.label AS label, json(o.data) AS data';
    this.chunk = main.prepare(
      `SELECT ${columns} FROM objects o JOIN realm_keys k ON k.realm = o.realm WHERE o.rowid > ? ORDER BY o.rowid LIMIT ${REBUILD_CHUNK}`,
    );
    // The realm's key from a map, not a join: one probe per realm instead of per row.
    this.range = main
      .prepare<[number, number], [number, string, string, string | null, string]>(
        'SELECT rowid, realm, id, label, json(data) FROM objects WHERE rowid BETWEEN ? AND ?',
      )
      .raw(true);
    this.realmKey = main.prepare<[string], number>('SELECT key FROM realm_keys WHERE realm = ?').pluck();
    this.state = search.prepare('SELECT source, applied FROM search_state');
    this.clearState = search.prepare('DELETE FROM search_state');
    this.setState = search.prepare('INSERT INTO search_state (source, applied) VALUES (?, ?)');
    this.entryCount = search.prepare('SELECT count(*) AS n FROM object_fts_docsize');
    this.write = search.prepare('INSERT OR REPLACE INTO object_fts (rowid, names, terms) VALUES (?, ?, ?)');
    this.remove = search.prepare('DELETE FROM object_fts WHERE rowid = ?');
    this.removeAll = search.prepare("INSERT INTO object_fts (object_fts) VALUES ('delete-all')");
  }

  /** The last entry applied (0 before any). */
  applied(): number {
    return this.state.get()?.applied ?? 0;
  }

  /**
   * Applies queue entries past the applied one, oldest first, a bounded number of rowids
   * per transaction, until none is left; first rebuilds the index when it is not this
   * database's. Returns the last entry applied.
   */
  catchUp(): number {
    for (;;) {
      const before = this.applied();
      const after = this.step();
      if (after === before) return after;
    }
  }

  /** One transaction of work; returns the last entry applied after it. */
  private step(): number {
    // One read transaction on the database: entries and rows from the same snapshot.
    this.begin.run();
    try {
      const source = this.source.get()?.id;
      if (source === undefined) throw new Error('search index: the database has no search source');
      const last = this.lastSeq.get()?.seq ?? 0;
      return this.search
        .transaction((): number => {
          const state = this.state.get();
          if (state?.source !== source) return this.rebuild(source, last);
          if (state.applied >= last) return state.applied;
          let applied = state.applied;
          let rowids = 0;
          for (const entry of this.entries.iterate(applied, last)) {
            if (entry.op === 'put') {
              const items = JSON.parse(entry.body) as PutItem[];
              for (const item of items) this.write.run(item[0], ...searchColumns(item[1], { id: item[2], label: item[3], location: null, data: item[4], seen: null }));
              rowids += items.length;
            } else if (entry.op === 'rows') {
              const [first, last] = JSON.parse(entry.body) as [number, number];
              const keys = new Map<string, number | undefined>();
              for (const [rowid, realm, id, label, data] of this.range.iterate(first, last)) {
                let key = keys.get(realm);
                if (!keys.has(realm)) keys.set(realm, (key = this.realmKey.get(realm)));
                // A realm without a key is being deleted (its rows with it).
                if (key !== undefined) this.index({ rowid, key, id, label, data });
              }
              rowids += last - first + 1;
            } else if (entry.op === 'del') {
              const ids = JSON.parse(entry.body) as number[];
              this.del(ids);
              rowids += ids.length;
            } else throw new Error(`search index: unknown queue entry ${entry.op}`);
            applied = entry.seq;
            if (rowids >= APPLY_ROWIDS) break;
          }
          this.clearState.run();
          this.setState.run(source, applied);
          return applied;
        })
        .immediate();
    } finally {
      this.commit.run();
    }
  }

  private del(ids: readonly number[]): void {
    const entries = this.entryCount.get()?.n ?? 0;
    if (ids.length > 1 && ids.length * DELETE_VS_INSERT > entries - ids.length) {
      // Most of the index goes (a large realm deleted): cheaper to write back the rest.
      // The rows still in the database are exactly the entries that stay.
      this.refill();
      return;
    }
    for (const id of ids) this.remove.run(id);
  }

  private index(row: IndexRow): void {
    const [names, terms] = searchColumns(row.key, { id: row.id, label: row.label, location: null, data: JSON.parse(row.data) as Data, seen: null });
    this.write.run(row.rowid, names, terms);
  }

  /** Empties the index and writes an entry for every object the snapshot holds. */
  private refill(): void {
    this.removeAll.run();
    for (let rows = this.chunk.all(0); rows.length > 0; rows = this.chunk.all(rows[rows.length - 1]?.rowid ?? 0)) {
      for (const row of rows) this.index(row);
    }
  }

  private rebuild(source: string, last: number): number {
    this.refill();
    this.clearState.run();
    this.setState.run(source, last);
    return last;
  }
}
