/**
 * Deleting a realm's entries from the R*Tree and the FTS5 index, inside the realm delete
 * transaction, before its rows go.
 *
 * One entry at a time is slow for a large realm: an R*Tree delete condenses the tree
 * (about 20 µs each, measured: 21 s for a million entries), an FTS5 delete about 7 µs.
 * When the realm holds most of an index, rebuilding the index from the entries that
 * stay is cheaper: the R*Tree is re-created and refilled with the other realms' entries,
 * the FTS5 table emptied ('delete-all') and refilled with the other realms' words. The
 * cheaper way is picked by counting. The realm's key is deleted last, so that the
 * delete trigger on `objects` (which only fires while the object's realm has a key)
 * leaves the already purged indexes alone.
 */
import type { Database } from 'better-sqlite3';
import { objectFromRow, type ObjectRow } from './rows.js';
import { OBJECT_RTREE_DDL } from './schema.js';
import { searchColumns } from './search-index.js';

/** Relative cost of deleting one entry versus re-inserting one that stays (measured, rounded). */
const RTREE_DELETE_VS_INSERT = 1.3;
const FTS_DELETE_VS_INSERT = 0.6;

type RtreeRow = [number, number, number, number, number, number, number];

export function purgeRealmIndexes(db: Database, realm: string): void {
  const key = db.prepare<[string], { key: number }>('SELECT key FROM realm_keys WHERE realm = ?').get(realm)?.key;
  if (key === undefined) return;

  // R*Tree: the realm's slice is [key, key + 0.5].
  const inRealm = (db.prepare('SELECT count(*) FROM object_rtree WHERE realm_lo <= ? AND realm_hi >= ?').pluck().get(key, key) as number) ?? 0;
  const total = (db.prepare('SELECT count(*) FROM object_rtree_rowid').pluck().get() as number) ?? 0;
  if (inRealm > 0) {
    if (inRealm * RTREE_DELETE_VS_INSERT > total - inRealm) {
      const kept = db
        .prepare('SELECT * FROM object_rtree WHERE realm_hi < ? OR realm_lo > ?')
        .raw(true)
        .all(key, key) as RtreeRow[];
      db.exec(`DROP TABLE object_rtree; ${OBJECT_RTREE_DDL};`);
      const insert = db.prepare('INSERT INTO object_rtree VALUES (?, ?, ?, ?, ?, ?, ?)');
      for (const row of kept) insert.run(...row);
    } else {
      db.prepare('DELETE FROM object_rtree WHERE id IN (SELECT id FROM object_rtree WHERE realm_lo <= ? AND realm_hi >= ?)').run(key, key);
    }
  }

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
