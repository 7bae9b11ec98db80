/**
 * The write path of objects: one batch of patches (a v1 frame, a REST bulk, a single
 * upsert) written inside its group's transaction (group-commit.ts), and deletes.
 *
 * A batch is folded (domain/object.ts foldPatches: one patch per id), then each object is
 * written with as few statements as its change needs:
 * - its old state comes from RecentObjects (an object written recently reads no row),
 *   else from its row (one statement for the batch's unread objects), unless the realm is
 *   importing new objects (then none is read: see guessNew);
 * - a new object is one INSERT; a tracker's location update is one UPDATE of the
 *   location's columns and the held past fixes (moveRow); any other change one UPDATE of
 *   the whole row (label and data encoded only when they changed);
 * - the past fixes wait in the row (`past`, history-rows.ts) and move to `history` as one
 *   chunk once PAST_BUFFER_FIXES of them are held (history-chunks.ts; chunks are appended,
 *   schema.ts version 15); snapshots of label and data likewise (`snaps`,
 *   snapshot-buffer.ts);
 * - the full-text indexer is told in the same transaction (search_queue): the rowid range
 *   of new objects, the text of objects whose words changed.
 *
 * What the batch wrote of each updated object is held in RecentObjects at once, for the
 * next write (of this group or later). A group that rolls back clears RecentObjects whole
 * (rare: callers validate first), so that it never holds what the file does not; the
 * spatial index and the realm keys follow only once the group has committed.
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { unknownRealm } from '../../errors.js';
import { isNested, sameDataValue } from '../../domain/data.js';
import { applyPatch, foldPatches } from '../../domain/object.js';
import type { FoldedPatch, ObjectChange, ObjectPatch, TrackedObject } from '../../domain/types.js';
import { locationExtra } from './current-fix.js';
import { encodeData } from './data-jsonb.js';
import type { HistoryChunks } from './history-chunks.js';
import { appendHeldPast, decodePast, fixTime, holdPast, pastBytes, pastCount, storedFix, versioned, type StoredFix } from './history-rows.js';
import type { LocationMove } from './location-index.js';
import type { RecentObject, RecentObjects } from './recent-objects.js';
import { objectFromRow, objectFromTuple, type HeldRow, type ObjectColumns, type ObjectRow, type ObjectStateRow } from './rows.js';
import { putBody, type PutItem } from './search-file.js';
import { sameSearchText } from './search-index.js';
import type { SearchIndexer } from './search-indexer.js';
import { appendSnapshot, heldSnapshots, SNAPSHOT_BUFFER_CHARS } from './snapshot-buffer.js';

/** A write waiting for its group commit. */
export interface QueuedUpsert {
  realm: string;
  patches: readonly ObjectPatch[];
  now: string;
}

/** What a write did, applied to the in-memory state once its group has committed. */
export interface UpsertWork {
  realm: string;
  /** The realm's key (search-index.ts), held once committed. */
  key: number;
  changes: ObjectChange[];
  /** The full-text indexer's queue entry and how many objects it holds. */
  queued: [number, number] | null;
  moves: LocationMove[];
}

/** What a delete did: the change, the row's rowid, and the full-text queue entry its trigger made. */
export interface DeletedObject {
  change: ObjectChange;
  rowid: number;
  queued: number;
}

/** A batch with this many objects not held in memory tells whether its realm is importing new objects. */
const GUESS_NEW_MIN = 64;

/** The share of new objects among them from which the next batches are guessed new. */
const GUESS_NEW_SHARE = 0.9;

/** A row's location columns (NULL without a location) and `seen`, bound as one array (see locationColumns). */
type LocationColumns = [lon: number | null, lat: number | null, locExtra: Uint8Array | null, locTime: string | null, seen: string | null];

/**
 * An object's location columns and `seen`, written into `into` (one array the writer holds,
 * so a write allocates none) and returned: better-sqlite3 binds an array argument's items as
 * as many parameters in turn. Bind it at once: locationExtra's value is valid until its next
 * call.
 */
function locationColumns(into: LocationColumns, object: TrackedObject): LocationColumns {
  const location = object.location;
  if (location === null) {
    into[0] = into[1] = into[2] = into[3] = null;
  } else {
    into[0] = location.longitude;
    into[1] = location.latitude;
    into[2] = locationExtra(location);
    into[3] = location.time;
  }
  into[4] = object.seen;
  return into;
}

