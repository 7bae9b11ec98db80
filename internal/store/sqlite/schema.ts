/**
 * SQLite schema and its migrations. `PRAGMA user_version` holds the schema version;
 * opening a database runs every migration above it, each in its own transaction.
 *
 * One file holds every realm: each table carries a `realm` column. Ids use the default
 * BINARY collation, which orders UTF-8 bytes: that is Unicode code point order, the
 * order pages are served in. `objects` keeps an INTEGER rowid (stable across updates:
 * rows are updated in place, never replaced) and `lon`/`lat` columns, for the R*Tree
 * and FTS5 indexes that key on it. JSON columns hold JSON text.
 */
import type { Database } from 'better-sqlite3';

/** Migration n (0-based) brings the schema from version n to n + 1. */
const MIGRATIONS: readonly string[] = [
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
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Sets the connection pragmas every store relies on. */
export function configure(db: Database): void {
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
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
    const ddl = MIGRATIONS[version];
    if (ddl === undefined) break;
    db.transaction(() => {
      db.exec(ddl);
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
}
