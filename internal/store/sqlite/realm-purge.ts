/**
 * The full-text side of a realm delete, inside its transaction, before its rows go: one
 * queue entry removes every entry of the realm's objects (the indexer rebuilds the index
 * instead when that is cheaper, see search-file.ts), then the realm's key goes, so that
 * the delete trigger on `objects` (which only fires while the object's realm has a key)
 * does not queue the objects one by one. Returns the entry queued, or null.
 */
import type { Database } from 'better-sqlite3';
import type { SearchIndexer } from './search-indexer.js';

export function purgeRealmIndexes(db: Database, indexer: SearchIndexer, realm: string): [seq: number, rowids: number] | null {
  const rowids = db.prepare<[string], number>('SELECT rowid FROM objects WHERE realm = ?').pluck().all(realm);
  const seq = rowids.length === 0 ? null : indexer.queue('del', rowids);
  db.prepare('DELETE FROM realm_keys WHERE realm = ?').run(realm);
  return seq === null ? null : [seq, rowids.length];
}