/** The write path also reads the past fixes the row holds, its loc_pruned and its versions. */
const STATE_COLUMNS = 'rowid, id, label, lon, lat, loc_extra, loc_time, seen, json(data) AS data, tasks, past, loc_pruned, ver, loc_ver, ver_last, snaps';

/**
 * A row of STATE_COLUMNS read as an array (better-sqlite3's raw mode: no object with named
 * properties per row): rows.ts ObjectColumns, then the write path's columns.
 */
type StateTuple = [
  ...ObjectColumns,
  past: Uint8Array | null,
  locPruned: number,
  ver: number,
  locVer: number,
  verLast: number | null,
  snaps: string | null,
];

/** The statements of the write path, prepared once. */
class WriteStatements {
  readonly selectOne: Statement<[string, string], ObjectStateRow>;
  // The old rows of a whole batch in one statement: their rowids from the (realm, id)
  // index, then the rows in rowid order (the order of the table's pages), as arrays.
  readonly selectMany: Statement<[string, string], StateTuple>;
  readonly selectKey: Statement<[string], number>;
  // A realm's key prefixes its search words (search-index.ts); the indexer reads it.
  readonly ensureKey: Statement<[string]>;
  readonly selectRealm: Statement<[string], number>;
  // Data is written as JSONB, encoded here (data-jsonb.ts encodeData).
  readonly insert: Statement<[string, string, string | null, LocationColumns, Uint8Array, Uint8Array | null]>;
  // Updated in place (never INSERT OR REPLACE): the rowid, which the spatial and the
  // full-text index key on, stays the same for the object's whole life. Data NULL
  // keeps the stored JSONB (a location update encodes nothing).
  // loc_pruned * ?: 0 when the location changes (a new current fix), else kept.
  readonly update: Statement<[string | null, LocationColumns, Uint8Array | null, Uint8Array | null, number, number, number, number | null, string | null, number]>;
  // A tracker's usual write: a new current location, label and data as they were (about
  // 0.4 µs less than the general statement: fewer values bound, data not touched).
  // The new current fix names the row's version (ver_last NULL: see nextVersions).
  readonly moveRow: Statement<[number, number, Uint8Array | null, string, string | null, Uint8Array | null, number, number]>;
  // Task ids (schema.ts version 14), set only by a write that changes them: the other
  // statements leave the column as it is, so a tracker's writes bind nothing more.
  readonly setTasks: Statement<[string | null, number]>;
  // The snapshot of a version some fix names, before a write changes it (schema.ts version 12).
  readonly saveSnapshot: Statement<[number, number, number, string | null, Uint8Array]>;
  // The delete trigger queues the removal of the full-text entry.
  readonly deleteRow: Statement<[number]>;
  readonly deleteHistory: Statement<[number]>;
  readonly deleteSnapshots: Statement<[number]>;
  readonly lastQueued: Statement<[], number | null>;

