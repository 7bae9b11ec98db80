/**
 * An object's history: pages of its fixes (the past fixes in `history` and in its row,
 * then its current location), each with the label and data it was written with, and
 * retention, which deletes the fixes before a time, realm by realm.
 *
 * Fixes name snapshots of label and data by version (schema.ts version 13): the row's own
 * (`ver`), those held in the row (`snaps`, snapshot-buffer.ts) and those in `snapshots`.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { invalid } from '../../errors.js';
import type { Data, Location } from '../../domain/types.js';
import { decodeCursor } from '../cursor.js';
import type { HistoryEntry, HistoryQuery, Page } from '../port.js';
import { completeLocation } from './current-fix.js';
import { encodeData } from './data-jsonb.js';
import type { HistoryChunks } from './history-chunks.js';
import { decodePast, fixFromRow, fixTime, fixVersion, withinBounds, withinLimits, type HistoryBound, type StoredFix } from './history-rows.js';
import { checkLimit, emptyPage, toPage } from '../pages.js';
import { heldSnapshots } from './snapshot-buffer.js';

/** Objects whose history one retention transaction walks. */
const PRUNE_CHUNK_OBJECTS = 500;

const NORMALISED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A time of the normalised form that names a real instant (no month 13). */
const isoTimeExists = (time: string): boolean => {
  const ms = fixTime(time);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === time;
};

/** What a history read needs of the object's row. */
interface HistoryOwner {
  rowid: number;
  lon: number | null;
  lat: number | null;
  loc_extra: Buffer | null;
  loc_time: string | null;
  loc_pruned: number;
  past: Uint8Array | null;
  label: string | null;
  /** JSON text. */
  data: string;
  ver: number;
  loc_ver: number;
  /** Held snapshots (snapshot-buffer.ts). */
  snaps: string | null;
}

/** The label and data a history entry carries. */
interface Snapshot {
  label: string | null;
  data: Data;
}

/** The bounds of a history query: each side bounded once, by the cursor when it is past the range's own bound. */
function historyBounds(query: HistoryQuery): HistoryBound[] {
  const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
  // A history cursor names the time of the last fix of its page.
  if (cursor !== null && !(NORMALISED_TIME.test(cursor) && isoTimeExists(cursor))) throw invalid('cursor is not valid', 'invalid_cursor');
  const asc = query.order === 'asc';
  let low: HistoryBound | null = query.from === undefined ? null : ['>=', query.from];
  let high: HistoryBound | null = query.to === undefined ? null : ['<=', query.to];
  if (cursor !== null) {
    if (asc && (low === null || cursor >= low[1])) low = ['>', cursor];
    if (!asc && (high === null || cursor <= high[1])) high = ['<', cursor];
  }
  const bounds: HistoryBound[] = [];
  if (low !== null) bounds.push(low);
  if (high !== null) bounds.push(high);
  return bounds;
}

export class ObjectHistory {
  private readonly selectOwner: Statement<[string, string], HistoryOwner>;
  private readonly selectSnapshot: Statement<[number, number], [string | null, string]>;
  private readonly historyTx: (realm: string, id: string, query: HistoryQuery) => Page<HistoryEntry>;
  private readonly pruneChunkTx: Transaction<(realm: string, after: string, before: string) => { last: string | null; deleted: number }>;

  constructor(
    db: Database,
    private readonly chunks: HistoryChunks,
  ) {
    this.selectOwner = db.prepare(
      'SELECT rowid, lon, lat, loc_extra, loc_time, loc_pruned, past, label, json(data) AS data, ver, loc_ver, snaps FROM objects WHERE realm = ? AND id = ?',
    );
    this.selectSnapshot = db.prepare<[number, number], [string | null, string]>('SELECT label, json(data) FROM snapshots WHERE orow = ? AND ver = ?').raw(true);
    // One read transaction: the object's row, then its stored fixes.
    this.historyTx = db.transaction((realm: string, id: string, query: HistoryQuery) => this.page(realm, id, query));
    this.pruneChunkTx = this.retention(db);
  }

  /** A page of the object's history (empty when it does not exist). */
  read(realm: string, id: string, query: HistoryQuery): Page<HistoryEntry> {
    return this.historyTx(realm, id, query);
  }

  /** One retention transaction: the objects after `after` (PRUNE_CHUNK_OBJECTS of them); `last`: the last one's id, null when none were left. */
  pruneChunk(realm: string, after: string, before: string): { last: string | null; deleted: number } {
    return this.pruneChunkTx.immediate(realm, after, before);
  }

