/**
 * Deleting a realm's entries from the FTS5 index, inside the realm delete transaction,
 * before its rows go.
 *
 * One entry at a time is slow for a large realm: an FTS5 delete costs about 7 µs. When
 * the realm holds most of the index, rebuilding it from the entries that stay is
 * cheaper: the FTS5 table is emptied ('delete-all') and refilled with the other realms' words. The
 * cheaper way is picked by counting. The realm's key is deleted last, so that the
 * delete trigger on `objects` (which only fires while the object's realm has a key)
 * leaves the already purged indexes alone.
 */
import type { Database } from 'better-sqlite3';
import { objectFromRow, type ObjectRow } from './rows.js';
import { searchColumns } from './search-index.js';

/** Relative cost of deleting one entry versus re-inserting one that stays (measured, rounded). */
const FTS_DELETE_VS_INSERT = 0.6;

export function purgeRealmIndexes(db: Database, realm: string): void {
  const key = db.prepare<[string], { key: number }>('SELECT key FROM realm_keys WHERE realm = ?').get(realm)?.key;
  if (key === undefined) return;

  // FTS5: every object has a row (rowid = objects.rowid).
  const realmRows = (db.prepare('SELECT count(*) FROM objects WHERE realm = ?').pluck().get(realm) as number) ?? 0;
  const allRows = (db.prepare('SELECT count(*) FROM objects').pluck().get() as number) ?? 0;
  if (realmRows > 0) {
    if (realmRows * FTS_DELETE_VS_INSERT > allRows - realmRows) {
      db.prepare("INSERT INTO object_fts (object_fts) VALUES ('delete-all')").run();
      const keys = new Map(
        db
          .prepare<[], { realm: string; key: number }>('SELECT realm, key FROM realm_keys')
          .all()
          .map((row) => [row.realm, row.key]),
      );
      const insert = db.prepare<[number, string, string]>('INSERT INTO object_fts (rowid, names, terms) VALUES (?, ?, ?)');
      const chunk = db.prepare<[string, number], ObjectRow & { realm: string }>(
        'SELECT rowid, realm, id, label, location, seen, data FROM objects WHERE realm != ? AND rowid > ? ORDER BY rowid LIMIT 10000',
      );
      for (let rows = chunk.all(realm, 0); rows.length > 0; rows = chunk.all(realm, rows[rows.length - 1]?.rowid ?? 0)) {
        for (const row of rows) {
          const other = keys.get(row.realm);
          if (other === undefined) continue; // no key: never indexed
          const [names, terms] = searchColumns(other, objectFromRow(row));
          insert.run(row.rowid, names, terms);
        }
      }
    } else {
      db.prepare('DELETE FROM object_fts WHERE rowid IN (SELECT rowid FROM objects WHERE realm = ?)').run(realm);
    }
  }
  db.prepare('DELETE FROM realm_keys WHERE realm = ?').run(realm);
}
