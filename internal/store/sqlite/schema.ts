/**
 * SQLite schema and its migrations. `PRAGMA user_version` holds the schema version;
 * opening a database runs every migration above it, each in its own transaction.
 *
 * One file holds every realm: each table carries a `realm` column. Ids use the default
 * BINARY collation, which orders UTF-8 bytes: that is Unicode code point order, the
 * order pages are served in. `objects` keeps an INTEGER rowid (stable across updates:
 * rows are updated in place, never replaced) and `lon`/`lat` columns, for the R*Tree
 * and FTS5 indexes that key on it. JSON columns hold JSON text, except `objects.data`,
 * which holds SQLite's binary JSONB since version 5 (the column still says TEXT: a
 * declared type does not convert a BLOB).
 *
 * Version 2 (the query engine) adds:
 * - `realm_keys`: a small integer per realm (never reused: AUTOINCREMENT), the prefix of
 *   the realm's search tokens.
 * - `object_rtree`, an R*Tree of object locations (dropped by version 3, created empty
 *   here since version 3 follows).
 * - `object_fts` (created empty here, since version 4 replaces it): FTS5, contentless
 *   with delete support, over the search words of each object (objectSearchWords), each word prefixed by `<realm key>x` so
 *   that a prefix query only reaches its realm's terms. Column `names` holds the words
 *   of id and label (weighted higher in ranking), `terms` those of the data values. The words are
 *   computed in JavaScript by the one tokenizer and indexed with the `ascii` tokenizer,
 *   which splits them on the spaces that join them and changes nothing else. The row
 *   of a deleted object goes with it by the trigger `objects_index_delete`; a realm
 *   delete purges the realm's rows first, in bulk (realm-purge.ts), and then deletes its
 *   objects without the trigger (it only fires while the realm has a key).
 *
 * Version 3 drops the R*Tree: the spatial index is in memory, built from objects.lon/lat
 * (location-index.ts). Keeping the R*Tree current cost about 19 µs per new object.
 *
 * Version 4 moves the FTS5 index into a file of its own, kept current by a worker thread
 * (search-file.ts, search-indexer.ts): `search_queue` lists, in the transaction of each
 * write, the objects whose entries must be written or deleted (the trigger
 * `objects_search_delete` queues a deleted object, while its realm has a key), and
 * `search_source` holds the random id that ties a search file to this database. The
 * index is rebuilt from the objects in the new file.
 *
 * Version 5 stores `objects.data` as JSONB (about 2.5 s per million objects, and the
 * whole table passes through the WAL once). List filters on data fields read it with
 * json_extract/json_type (filter-sql.ts), which on JSON text parsed the whole text for
 * every row they tested: at 50,000 rows `kind=van,active=true` cost about 380 ns a row
 * instead of 1,100, `fuel<0.01` 410 instead of 1,130. Writes convert the JSON text they
 * build with jsonb(?); reads of whole objects ask for json(data), which gives back the
 * text that was written, byte for byte (JSON.stringify's output: numbers keep their
 * text, strings their escapes, keys their order). Areas keep JSON text.
 *
 * Version 6 keeps only past fixes in `history`: an object's current location is its row's
 * `location` (with `loc_time`), and a history read adds it to the stored fixes. A new
 * object's first fix is then one row written instead of two (about 5 µs of the 23 of a
 * new object at a million, and a sixth of the file). Retention deletes past fixes; a
 * current fix it would have deleted stays as the object's location and is marked
 * `loc_pruned`, which leaves it out of history (until a newer fix replaces it, which
 * then does not move it to history). The migration marks the current fixes that have no
 * history row (pruned before) and deletes the rows that duplicate a current fix (about
 * 7 s per million objects; the freed pages stay in the file and are reused).
 *
 * Version 7 stores past fixes compactly (history-rows.ts): `history` is keyed by the
 * object's rowid and the fix's time in milliseconds, with one REAL column per numeric key
 * of the location, instead of the realm, the id, the time and the location as text. Rows
 * are about a quarter of the size. The migration copies the rows of existing objects,
 * object by object in rowid order (rows of objects that no longer exist are dropped).
 *
 * Version 8 adds `objects.past`: past fixes the object's row holds (history-rows.ts
 * appendPast, a few dozen bytes each) until there are PAST_BUFFER_FIXES of them, which
 * then move to `history` together. A location update wrote two pages before (the
 * object's and the history page of its fixes, random pages both, each copied whole to
 * the WAL at commit); now it writes the object's page, and one update in eight also
 * that history page. History reads merge the held fixes in (a later one of an equal
 * time wins, as in `history`); retention first moves them to `history`. Existing rows
 * hold none: the migration only adds the column.
 *
 * Version 9 drops `objects.location`, the current location as JSON text, which repeated
 * `lon`, `lat` and `loc_time`: its other numbers (altitude, speed, heading, accuracy,
 * altitudeAccuracy) are in `loc_extra`, a few bytes (current-fix.ts). A location update
 * formats no JSON and a row is about a third smaller; the migration rewrites every row
 * once.
 *
 * Version 10 stores past fixes in chunks (history-chunks.ts): a row of `history` holds
 * the fixes of one object over at most 15 minutes (up to 64), keyed by the object's rowid
 * and the chunk's last time, encoded as `objects.past` holds them. A flush of an object's
 * held fixes is then one insert instead of one per fix. The migration cuts each object's
 * rows into chunks.
 *
 * Version 11 adds a realm's `label` and `data` (Hivekit's realm entity, REST v2): JSON
 * text, like areas' data, read whole with the realm. Existing realms read as label NULL
 * and data {}: the migration only adds the columns.
 *
 * Version 12 adds tenants (decisions.md "Tenants"): `tenants`, holding at least `default`;
 * `signing_keys`, a tenant's JWT keys (the HMAC secret itself: the file must be protected
 * like the tokens it holds); and a realm's `tenant` and `name` (the id the tenant knows).
 * `realms.id` stays the storage key (domain/realm-key.ts); existing realms become the
 * default tenant's, with name = id, so no other row changes.
 *
 * Version 13 keeps the object's label and data with its history (Hivekit's history
 * entries carry the data after each write: hivekit-compat.md 7.1). Every fix names the
 * snapshot of label and data it was written with by a small version number (history-rows.ts:
 * 4 bytes, only when not 0); the object row holds its current snapshot (`label`, `data`)
 * as version `ver` and the version its current fix was written with (`loc_ver`). The
 * current fix is the newest, so while it names `ver` its time is the latest of a fix that
 * names `ver`; otherwise `ver_last` holds that time (NULL while no fix names `ver`). All
 * three are 0 or NULL on a tracker's row, which then costs no bytes but their headers.
 * A write that changes the label or data of a version some fix names first keeps the old
 * snapshot for `snapshots` (keyed by the object's rowid and version, with `last`, the latest
 * fix time that names it, which retention prunes by), then counts the version up; a
 * version no fix names is overwritten in place. Kept snapshots wait in the row (`snaps`,
 * snapshot-buffer.ts) and move to `snapshots` a few at a time, as past fixes do. The
 * migration only adds the columns and the table. A tracker whose data stays the same writes
 * no snapshot at all; one whose data changes with every fix, one per fix. Fixes stored
 * before version 12 read as version 0: the object's label and data as they were when this
 * migration ran, until the first change copies them.
 *
 * Version 14 adds `objects.tasks`: an object's Hivekit task ids (v1 `tds`,
 * hivekit-compat.md 4.2) as a JSON array of strings, NULL when it has none (never `[]`).
 * A tracker's row carries only the NULL's header byte, and its writes never touch the
 * column: only a write that changes the task ids sets it (object-store.ts). History
 * snapshots do not keep task ids. The migration only adds the column (instant: SQLite
 * rewrites no row for ADD COLUMN); existing objects read as having no task ids.
 *
 * Version 15 stores `history` chunks in the order they are written (a rowid table, new
 * chunks appended at its end) with the unique index `history_by_object` on (orow, last)
 * for the reads, instead of a table clustered by (orow, last). A flush of one object's
 * held fixes inserted its chunk into the object's place of the table: once objects had a
 * few chunks each, every flush of a batch wrote a page of its own (4 KiB to the WAL for
 * one chunk of about 200 bytes), and the bytes written per location update grew with the
 * history, 0.8 KiB to 2.6 KiB over the v1 throughput benchmark. Appended, a batch's chunks
 * share the last pages of the table, and only the index entries (about 20 bytes each, in
 * (orow, last) order) go where their object is. A history read finds an object's chunks
 * through the index (one more lookup per chunk, each about 200 bytes: a page holds fixes
 * of about 8 minutes of one tracker). The migration copies the chunks in the order of
 * their last time.
 *
 * Version 17 adds `tasks` (Hivekit tasks, hivekit-compat.md 4.10): one row per task, its
 * steps, location and data as JSON text, keyed by (realm, id). The rowid `seq` gives the
 * creation order lists are served in: a new row's rowid is above every existing one's,
 * so the order holds across deletes. The migration only creates the table.
 */