  private page(realm: string, id: string, query: HistoryQuery): Page<HistoryEntry> {
    checkLimit(query.limit);
    const asc = query.order === 'asc';
    const bounds = historyBounds(query);
    const owner = this.selectOwner.get(realm, id);
    if (owner === undefined) return emptyPage();
    const limits = bounds.map(([op, time]): [HistoryBound[0], number] => [op, fixTime(time)]);
    // The past fixes the row holds, within the bounds (a later one of an equal time wins).
    const held = new Map<number, StoredFix>();
    for (const fix of decodePast(owner.past)) if (withinLimits(fix[0], limits)) held.set(fix[0], fix);
    // The stored past fixes merged with the held ones by time, up to the page's end; then
    // the current location unless pruned (schema.ts version 6), in its place by time.
    const merged = this.chunks.page(owner.rowid, limits, asc, query.limit + 1, held);
    const snapshot = this.snapshotsOf(owner);
    const entry = (location: Location, ver: number): HistoryEntry => {
      const { label, data } = snapshot(ver);
      return { location, label, data };
    };
    const entries = merged.map((fix) => entry(fixFromRow(fix), fixVersion(fix)));
    const current = owner.loc_time;
    if (current !== null && owner.lon !== null && owner.lat !== null && owner.loc_pruned === 0 && withinBounds(current, bounds)) {
      let at = entries.length;
      while (at > 0 && (asc ? (entries[at - 1] as HistoryEntry).location.time > current : (entries[at - 1] as HistoryEntry).location.time < current)) at--;
      entries.splice(at, 0, entry(completeLocation({ longitude: owner.lon + 0, latitude: owner.lat + 0 }, owner.loc_extra, current), owner.loc_ver));
    }
    return toPage(entries, query.limit, (item) => item, (item) => item.location.time);
  }

  /**
   * The snapshots a page names: the row's own version, the others from `snapshots` (one
   * lookup per version; a version found nowhere reads as no label and no data).
   */
  private snapshotsOf(owner: HistoryOwner): (ver: number) => Snapshot {
    const snapshots = new Map<number, Snapshot>();
    for (const [ver, , label, data] of heldSnapshots(owner.snaps)) snapshots.set(ver, { label, data });
    return (ver: number): Snapshot => {
      let found = snapshots.get(ver);
      if (found === undefined) {
        if (ver === owner.ver) {
          found = { label: owner.label, data: JSON.parse(owner.data) as Data };
        } else {
          const row = this.selectSnapshot.get(owner.rowid, ver);
          found = row === undefined ? { label: null, data: {} } : { label: row[0], data: JSON.parse(row[1]) as Data };
        }
        snapshots.set(ver, found);
      }
      return found;
    };
  }

  /**
   * Retention walks the realm's objects in id order, a chunk per transaction. In each
   * chunk's id range, the past fixes and snapshots the rows hold move out first; then one
   * statement marks the current fixes before the cut pruned (they stay the objects'
   * locations, history leaves them out), and the past fixes before the cut go (a seek on
   * the (orow, last) index per object of the chunk; history-chunks.ts).
   */
  private retention(db: Database): Transaction<(realm: string, after: string, before: string) => { last: string | null; deleted: number }> {
    const chunkEnd = db.prepare<[string, string, number], string | null>(
      'SELECT max(id) FROM (SELECT id FROM objects WHERE realm = ? AND id > ? ORDER BY id LIMIT ?)',
    ).pluck();
    const pruneCurrent = db.prepare<[string, string, string, string]>(
      'UPDATE objects SET loc_pruned = 1 WHERE realm = ? AND id > ? AND id <= ? AND loc_time < ? AND loc_pruned = 0',
    );
    const heldPast = db
      .prepare<[string, string, string], [number, Uint8Array]>(
        'SELECT rowid, past FROM objects WHERE realm = ? AND id > ? AND id <= ? AND past IS NOT NULL',
      )
      .raw(true);
    const clearPast = db.prepare<[number]>('UPDATE objects SET past = NULL WHERE rowid = ?');
    const heldSnaps = db
      .prepare<[string, string, string], [number, string]>('SELECT rowid, snaps FROM objects WHERE realm = ? AND id > ? AND id <= ? AND snaps IS NOT NULL')
      .raw(true);
    const clearSnaps = db.prepare<[number]>('UPDATE objects SET snaps = NULL WHERE rowid = ?');
    const saveSnapshot = db.prepare<[number, number, number, string | null, Uint8Array]>(
      'INSERT OR REPLACE INTO snapshots (orow, ver, last, label, data) VALUES (?, ?, ?, ?, ?)',
    );
    // Snapshots whose every fix is before the cut (`last`: the latest fix time naming them).
    const pruneSnapshots = db.prepare<[string, string, string, number]>(
      'DELETE FROM snapshots WHERE orow IN (SELECT rowid FROM objects WHERE realm = ? AND id > ? AND id <= ?) AND last < ?',
    );
    return db.transaction((realm: string, after: string, before: string) => {
      const end = chunkEnd.get(realm, after, PRUNE_CHUNK_OBJECTS) ?? null;
      if (end === null) return { last: null, deleted: 0 };
      for (const [rowid, past] of heldPast.all(realm, after, end)) {
        this.chunks.add(rowid, decodePast(past));
        clearPast.run(rowid);
      }
      for (const [rowid, snaps] of heldSnaps.all(realm, after, end)) {
        for (const [v, last, label, data] of heldSnapshots(snaps)) saveSnapshot.run(rowid, v, last, label, encodeData(data));
        clearSnaps.run(rowid);
      }
      const cut = fixTime(before);
      const deleted = pruneCurrent.run(realm, after, end, before).changes + this.chunks.prune(realm, after, end, cut);
      pruneSnapshots.run(realm, after, end, cut);
      return { last: end, deleted };
    });
  }
}