  constructor(db: Database) {
    this.selectOne = db.prepare<[string, string], ObjectStateRow>(`SELECT ${STATE_COLUMNS} FROM objects WHERE realm = ? AND id = ?`);
    this.selectMany = db
      .prepare<[string, string], StateTuple>(
        `SELECT ${STATE_COLUMNS} FROM objects WHERE rowid IN (SELECT rowid FROM objects WHERE realm = ? AND id IN (SELECT value FROM json_each(?)))`,
      )
      .raw(true);
    this.selectKey = db.prepare<[string], number>('SELECT key FROM realm_keys WHERE realm = ?').pluck();
    this.ensureKey = db.prepare<[string]>('INSERT OR IGNORE INTO realm_keys (realm) VALUES (?)');
    this.selectRealm = db.prepare<[string], number>('SELECT 1 FROM realms WHERE id = ?').pluck();
    this.insert = db.prepare<[string, string, string | null, LocationColumns, Uint8Array, Uint8Array | null]>(
      'INSERT INTO objects (realm, id, label, lon, lat, loc_extra, loc_time, seen, data, past) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (realm, id) DO NOTHING',
    );
    this.update = db.prepare<[string | null, LocationColumns, Uint8Array | null, Uint8Array | null, number, number, number, number | null, string | null, number]>(
      'UPDATE objects SET label = ?, lon = ?, lat = ?, loc_extra = ?, loc_time = ?, seen = ?, data = coalesce(?, data), past = ?, loc_pruned = loc_pruned * ?, ver = ?, loc_ver = ?, ver_last = ?, snaps = ? WHERE rowid = ?',
    );
    this.moveRow = db.prepare<[number, number, Uint8Array | null, string, string | null, Uint8Array | null, number, number]>(
      'UPDATE objects SET lon = ?, lat = ?, loc_extra = ?, loc_time = ?, seen = ?, past = ?, loc_pruned = 0, loc_ver = ?, ver_last = NULL WHERE rowid = ?',
    );
    this.setTasks = db.prepare<[string | null, number]>('UPDATE objects SET tasks = ? WHERE rowid = ?');
    this.saveSnapshot = db.prepare<[number, number, number, string | null, Uint8Array]>(
      'INSERT OR REPLACE INTO snapshots (orow, ver, last, label, data) VALUES (?, ?, ?, ?, ?)',
    );
    this.deleteRow = db.prepare<[number]>('DELETE FROM objects WHERE rowid = ?');
    this.deleteHistory = db.prepare<[number]>('DELETE FROM history WHERE orow = ?');
    this.deleteSnapshots = db.prepare<[number]>('DELETE FROM snapshots WHERE orow = ?');
    this.lastQueued = db.prepare<[], number | null>('SELECT max(seq) FROM search_queue').pluck();
  }
}

/** What a write needs of an object's row, from a row read. */
function heldFromRow(row: ObjectStateRow): RecentObject {
  const held: HeldRow = {
    rowid: row.rowid,
    id: row.id,
    label: row.label,
    seen: row.seen,
    past: holdPast(row.past),
    loc_pruned: row.loc_pruned,
    ver: row.ver,
    loc_ver: row.loc_ver,
    ver_last: row.ver_last,
    snaps: row.snaps,
  };
  return { row: held, obj: objectFromRow(row) };
}

/** As heldFromRow, from a row read as an array. */
function heldFromTuple(row: StateTuple): RecentObject {
  const held: HeldRow = {
    rowid: row[0],
    id: row[1],
    label: row[2],
    seen: row[7],
    past: holdPast(row[10]),
    loc_pruned: row[11],
    ver: row[12],
    loc_ver: row[13],
    ver_last: row[14],
    snaps: row[15],
  };
  return { row: held, obj: objectFromTuple(row) };
}

/**
 * True when a write left the label and data as they were (nested values compared as JSON:
 * a write gives them as new objects). A tracker that sends the same data with every fix then
 * writes no snapshot.
 */
export function sameSnapshot(old: TrackedObject, next: TrackedObject): boolean {
  if (old.label !== next.label) return false;
  if (old.data === next.data) return true;
  const keys = Object.keys(next.data);
  if (keys.length !== Object.keys(old.data).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(old.data, key)) return false;
    const value = next.data[key];
    if (!Object.is(old.data[key], value) && !(isNested(value) && sameDataValue(old.data[key], value))) return false;
  }
  return true;
}

/**
 * The versions after a write (schema.ts version 13), into `state` (which holds the row's
 * before): this write's fixes name version `ver`. A change of label or data makes a new
 * version when some fix names the old one, whose snapshot is kept first (appended to
 * `snaps`, with the latest time of a fix naming it); else the old one is overwritten. The
 * current fix is the newest: while it names the row's version, its time is that latest
 * time, and `ver_last` stays NULL (a tracker's rows carry nothing more); only older fixes
 * naming a newer version set it. Returns whether a snapshot was kept.
 */
function nextVersions(state: HeldRow, old: TrackedObject, next: TrackedObject, fixes: FoldedPatch['fixes']): boolean {
  const oldLocVer = state.loc_ver;
  const previous = old.location;
  let kept = false;
  if (!sameSnapshot(old, next)) {
    const pinnedAt = oldLocVer === state.ver && previous !== null ? Math.max(state.ver_last ?? -Infinity, fixTime(previous.time)) : state.ver_last;
    if (pinnedAt !== null) {
      state.snaps = appendSnapshot(state.snaps, [state.ver, pinnedAt, old.label, old.data]);
      state.ver++;
      kept = true;
    }
    state.ver_last = null;
  }
  if (next.location !== previous) state.loc_ver = state.ver;
  if (state.loc_ver === state.ver && next.location !== null) {
    state.ver_last = null;
  } else {
    for (const fix of fixes) {
      const time = fixTime(fix.time);
      if (state.ver_last === null || time > state.ver_last) state.ver_last = time;
    }
  }
  return kept;
}