import type { Database } from 'better-sqlite3';
import type { Location } from '../../domain/types.js';
import { locationExtra } from './current-fix.js';
import { appendPast, chunkFixes, FIX_COLUMNS, fixRow, STORED_FIX_COLUMNS, type StoredFix } from './history-rows.js';
import { isBusy } from './sqlite-errors.js';

type Migration = string | ((db: Database) => void);

/** Objects whose past fixes the version 7 migration copies per statement. */
const COMPACT_CHUNK_OBJECTS = 256;

/** Version 7: past fixes keyed by (object rowid, time in ms), numbers in columns (history-rows.ts). */
function compactHistory(db: Database): void {
  db.exec(`
    CREATE TABLE history_v7 (
      orow              INTEGER NOT NULL,
      time              INTEGER NOT NULL,
      lon               REAL NOT NULL,
      lat               REAL NOT NULL,
      altitude          REAL,
      speed             REAL,
      heading           REAL,
      accuracy          REAL,
      altitude_accuracy REAL,
      PRIMARY KEY (orow, time)
    ) WITHOUT ROWID;
  `);
  // Each object's rows by a seek on the old key, in (rowid, time) order: the new table is
  // written from front to back.
  const read = db
    .prepare<[number, number], [number, string]>(
      'SELECT o.rowid, h.location FROM objects o JOIN history h ON h.realm = o.realm AND h.object_id = o.id WHERE o.rowid > ? AND o.rowid <= ? ORDER BY o.rowid, h.time',
    )
    .raw(true);
  const write = db.prepare(`INSERT OR REPLACE INTO history_v7 (${FIX_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const last = db.prepare<[], number | null>('SELECT max(rowid) FROM objects').pluck().get() ?? 0;
  for (let after = 0; after < last; after += COMPACT_CHUNK_OBJECTS) {
    for (const [orow, location] of read.all(after, after + COMPACT_CHUNK_OBJECTS)) {
      write.run(...fixRow(orow, JSON.parse(location) as Location));
    }
  }
  db.exec('DROP TABLE history; ALTER TABLE history_v7 RENAME TO history;');
}

/** Version 9: the current location's optional numbers in `loc_extra` (current-fix.ts), not JSON text in `location`. */
function compactLocation(db: Database): void {
  db.function('locus_location_extra', { deterministic: true }, (text: unknown) =>
    // better-sqlite3 copies a returned buffer, so locationExtra's shared one may be returned.
    typeof text === 'string' ? locationExtra(JSON.parse(text) as Location) : null,
  );
  db.exec(`
    ALTER TABLE objects ADD COLUMN loc_extra BLOB;
    UPDATE objects SET loc_extra = locus_location_extra(location) WHERE location IS NOT NULL;
    ALTER TABLE objects DROP COLUMN location;
  `);
}

/** Objects whose past fixes the version 10 migration reads per statement. */
const CHUNK_MIGRATION_OBJECTS = 256;

/** Version 10: past fixes in chunks (history-chunks.ts), one row per object and short time. */
function chunkHistory(db: Database): void {
  db.exec(`
    CREATE TABLE history_v10 (
      orow  INTEGER NOT NULL,
      last  INTEGER NOT NULL,
      first INTEGER NOT NULL,
      n     INTEGER NOT NULL,
      fixes BLOB NOT NULL,
      PRIMARY KEY (orow, last)
    ) WITHOUT ROWID;
  `);
  const read = db
    .prepare<[number, number], [number, ...StoredFix]>(`SELECT orow, ${STORED_FIX_COLUMNS} FROM history WHERE orow > ? AND orow <= ? ORDER BY orow, time`)
    .raw(true);
  const write = db.prepare<[number, number, number, number, Uint8Array]>('INSERT INTO history_v10 (orow, last, first, n, fixes) VALUES (?, ?, ?, ?, ?)');
  const flush = (orow: number, fixes: StoredFix[]): void => {
    // One fix per time already (the old key): in time order, cut by span and count.
    for (const chunk of chunkFixes(fixes)) {
      write.run(orow, (chunk[chunk.length - 1] as StoredFix)[0], (chunk[0] as StoredFix)[0], chunk.length, appendPast(null, chunk));
    }
  };
  const last = db.prepare<[], number | null>('SELECT max(orow) FROM history').pluck().get() ?? 0;
  for (let after = 0; after < last; after += CHUNK_MIGRATION_OBJECTS) {
    let orow = -1;
    let fixes: StoredFix[] = [];
    for (const [row, ...fix] of read.all(after, after + CHUNK_MIGRATION_OBJECTS)) {
      if (row !== orow && fixes.length > 0) {
        flush(orow, fixes);
        fixes = [];
      }
      orow = row;
      fixes.push(fix);
    }
    if (fixes.length > 0) flush(orow, fixes);
  }
  db.exec('DROP TABLE history; ALTER TABLE history_v10 RENAME TO history;');
}

/** Version 13: the snapshots of label and data that history entries carry (see the header). */
function historySnapshots(db: Database): void {
  db.exec(`
    ALTER TABLE objects ADD COLUMN ver INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE objects ADD COLUMN ver_last INTEGER;
    ALTER TABLE objects ADD COLUMN loc_ver INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE objects ADD COLUMN snaps TEXT;
    CREATE TABLE snapshots (
      orow  INTEGER NOT NULL,
      ver   INTEGER NOT NULL,
      last  INTEGER NOT NULL,
      label TEXT,
      data  BLOB NOT NULL,
      PRIMARY KEY (orow, ver)
    ) WITHOUT ROWID;
  `);
}

/** Migration n (0-based) brings the schema from version n to n + 1. */
const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE IF NOT EXISTS realms (
    id       TEXT PRIMARY KEY NOT NULL,
    settings TEXT NOT NULL,
    created  TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS tokens (
    id      TEXT PRIMARY KEY NOT NULL,
    realm   TEXT NOT NULL,
    hash    TEXT NOT NULL UNIQUE,
    scope   TEXT NOT NULL,
    created TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS tokens_by_realm ON tokens (realm, created, id);
  CREATE TABLE IF NOT EXISTS objects (
    rowid    INTEGER PRIMARY KEY,
    realm    TEXT NOT NULL,
    id       TEXT NOT NULL,
    label    TEXT,
    lon      REAL,
    lat      REAL,
    location TEXT,
    loc_time TEXT,
    seen     TEXT,
    data     TEXT NOT NULL,
    UNIQUE (realm, id)
  );
  CREATE TABLE IF NOT EXISTS areas (
    realm TEXT NOT NULL,
    id    TEXT NOT NULL,
    label TEXT,
    shape TEXT NOT NULL,
    data  TEXT NOT NULL,
    PRIMARY KEY (realm, id)
  );
  CREATE TABLE IF NOT EXISTS history (
    realm     TEXT NOT NULL,
    object_id TEXT NOT NULL,
    time      TEXT NOT NULL,
    location  TEXT NOT NULL,
    PRIMARY KEY (realm, object_id, time)
  ) WITHOUT ROWID;
  `,
  // The index tables start empty: version 4 drops object_fts and indexes the objects in the
  // search file (search-file.ts), version 3 drops the R*Tree.
  `
    CREATE TABLE realm_keys (
      key   INTEGER PRIMARY KEY AUTOINCREMENT,
      realm TEXT NOT NULL UNIQUE
    );
    CREATE VIRTUAL TABLE object_rtree USING rtree(id, realm_lo, realm_hi, min_lon, max_lon, min_lat, max_lat);
    CREATE VIRTUAL TABLE object_fts USING fts5(names, terms, tokenize = 'ascii', content = '', contentless_delete = 1);
    INSERT INTO object_fts (object_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0)');

    CREATE TRIGGER objects_index_delete AFTER DELETE ON objects
      WHEN EXISTS (SELECT 1 FROM realm_keys WHERE realm = old.realm) BEGIN
      DELETE FROM object_rtree WHERE id = old.rowid;
      DELETE FROM object_fts WHERE rowid = old.rowid;
    END;

    INSERT INTO realm_keys (realm) SELECT DISTINCT realm FROM objects ORDER BY realm;
    `,
  `
  DROP TRIGGER objects_index_delete;
  DROP TABLE object_rtree;
  CREATE TRIGGER objects_index_delete AFTER DELETE ON objects
    WHEN EXISTS (SELECT 1 FROM realm_keys WHERE realm = old.realm) BEGIN
    DELETE FROM object_fts WHERE rowid = old.rowid;
  END;
  `,
  `
  DROP TRIGGER objects_index_delete;
  DROP TABLE object_fts;
  CREATE TABLE search_queue (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    op   TEXT NOT NULL,
    body TEXT NOT NULL
  );
  CREATE TABLE search_source (id TEXT NOT NULL);
  INSERT INTO search_source (id) VALUES (lower(hex(randomblob(16))));
  CREATE TRIGGER objects_search_delete AFTER DELETE ON objects
    WHEN EXISTS (SELECT 1 FROM realm_keys WHERE realm = old.realm) BEGIN
    INSERT INTO search_queue (op, body) VALUES ('del', json_array(old.rowid));
  END;
  `,
  'UPDATE objects SET data = jsonb(data);',
  `
  ALTER TABLE objects ADD COLUMN loc_pruned INTEGER NOT NULL DEFAULT 0;
  UPDATE objects SET loc_pruned = 1 WHERE loc_time IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM history h WHERE h.realm = objects.realm AND h.object_id = objects.id AND h.time = objects.loc_time
  );
  DELETE FROM history WHERE EXISTS (
    SELECT 1 FROM objects o WHERE o.realm = history.realm AND o.id = history.object_id AND o.loc_time = history.time
  );
  `,
  compactHistory,
  // Version 8: the past fixes an object's row holds before they move to history.
  'ALTER TABLE objects ADD COLUMN past BLOB;',
  compactLocation,
  chunkHistory,
  // Version 11: the realm's label and data.
  `
  ALTER TABLE realms ADD COLUMN label TEXT;
  ALTER TABLE realms ADD COLUMN data TEXT NOT NULL DEFAULT '{}';
  `,
  // Tenants and signing keys; a realm's tenant and name (self-contained: it names no other migration).
  `
  CREATE TABLE tenants (
    id      TEXT PRIMARY KEY NOT NULL,
    label   TEXT,
    created TEXT NOT NULL
  );
  INSERT INTO tenants (id, label, created) VALUES ('default', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
  CREATE TABLE signing_keys (
    id      TEXT PRIMARY KEY NOT NULL,
    tenant  TEXT NOT NULL,
    realm   TEXT,
    secret  TEXT NOT NULL,
    created TEXT NOT NULL
  );
  CREATE INDEX signing_keys_by_tenant ON signing_keys (tenant, created, id);
  ALTER TABLE realms ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
  ALTER TABLE realms ADD COLUMN name TEXT;
  UPDATE realms SET name = id;
  CREATE UNIQUE INDEX realms_by_tenant ON realms (tenant, name);
  `,
  historySnapshots,
  // Version 14: an object's task ids (self-contained: it names no other migration).
  'ALTER TABLE objects ADD COLUMN tasks TEXT;',
  // Version 15: history chunks appended in write order, found by the index (self-contained).
  `
  CREATE TABLE history_v15 (
    orow  INTEGER NOT NULL,
    last  INTEGER NOT NULL,
    first INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    fixes BLOB NOT NULL
  );
  INSERT INTO history_v15 (orow, last, first, n, fixes) SELECT orow, last, first, n, fixes FROM history ORDER BY last, orow;
  DROP TABLE history;
  ALTER TABLE history_v15 RENAME TO history;
  CREATE UNIQUE INDEX history_by_object ON history (orow, last);
  `,
  // Version 16: instructions and the engine's state for them (instruction-store.ts; self-contained, and
  // IF NOT EXISTS: a file taken back to an older version to test a migration keeps these tables).
  `
  CREATE TABLE IF NOT EXISTS instructions (
    seq        INTEGER PRIMARY KEY,
    realm      TEXT NOT NULL,
    id         TEXT NOT NULL,
    label      TEXT,
    source     TEXT NOT NULL,
    data       TEXT NOT NULL,
    created    TEXT NOT NULL,
    updated    TEXT NOT NULL,
    generation INTEGER NOT NULL,
    suspended  TEXT,
    UNIQUE (realm, id)
  );
  CREATE TABLE IF NOT EXISTS instruction_members (
    realm       TEXT NOT NULL,
    instruction TEXT NOT NULL,
    entry       TEXT NOT NULL,
    PRIMARY KEY (realm, instruction, entry)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS instruction_pending (
    seq         INTEGER PRIMARY KEY,
    realm       TEXT NOT NULL,
    key         TEXT NOT NULL,
    instruction TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    part        TEXT NOT NULL,
    entries     TEXT NOT NULL,
    created     TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    UNIQUE (realm, key)
  );
  CREATE INDEX IF NOT EXISTS instruction_pending_by_realm ON instruction_pending (realm);
  CREATE INDEX IF NOT EXISTS instruction_pending_by_instruction ON instruction_pending (realm, instruction);
  `,
  // Version 17: tasks (self-contained).
  `
  CREATE TABLE IF NOT EXISTS tasks (
    seq         INTEGER PRIMARY KEY,
    realm       TEXT NOT NULL,
    id          TEXT NOT NULL,
    label       TEXT,
    description TEXT,
    status      TEXT NOT NULL,
    steps       TEXT NOT NULL,
    target      TEXT,
    location    TEXT,
    data        TEXT NOT NULL,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS tasks_by_id ON tasks (realm, id);
  CREATE INDEX IF NOT EXISTS tasks_by_realm ON tasks (realm, seq);
  `,
  // Version 18: the depth of the chain that caused a pending action, so a replayed action writes at
  // it. Checked first: a file taken back to an older version to test a migration has the column.
  (db) => {
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('instruction_pending')").all();
    if (!columns.some((column) => column.name === 'depth')) db.exec('ALTER TABLE instruction_pending ADD COLUMN depth INTEGER');
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Page cache per connection, in KiB (SQLite's default is 16 MiB, too small for a million objects). */
const CACHE_KIB = 64 * 1024;
/**
 * Page cache of an attached file the connection only reads (the store's connection reads
 * the search file, which the indexer's thread writes): small. Its pages are read
 * through the memory map, which bypasses the page cache; a larger cache held memory
 * for nothing (docs/performance.md, Memory).
 */
const READ_ONLY_CACHE_KIB = 2 * 1024;
/**
 * Page cache of the search file's writer (the indexer's thread, search-file.ts), a quarter
 * of the store's. FTS5 gathers a transaction's terms in its own memory (SEARCH_HASH_SIZE) and
 * writes them as new segments; the pages it reads back to merge segments come from the OS
 * page cache. The store's cache size here made the indexer no faster and held its memory
 * (docs/performance.md, Memory).
 */
export const SEARCH_WRITER_CACHE_KIB = 16 * 1024;
/**
 * Reads go through a memory map of up to this many bytes (no read() call and no copy per
 * page): random row lookups, which shape queries are made of, cost several times less.
 * The mapped pages are the OS page cache; they count in the process's RSS once touched.
 * Kept for the query cost it saves, with the RSS it costs (docs/performance.md, Memory).
 */
const MMAP_BYTES = 2 ** 30;

/**
 * The page cache and memory map of one schema of a connection: `main`, or an attached
 * file the connection only reads (which otherwise gets no map: a search ranking
 * thousands of matches then reads each match's size through read() calls).
 */
export function configureCache(db: Database, schema = 'main'): void {
  db.pragma(`${schema}.cache_size = -${schema === 'main' ? CACHE_KIB : READ_ONLY_CACHE_KIB}`);
  db.pragma(`${schema}.mmap_size = ${MMAP_BYTES}`);
}

/**
 * The size the WAL file is cut back to when rewound (128 MiB): twice the writer's
 * checkpoint backstop (checkpointer.ts), so that a steady load, whose WAL stays near
 * the backstop, does not cut and regrow the file at each rewind; one huge transaction
 * (a realm of a million objects deleted) does not leave a WAL of its size behind.
 */
export const WAL_SIZE_LIMIT_BYTES = 128 * 2 ** 20;

/** How long a connection waits for a lock another one holds (busy_timeout, and enableWal's retries). */
export const BUSY_TIMEOUT_MS = 5000;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Puts the file in WAL mode (kept in the file: a no-op once it is). Switching a new file
 * takes an exclusive lock that SQLite does not wait for (the busy handler is not asked): a
 * process opening the file while another one creates it, and holds a lock for a moment,
 * would fail with SQLITE_BUSY. So a busy switch is retried, backing off from 1 to 50 ms,
 * for up to `timeoutMs`; then the error is thrown. Blocking, as opening a store is.
 */
export function enableWal(db: Database, timeoutMs = BUSY_TIMEOUT_MS): void {
  const deadline = Date.now() + timeoutMs;
  for (let waitMs = 1; ; waitMs = Math.min(2 * waitMs, 50)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      Atomics.wait(pause, 0, 0, Math.min(waitMs, Math.max(1, deadline - Date.now())));
    }
  }
}

/** Sets the connection pragmas every store relies on. */
export function configure(db: Database): void {
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  configureCache(db);
  enableWal(db);
  db.pragma('synchronous = NORMAL');
  // The WAL file keeps its largest size once rewound; past this it is cut back to it.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  db.pragma('foreign_keys = ON');
}

/** Brings the schema up to SCHEMA_VERSION; refuses a database written by a newer version. */
export function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true });
  if (typeof current !== 'number' || !Number.isInteger(current) || current < 0) {
    throw new Error(`sqlite store: unreadable schema version ${String(current)}`);
  }
  if (current > SCHEMA_VERSION) {
    throw new Error(`sqlite store: schema version ${current} is newer than this build supports (${SCHEMA_VERSION})`);
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    const migration = MIGRATIONS[version];
    if (migration === undefined) break;
    db.transaction(() => {
      // Another process opening the same file may have run it meanwhile (store-owner.ts `shared`).
      if (db.pragma('user_version', { simple: true }) !== version) return;
      if (typeof migration === 'string') db.exec(migration);
      else migration(db);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