/**
 * The past fixes of a write, in order (history holds past fixes only, schema.ts version
 * 6: the current location is the row's): first the current location that a newer fix
 * replaced (`replaced`, with the version it named), then the batch's other fixes (a later
 * one of an equal time wins), but none at the current time. Null: none.
 */
function pastOfWrite(next: TrackedObject, fixes: FoldedPatch['fixes'], ver: number, replaced: StoredFix | null): StoredFix[] | null {
  const location = next.location;
  const currentTime = location === null ? null : location.time;
  let past: StoredFix[] | null = replaced === null ? null : [replaced];
  for (const fix of fixes) {
    if (fix === location || fix.time === currentTime) continue;
    (past ??= []).push(versioned(storedFix(fix), ver));
  }
  return past;
}

/** One batch being written: its realm, and what its objects' writes gather. */
class BatchWrite {
  /** The old state of the batch's objects that exist (from memory or their rows). */
  readonly olds = new Map<string, RecentObject>();
  /** Ids not held in memory. */
  readonly unread: string[] = [];
  /** The changes by the index of their patch (objects are written in another order: see writeAll). */
  readonly changes: (ObjectChange | undefined)[] = [];
  /** The index of the patch being written. */
  at = 0;
  readonly moves: LocationMove[] = [];
  /**
   * Objects whose full-text entry the indexer (re)writes (search-file.ts putItem), and the
   * rowids of the new ones, which it reads from their rows (a range: rowids of one
   * transaction's inserts follow each other).
   */
  readonly toIndex: PutItem[] = [];
  firstNew = 0;
  lastNew = -1;
  inserted = 0;

  constructor(
    readonly realm: string,
    readonly key: number,
    readonly now: string,
    /** When the indexer is far behind (this write is about to wait for it anyway): new objects' text goes to it, which spares it reading their rows. */
    readonly textForNew: boolean,
  ) {}
}

export interface ObjectWritesOptions {
  /** Past fixes an object row holds before they move to `history`. */
  bufferFixes: number;
  /** How far behind (object rowids) the full-text indexer must be for writes to send it the text of new objects. */
  textForNewBehind: number;
  /**
   * Other processes write the file too (store-owner.ts `shared`): a realm whose key is not
   * held is checked to exist before a write (another process may have deleted it; its key
   * is dropped with the others when that commit is seen).
   */
  shared: boolean;
}

export class ObjectWrites {
  private readonly s: WriteStatements;
  /**
   * Realm keys (realm_keys) as committed: a write reads none from the file once its realm
   * has one. Keys are never reused; a realm's goes with the realm, and all go when another
   * connection commits to the file.
   */
  readonly keys = new Map<string, number>();
  /**
   * Realms this store deleted since it opened: the next write for one first checks that it
   * exists again. A write that waited (room(), or its service's realm check) while its
   * realm was deleted would otherwise give the realm a new search key and leave its rows
   * behind, in no realm.
   */
  private readonly deletedRealms = new Set<string>();
  /** Realms whose last batch of at least GUESS_NEW_MIN unread objects held mostly new ones (see readOlds). */
  private readonly newObjects = new Map<string, boolean>();
  /** The location columns of the row being written (locationColumns fills it for each). */
  private readonly located: LocationColumns = [null, null, null, null, null];
  private readonly deleteTx: Transaction<(realm: string, id: string, now: string, begin: () => void) => DeletedObject | null>;

  constructor(
    db: Database,
    private readonly indexer: SearchIndexer,
    private readonly chunks: HistoryChunks,
    private readonly recent: RecentObjects,
    private readonly options: ObjectWritesOptions,
  ) {
    this.s = new WriteStatements(db);
    this.deleteTx = db.transaction((realm: string, id: string, now: string, begin: () => void) => {
      begin();
      return this.deleteNow(realm, id, now);
    });
  }

  /** One batch, inside its group's transaction. */
  write({ realm, patches, now }: QueuedUpsert): UpsertWork {
    const batch = new BatchWrite(realm, this.realmKey(realm), now, this.indexer.behind >= this.options.textForNewBehind);
    const folded = foldPatches(patches);
    const guessNew = this.readOlds(batch, folded);
    this.writeAll(batch, folded);
    // A large batch of mostly new objects turns the guess on; any batch it was wrong for
    // (however small) turns it off.
    const unread = batch.unread.length;
    const mostlyNew = batch.inserted >= unread * GUESS_NEW_SHARE;
    if (guessNew ? !mostlyNew : unread >= GUESS_NEW_MIN && mostlyNew) this.newObjects.set(realm, mostlyNew);
    const changes: ObjectChange[] = [];
    for (const change of batch.changes) if (change !== undefined) changes.push(change);
    return { realm, key: batch.key, changes, queued: this.queueIndex(batch), moves: batch.moves };
  }

  /** A realm was deleted: a later write for it checks that it exists again. */
  forgetRealm(realm: string): void {
    this.keys.delete(realm);
    this.deletedRealms.add(realm);
    this.newObjects.delete(realm);
  }

  /**
   * Deletes an object in a transaction of its own (the caller has run the queued writes
   * first); `begin` runs first in the transaction (as GroupCommit's does).
   */
  delete(realm: string, id: string, now: string, begin: () => void): DeletedObject | null {
    // IMMEDIATE: the write lock before the reads (see group-commit.ts).
    return this.deleteTx.immediate(realm, id, now, begin);
  }

  private deleteNow(realm: string, id: string, now: string): DeletedObject | null {
    const row = this.s.selectOne.get(realm, id) as ObjectRow | undefined;
    if (row === undefined) return null;
    this.s.deleteRow.run(row.rowid);
    this.s.deleteHistory.run(row.rowid);
    this.s.deleteSnapshots.run(row.rowid);
    const change: ObjectChange = { realm, id, old: objectFromRow(row), new: null, history: [], time: now };
    // The trigger queued the entry's removal: the last entry queued.
    return { change, rowid: row.rowid, queued: Number(this.s.lastQueued.get() ?? 0) };
  }

  /** The realm's search key, created with its first object (a deleted realm must exist again). */
  private realmKey(realm: string): number {
    const known = this.keys.get(realm);
    if (known !== undefined) return known;
    if (this.options.shared || this.deletedRealms.has(realm)) {
      if (this.s.selectRealm.get(realm) === undefined) throw unknownRealm(realm);
      this.deletedRealms.delete(realm);
    }
    this.s.ensureKey.run(realm);
    const key = this.s.selectKey.get(realm);
    if (key === undefined) throw new Error('realm key missing after insert');
    return key;
  }

  /**
   * The old state of the batch's objects: recently updated ones from memory, the others'
   * rows. A bulk import of new objects reads no rows: while the realm's last large batches
   * were mostly new objects, each one is inserted as new (INSERT that does nothing on an
   * existing id), and only one that exists is read (see insertObject). The read of a
   * batch's rows probed the id index once per object, as the insert does again. Returns
   * whether the batch is guessed new.
   */
  private readOlds(batch: BatchWrite, folded: readonly FoldedPatch[]): boolean {
    const { realm, olds, unread } = batch;
    for (const patch of folded) {
      const recent = this.recent.get(realm, patch.id);
      if (recent === undefined) unread.push(patch.id);
      else olds.set(patch.id, recent);
    }
    const guessNew = unread.length > 1 && this.newObjects.get(realm) === true;
    if (unread.length === 1) {
      const row = this.s.selectOne.get(realm, unread[0] as string);
      if (row !== undefined) olds.set(row.id, heldFromRow(row));
    } else if (unread.length > 1 && !guessNew) {
      for (const row of this.s.selectMany.all(realm, JSON.stringify(unread))) olds.set(row[1], heldFromTuple(row));
    }
    return guessNew;
  }

  /** Reads an object's row into the batch's old state; false when it does not exist. */
  private readOne(batch: BatchWrite, id: string): boolean {
    const row = this.s.selectOne.get(batch.realm, id);
    if (row === undefined) return false;
    batch.olds.set(id, heldFromRow(row));
    return true;
  }

  /**
   * Writes the batch's objects: those that exist in the order of their rowids (the order of
   * the table's pages), then the others (new ones) in the order given (their rowids follow it). A
   * batch of updates of objects on random pages then reads and changes the pages front to
   * back, and the b-tree descents share their interior pages. Objects are independent
   * rows, so the order changes nothing but speed; changes keep the order of the patches.
   */
  private writeAll(batch: BatchWrite, folded: readonly FoldedPatch[]): void {
    if (folded.length === 1) {
      this.writeObject(batch, folded[0] as FoldedPatch);
      return;
    }
    const { olds } = batch;
    const n = folded.length;
    // Existing objects as rowid × n + index: a typed array sorts them without a comparator
    // (several times faster). The key is exact below 2^53; an object whose rowid is too
    // large for that (none, in practice: rowids count up from 1) is written unsorted.
    const limit = Number.MAX_SAFE_INTEGER / n - 1;
    const keys = new Float64Array(n);
    const others: number[] = [];
    let existing = 0;
    for (let i = 0; i < n; i++) {
      const held = olds.get((folded[i] as FoldedPatch).id);
      if (held !== undefined && held.row.rowid < limit) keys[existing++] = held.row.rowid * n + i;
      else others.push(i);
    }
    for (const key of keys.subarray(0, existing).sort()) this.writeAt(batch, folded, key % n);
    for (const i of others) this.writeAt(batch, folded, i);
  }

  private writeAt(batch: BatchWrite, folded: readonly FoldedPatch[], i: number): void {
    batch.at = i;
    this.writeObject(batch, folded[i] as FoldedPatch);
  }

  private writeObject(batch: BatchWrite, patch: FoldedPatch): void {
    let held = batch.olds.get(patch.id);
    if (held === undefined && patch.mustExist === true) {
      // An update of an object that must exist (v1 `obj upd`): unread only when guessed
      // new. A missing one is skipped: no change for it (the caller answers 404), and the
      // batch's other patches are written.
      if (!this.readOne(batch, patch.id)) return;
      held = batch.olds.get(patch.id);
    }
    if (held === undefined) this.insertObject(batch, patch);
    else this.updateObject(batch, patch, held);
  }

  /** A new object, unless guessNew was wrong: then its row is read and it is updated. */
  private insertObject(batch: BatchWrite, patch: FoldedPatch): void {
    const { realm, now } = batch;
    const next = applyPatch(null, patch, now);
    const location = next.location;
    // Version 0, named by its fixes, the newest of which is the current one (ver_last NULL).
    const past = pastOfWrite(next, patch.fixes, 0, null);
    const toHistory = past !== null && past.length >= this.options.bufferFixes ? past : null;
    const held = past === null || toHistory !== null ? null : appendHeldPast(null, past);
    // locationExtra's and encodeData's values are valid until their next calls: bound at once.
    const result = this.s.insert.run(realm, patch.id, next.label, locationColumns(this.located, next), encodeData(next.data), pastBytes(held));
    if (result.changes === 0) {
      if (!this.readOne(batch, patch.id)) throw new Error(`object ${patch.id} neither inserted nor found`);
      this.updateObject(batch, patch, batch.olds.get(patch.id) as RecentObject);
      return;
    }
    batch.inserted++;
    const rowid = Number(result.lastInsertRowid);
    if (next.tasks !== undefined) this.s.setTasks.run(JSON.stringify(next.tasks), rowid);
    if (location !== null) batch.moves.push([rowid, location.longitude, location.latitude]);
    if (batch.textForNew) batch.toIndex.push([rowid, batch.key, patch.id, next.label, next.data]);
    else if (batch.lastNew < batch.firstNew) batch.firstNew = batch.lastNew = rowid;
    else if (rowid === batch.lastNew + 1) batch.lastNew = rowid;
    else batch.toIndex.push([rowid, batch.key, patch.id, next.label, next.data]);
    if (toHistory !== null) this.chunks.add(rowid, toHistory);
    // New objects are not held for their next write: a bulk import of new objects would
    // only push the trackers' entries out and leave the garbage collector tens of
    // thousands of objects to carry (about 6% of the time of such a batch). A new
    // object's second write reads its row, and the ones after it do not.
    batch.changes[batch.at] = { realm, id: patch.id, old: null, new: next, history: patch.fixes, time: now };
  }

  /** An object that exists: its row updated in place, its state held for its next write. */
  private updateObject(batch: BatchWrite, patch: FoldedPatch, held: RecentObject): void {
    const { realm, now } = batch;
    const { row, obj: old } = held;
    const next = applyPatch(old, patch, now);
    const location = next.location;
    const previous = old.location;
    const moved = location !== previous;
    // The row's state after this write, built from its state before.
    const state: HeldRow = {
      rowid: row.rowid,
      id: patch.id,
      label: next.label,
      seen: next.seen,
      past: row.past,
      loc_pruned: moved ? 0 : row.loc_pruned,
      ver: row.ver,
      loc_ver: row.loc_ver,
      ver_last: row.ver_last,
      snaps: row.snaps,
    };
    if (nextVersions(state, old, next, patch.fixes) && (state.snaps as string).length >= SNAPSHOT_BUFFER_CHARS) {
      // Kept snapshots wait in the row until they fill its buffer.
      for (const [v, last, label, data] of heldSnapshots(state.snaps)) this.s.saveSnapshot.run(row.rowid, v, last, label, encodeData(data));
      state.snaps = null;
    }
    // The current location a newer fix replaced, unless that fix has its time (the later
    // write wins) or retention pruned it.
    const replaced =
      previous !== null && moved && previous.time !== location?.time && row.loc_pruned === 0 ? versioned(storedFix(previous), row.loc_ver) : null;
    const past = pastOfWrite(next, patch.fixes, state.ver, replaced);
    // The past fixes join those the row holds (schema.ts version 8); once there are
    // bufferFixes, all of them move to `history`.
    let toHistory: StoredFix[] | null = null;
    if (past !== null) {
      if (pastCount(row.past) + past.length >= this.options.bufferFixes) {
        toHistory = row.past === null ? past : [...decodePast(row.past), ...past];
        state.past = null;
      } else {
        state.past = appendHeldPast(row.past, past);
      }
    }
    this.writeRow(state, old, next);
    if (next.tasks !== old.tasks) this.s.setTasks.run(next.tasks === undefined ? null : JSON.stringify(next.tasks), row.rowid);
    if (moved) batch.moves.push([row.rowid, location?.longitude ?? null, location?.latitude ?? null]);
    if (!sameSearchText(old, next)) batch.toIndex.push([row.rowid, batch.key, patch.id, next.label, next.data]);
    // In write order (a later fix of an equal time wins).
    if (toHistory !== null) this.chunks.add(row.rowid, toHistory);
    this.recent.set(realm, patch.id, { row: state, obj: next });
    batch.changes[batch.at] = { realm, id: patch.id, old, new: next, history: patch.fixes, time: now };
  }

  /**
   * The row's UPDATE: a tracker's move (same label and data, a new current fix) binds the
   * location and the held past only; any other change the whole row. Unchanged data
   * (mergeData returns the same object) keeps what is stored; changed data is written as
   * JSONB encoded here (data-jsonb.ts).
   */
  private writeRow(state: HeldRow, old: TrackedObject, next: TrackedObject): void {
    const location = next.location;
    const sameData = next.data === old.data;
    // locationExtra's and encodeData's values are valid until their next calls: bound at once.
    if (sameData && location !== null && location !== old.location && next.label === old.label) {
      this.s.moveRow.run(location.longitude, location.latitude, locationExtra(location), location.time, next.seen, pastBytes(state.past), state.loc_ver, state.rowid);
      return;
    }
    this.s.update.run(
      next.label,
      locationColumns(this.located, next),
      sameData ? null : encodeData(next.data),
      pastBytes(state.past),
      location === old.location ? 1 : 0,
      state.ver,
      state.loc_ver,
      state.ver_last,
      state.snaps,
      state.rowid,
    );
  }

  /** Queues the batch's full-text work; the last entry queued and the objects of all of them (the indexer applies entries in order). */
  private queueIndex(batch: BatchWrite): [number, number] | null {
    let queued: [number, number] | null = null;
    if (batch.lastNew >= batch.firstNew) queued = [this.indexer.queue('rows', [batch.firstNew, batch.lastNew]), batch.lastNew - batch.firstNew + 1];
    if (batch.toIndex.length > 0) queued = [this.indexer.queue('put', putBody(batch.toIndex)), batch.toIndex.length + (queued?.[1] ?? 0)];
    return queued;
  }
}
