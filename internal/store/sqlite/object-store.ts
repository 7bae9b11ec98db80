/**
 * Objects in SQLite: writes (the batch path is the bulk-ingest hot path), lists with
 * filters and shapes pushed down to the indexes, full-text search and location history.
 *
 * Indexes: the (realm, id) unique index serves id order and paging; the FTS5 table
 * `object_fts` in the search file serves search, kept current by a worker thread from
 * what each write queues in its transaction (search-indexer.ts; the delete trigger queues
 * a deleted row); the spatial index is in memory (location-index.ts: a grid of current
 * locations per realm), updated after each commit.
 *
 * A shape query first finds its hits in the grid: the points in the cells of the
 * shape's boxes (queryBoxes: shapeBounds, a polygon's box cut into slabs) that pass the
 * exact test of internal/geo (compileShape). Then one SQL statement in one of two plans:
 * - spatial: the hits' rows, by rowid, filtered (realm, id range, filter) and sorted by
 *   id. Best when the shape holds few objects, which is every shape that is small next
 *   to the realm.
 * - ordered: the (realm, id) index in id order, rows whose lon/lat fall in a box and pass
 *   the same exact test (run inside the statement as the SQL function locus_inside),
 *   filtered. Best when the shape holds a large share of the realm: the page fills after
 *   about limit / share rows, and nothing is sorted.
 * The count of hits, capped, picks the plan (see spatialCandidateCap).
 */
import type { Database, Statement, Transaction } from 'better-sqlite3';
import { invalid, unknownRealm } from '../../errors.js';
import { compareCodePoints } from '../../domain/filter.js';
import { applyPatch, foldPatches } from '../../domain/object.js';
import type { BBox, Data, FoldedPatch, Location, ObjectChange, ObjectPatch, TrackedObject } from '../../domain/types.js';
import { compileShape, type PointTest } from '../../geo/contains.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { HistoryEntry, HistoryQuery, ObjectListQuery, ObjectStore, Page, SearchHit, SearchQuery } from '../port.js';
import { compileFilter, dataPath } from './filter-sql.js';
import { completeLocation, locationExtra } from './current-fix.js';
import { encodeData } from './data-jsonb.js';
import { OBJECT_TUPLE_COLUMNS, objectFromRow, objectFromTuple, type HeldRow, type ObjectRow, type ObjectStateRow, type ObjectTuple } from './rows.js';
import { searchMatch, sameSearchText } from './search-index.js';
import { putBody, type PutItem } from './search-file.js';
import { MAX_BACKLOG_ROWIDS, type SearchIndexer } from './search-indexer.js';
import { LocationIndex, type LocationMove } from './location-index.js';
import { RecentObjects, type RecentObject } from './recent-objects.js';
import { queryBoxes } from './query-boxes.js';
import {
  appendHeldPast,
  CHUNK_LIMITS,
  decodePast,
  fixFromRow,
  fixTime,
  fixVersion,
  holdPast,
  PAST_BUFFER_FIXES,
  pastBytes,
  pastCount,
  storedFix,
  type ChunkLimits,
  type HistoryBound,
  type StoredFix,
  versioned,
  withinBounds,
  withinLimits,
} from './history-rows.js';
import { HistoryChunks } from './history-chunks.js';
import { appendSnapshot, heldSnapshots, SNAPSHOT_BUFFER_CHARS } from './snapshot-buffer.js';
import { isWriteSpecific, settle, translateSqliteError } from './sqlite-errors.js';
import { GroupCommit } from './group-commit.js';

const MAX_PAGE = 10_000;

/**
 * The spatial plan is used while the shape holds fewer hits than this (counted up to the
 * cap). Its cost grows with the hits (each row is read, filtered and sorted: a few µs
 * each at a million objects); the ordered plan's with the rows it walks, about limit ×
 * (objects in the realm) / hits. The two meet near √(limit × realm size) hits, tens of
 * thousands for a million-object realm; this fixed cap approximates that without
 * counting the realm.
 */
export function spatialCandidateCap(limit: number): number {
  return Math.max(5_000, 20 * (limit + 1));
}

/** Statements of one SQL text are prepared once and kept (queries differ by their filter's form). */
const STATEMENT_CACHE_SIZE = 256;

/** `objects.data` is JSONB (schema.ts version 5); json() gives back the JSON text written. `tasks`: JSON text or NULL (version 14). */
const OBJECT_COLUMNS = 'o.rowid, o.id, o.label, o.lon, o.lat, o.loc_extra, o.loc_time, o.seen, json(o.data), o.tasks';

/**
 * The columns a list reads: whole objects, or (with a projection) what the projection needs:
 * with named fields, only their values, read from the JSONB as a JSON array (`->` keeps
 * each value's JSON type; null for an absent key, which data never holds otherwise), not
 * the whole data as text to parse and cut in JavaScript (a combined query of 560 objects:
 * about 1 ms less). Its parameters (projectionParams) come first in the statement.
 */
function listColumns(fields: string[] | null | undefined): string {
  if (fields === undefined) return OBJECT_COLUMNS;
  // No task ids either (a projection shows none): NULL in their column.
  const base = 'o.rowid, o.id, o.label, NULL, NULL, NULL, NULL, o.seen';
  if (fields === null || fields.length === 0) return `${base}, NULL, NULL`;
  return `${base}, json_array(${fields.map(() => 'o.data -> ?').join(', ')}), NULL`;
}

/** The parameters of listColumns: the JSON path of each named field. */
function projectionParams(fields: string[] | null | undefined): string[] {
  return fields === undefined || fields === null ? [] : fields.map(dataPath);
}

/** Converts a list row; with a projection, data keeps only the named fields (in their order). */
function projector(fields: string[] | null | undefined): (row: ObjectTuple) => TrackedObject {
  if (fields === undefined) return objectFromTuple;
  // No data (fields null or empty): nothing to parse.
  if (fields === null || fields.length === 0) return (row) => ({ id: row[1], label: row[2], location: null, data: {}, seen: row[7] });
  return (row) => {
    const values = JSON.parse(row[8]) as (string | number | boolean | null)[];
    const kept: [string, string | number | boolean][] = [];
    fields.forEach((field, i) => {
      const value = values[i];
      if (value !== null && value !== undefined) kept.push([field, value]);
    });
    // Object.fromEntries defines each key as an own property (`__proto__` included).
    return { id: row[1], label: row[2], location: null, data: Object.fromEntries(kept), seen: row[7] };
  };
}

/** The SQL term of the exact test (a function registered by SqliteObjectStore). */
const INSIDE = 'locus_inside(o.lon, o.lat)';
const outside: PointTest = () => false;

type ObjectValues = [
  label: string | null,
  lon: number | null,
  lat: number | null,
  locExtra: Uint8Array | null,
  locTime: string | null,
  seen: string | null,
];

/** Validates a page limit and returns the id after which the page starts ('' sorts before every id). */
export function pageStart(query: { limit: number; cursor?: string }): string {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE) {
    throw invalid(`limit must be an integer from 1 to ${MAX_PAGE}`, 'invalid_query');
  }
  return query.cursor === undefined ? '' : decodeCursor(query.cursor);
}

/** Builds a page from up to limit + 1 items: the extra one only says that more remain. */
export function toPage<R, T>(rows: R[], limit: number, convert: (row: R) => T, key: (row: R) => string): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(convert), next: more && last !== undefined ? encodeCursor(key(last)) : null };
}

const tupleId = (row: ObjectTuple): string => row[1];
const NORMALISED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const emptyPage = <T>(): Page<T> => ({ items: [], next: null });
/** A time of the normalised form that names a real instant (no month 13). */
const isoTimeExists = (time: string): boolean => {
  const ms = fixTime(time);
  return !Number.isNaN(ms) && new Date(ms).toISOString() === time;
};

/** `o.lon`/`o.lat` inside one of the boxes (exact doubles: the boxes cover every accepted point). */
function boxesSql(boxes: readonly BBox[], params: (string | number)[]): string {
  const parts = boxes.map((box) => {
    params.push(box.minLon, box.maxLon, box.minLat, box.maxLat);
    return '(o.lon BETWEEN ? AND ? AND o.lat BETWEEN ? AND ?)';
  });
  return `(${parts.join(' OR ')})`;
}

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
}

export class SqliteObjectStore implements ObjectStore {
  private readonly statements = new Map<string, Statement>();
  private readonly spatialCap: (limit: number) => number;
  private readonly selectOne: Statement<[string, string], ObjectStateRow>;
  private readonly selectObject: Statement<[string, string], ObjectRow>;
  private readonly selectKey: Statement<[string], { key: number }>;
  /** One write, within a group's transaction. */
  private readonly upsertNow: (write: QueuedUpsert) => UpsertWork;
  /** Writes of one turn of the event loop share a transaction (group-commit.ts). */
  private readonly writes: GroupCommit<QueuedUpsert, UpsertWork, ObjectChange[]>;
  /** The state written by the group being run, for its later writes (committed or dropped with it). */
  private readonly staged = new RecentObjects(Number.MAX_SAFE_INTEGER);
  /**
   * Realm keys (realm_keys) as committed: a write reads none from the file once its realm
   * has one. Keys are never reused; a realm's goes with the realm, and all go when another
   * connection commits to the file.
   */
  private readonly keys = new Map<string, number>();
  /**
   * Realms this store deleted since it opened: the next write for one first checks that it
   * exists again. A write that waited (room(), or its service's realm check) while its
   * realm was deleted would otherwise give the realm a new search key and leave its rows
   * behind, in no realm.
   */
  private readonly deletedRealms = new Set<string>();
  /** Realms whose last batch of at least GUESS_NEW_MIN unread objects held mostly new ones (guessNew in upsertNow). */
  private readonly newObjects = new Map<string, boolean>();
  private readonly deleteTx: Transaction<(realm: string, id: string, now: string) => { change: ObjectChange; rowid: number; queued: number } | null>;
  /** The spatial index (in memory, per realm), kept current after each committed write. */
  readonly locations: LocationIndex;
  /** Recently updated objects, so that their next write reads no row. */
  readonly recent = new RecentObjects();
  private readonly selectVersion: Statement<[], number>;
  private version: number;
  private readonly pruneChunkTx: Transaction<(realm: string, after: string, before: string) => { last: string | null; deleted: number }>;
  private readonly listTx: (realm: string, query: ObjectListQuery) => Page<TrackedObject>;
  private readonly selectHistoryOwner: Statement<[string, string], HistoryOwner>;
  private readonly historyTx: (realm: string, id: string, query: HistoryQuery) => Page<HistoryEntry>;
  private readonly selectSnapshot: Statement<[number, number], [string | null, string]>;
  /** Past fixes in `history`. */
  private readonly chunks: HistoryChunks;
  /** The last write that waited for the indexer's room (upsertMany): later ones wait behind it. */
  private roomTurn: Promise<void> | null = null;

  /** The exact test of the shape query being answered (see listNow). */
  private inside: PointTest = outside;

  constructor(
    private readonly db: Database,
    private readonly indexer: SearchIndexer,
    options: ObjectStoreOptions = {},
  ) {
    this.spatialCap = options.spatialCap ?? spatialCandidateCap;
    this.locations = new LocationIndex(db);
    this.selectVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
    this.version = this.selectVersion.get() ?? 0;
    // internal/geo decides "inside", called from SQL so that only hits are sorted and read.
    db.function('locus_inside', { deterministic: false }, (lon: unknown, lat: unknown) =>
      typeof lon === 'number' && typeof lat === 'number' && this.inside(lon, lat) ? 1 : 0,
    );
    // The write path also reads the past fixes the row holds and its loc_pruned.
    const columns = 'rowid, id, label, lon, lat, loc_extra, loc_time, seen, json(data) AS data, tasks, past, loc_pruned, ver, loc_ver, ver_last, snaps';
    this.selectOne = db.prepare(`SELECT ${columns} FROM objects WHERE realm = ? AND id = ?`);
    // A read of the object alone (GET): not its held past fixes.
    this.selectObject = db.prepare('SELECT rowid, id, label, lon, lat, loc_extra, loc_time, seen, json(data) AS data, tasks FROM objects WHERE realm = ? AND id = ?');
    // The old rows of a whole batch in one statement (an index probe per id).
    const selectMany = db.prepare<[string, string], ObjectStateRow>(
      `SELECT ${columns} FROM objects WHERE realm = ? AND id IN (SELECT value FROM json_each(?))`,
    );
    this.selectKey = db.prepare('SELECT key FROM realm_keys WHERE realm = ?');
    // A realm's key prefixes its search words (search-index.ts); the indexer reads it.
    const ensureKey = db.prepare<[string]>('INSERT OR IGNORE INTO realm_keys (realm) VALUES (?)');
    const selectRealm = db.prepare<[string], number>('SELECT 1 FROM realms WHERE id = ?').pluck();
    // Data is written as JSONB, encoded here (data-jsonb.ts encodeData).
    const insert = db.prepare<[string, string, ...ObjectValues, Uint8Array, Uint8Array | null]>(
      'INSERT INTO objects (realm, id, label, lon, lat, loc_extra, loc_time, seen, data, past) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (realm, id) DO NOTHING',
    );
    // Updated in place (never INSERT OR REPLACE): the rowid, which the spatial and the
    // full-text index key on, stays the same for the object's whole life. Data NULL
    // keeps the stored JSONB (a location update encodes nothing).
    // loc_pruned * ?: 0 when the location changes (a new current fix), else kept.
    const update = db.prepare<[...ObjectValues, Uint8Array | null, Uint8Array | null, number, number, number, number | null, string | null, number]>(
      'UPDATE objects SET label = ?, lon = ?, lat = ?, loc_extra = ?, loc_time = ?, seen = ?, data = coalesce(?, data), past = ?, loc_pruned = loc_pruned * ?, ver = ?, loc_ver = ?, ver_last = ?, snaps = ? WHERE rowid = ?',
    );
    // A tracker's usual write: a new current location, label and data as they were (about
    // 0.4 µs less than the general statement: fewer values bound, data not touched).
    // The new current fix names the row's version (ver_last NULL: see upsertNow).
    const moveRow = db.prepare<[number, number, Uint8Array | null, string, string | null, Uint8Array | null, number, number]>(
      'UPDATE objects SET lon = ?, lat = ?, loc_extra = ?, loc_time = ?, seen = ?, past = ?, loc_pruned = 0, loc_ver = ?, ver_last = NULL WHERE rowid = ?',
    );
    // Task ids (schema.ts version 14), set only by a write that changes them: the other
    // statements leave the column as it is, so a tracker's writes bind nothing more.
    const setTasks = db.prepare<[string | null, number]>('UPDATE objects SET tasks = ? WHERE rowid = ?');
    // The snapshot of a version some fix names, before a write changes it (schema.ts version 12).
    const saveSnapshot = db.prepare<[number, number, number, string | null, Uint8Array]>(
      'INSERT OR REPLACE INTO snapshots (orow, ver, last, label, data) VALUES (?, ?, ?, ?, ?)',
    );
    // A later fix of an equal time replaces the stored one (history-chunks.ts).
    this.chunks = new HistoryChunks(db, options.chunks ?? CHUNK_LIMITS);
    const bufferFixes = Math.max(1, Math.floor(options.pastBuffer ?? PAST_BUFFER_FIXES));
    const textForNewBehind = options.textForNewBehind ?? TEXT_FOR_NEW_BEHIND;
    // The delete trigger queues the removal of the full-text entry.
    const deleteRow = db.prepare<[number]>('DELETE FROM objects WHERE rowid = ?');
    const deleteHistory = db.prepare<[number]>('DELETE FROM history WHERE orow = ?');
    const deleteSnapshots = db.prepare<[number]>('DELETE FROM snapshots WHERE orow = ?');
    const lastQueued = db.prepare<[], number | null>('SELECT max(seq) FROM search_queue').pluck();

    this.upsertNow = ({ realm, patches, now }: QueuedUpsert): UpsertWork => {
      const moves: LocationMove[] = [];
      let key = this.keys.get(realm);
      if (key === undefined) {
        if (this.deletedRealms.has(realm)) {
          if (selectRealm.get(realm) === undefined) throw unknownRealm(realm);
          this.deletedRealms.delete(realm);
        }
        ensureKey.run(realm);
        key = this.selectKey.get(realm)?.key;
        if (key === undefined) throw new Error('realm key missing after insert');
      }
      const batch = foldPatches(patches);
      // The old state: recently updated objects from memory (as an earlier write of this
      // group left them, else as committed), the others' rows.
      const olds = new Map<string, RecentObject>();
      const unread: string[] = [];
      for (const folded of batch) {
        const recent = this.staged.get(realm, folded.id) ?? this.recent.get(realm, folded.id);
        if (recent === undefined) unread.push(folded.id);
        else olds.set(folded.id, recent);
      }
      const read = (row: ObjectStateRow): void => {
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
        olds.set(row.id, { row: held, obj: objectFromRow(row) });
      };
      // A bulk import of new objects reads no rows: while the realm's last large batches
      // were mostly new objects, each one is inserted as new (INSERT that does nothing on
      // an existing id), and only one that exists is read (see insertedOrRead). The read of a
      // batch's rows probed the id index once per object, as the insert does again.
      const guessNew = unread.length > 1 && this.newObjects.get(realm) === true;
      if (unread.length === 1) {
        const row = this.selectOne.get(realm, unread[0] as string);
        if (row !== undefined) read(row);
      } else if (unread.length > 1 && !guessNew) {
        for (const row of selectMany.all(realm, JSON.stringify(unread))) read(row);
      }
      let inserted = 0;
      const written: [string, RecentObject][] = [];

      const changes: ObjectChange[] = [];
      // Objects whose full-text entry the indexer (re)writes (search-file.ts putItem), and
      // the rowids of the new ones, which it reads from their rows (a range: rowids of
      // one transaction's inserts follow each other). When the indexer is far behind, this
      // write is about to wait for it anyway: it then builds the new objects' text itself,
      // which spares the indexer reading their rows.
      const toIndex: PutItem[] = [];
      let firstNew = 0;
      let lastNew = -1;
      const textForNew = this.indexer.behind >= textForNewBehind;
      const writeOne = (folded: FoldedPatch): void => {
        const held = olds.get(folded.id);
        if (held === undefined && folded.mustExist === true) {
          // An update of an object that must exist (v1 `obj upd`): unread only when guessed
          // new. A missing one is skipped: no change for it (the caller answers 404), and the
          // batch's other patches are written.
          const existing = this.selectOne.get(realm, folded.id);
          if (existing === undefined) return;
          read(existing);
          writeOne(folded);
          return;
        }
        const row = held?.row;
        const old = held?.obj ?? null;
        const next = applyPatch(old, folded, now);

        // History holds past fixes only (schema.ts version 6): the current location is the
        // row's. The past fixes of this write, in order: first the current location that a
        // newer fix replaced (unless that fix has its time: the later write wins; and
        // unless retention pruned it), then this batch's other fixes (a later one of an
        // equal time wins), but none at the current time. They join those the row holds
        // (version 8); once there are bufferFixes, all of them move to `history`.
        const location = next.location;
        const currentTime = location === null ? null : location.time;
        const previous = old === null ? null : old.location;

        // Snapshots (schema.ts version 12): this write's fixes name version `ver`. A change
        // of label or data makes a new version when some fix names the old one, whose
        // snapshot is kept first (with the latest time of a fix naming it); else the old
        // one is overwritten. The current fix is the newest: while it names the row's
        // version, its time is that latest time, and `ver_last` stays NULL (a tracker's
        // rows carry nothing more); only older fixes naming a newer version set it.
        const oldLocVer = row === undefined ? 0 : row.loc_ver;
        let ver = row === undefined ? 0 : row.ver;
        let verLast = row === undefined ? null : row.ver_last;
        // Kept snapshots wait in the row (snapshot-buffer.ts) until they fill its buffer.
        let snaps = row === undefined ? null : row.snaps;
        if (row !== undefined && old !== null && !sameSnapshot(old, next)) {
          const pinnedAt = oldLocVer === ver && previous !== null ? Math.max(verLast ?? -Infinity, fixTime(previous.time)) : verLast;
          if (pinnedAt !== null) {
            snaps = appendSnapshot(snaps, [ver, pinnedAt, old.label, old.data]);
            if (snaps.length >= SNAPSHOT_BUFFER_CHARS) {
              for (const [v, last, label, data] of heldSnapshots(snaps)) saveSnapshot.run(row.rowid, v, last, label, encodeData(data));
              snaps = null;
            }
            ver++;
          }
          verLast = null;
        }
        const locVer = location !== previous ? ver : oldLocVer;
        if (locVer === ver && location !== null) {
          verLast = null;
        } else {
          for (const fix of folded.fixes) {
            const time = fixTime(fix.time);
            if (verLast === null || time > verLast) verLast = time;
          }
        }

        let past: StoredFix[] | null = null;
        if (row !== undefined && previous !== null && location !== previous && previous.time !== currentTime && row.loc_pruned === 0) {
          past = [versioned(storedFix(previous), oldLocVer)];
        }
        for (const fix of folded.fixes) {
          if (fix === location || fix.time === currentTime) continue;
          (past ??= []).push(versioned(storedFix(fix), ver));
        }
        const heldPast = row === undefined ? null : row.past;
        let toHistory: StoredFix[] | null = null;
        let nextPast = heldPast;
        if (past !== null) {
          if (pastCount(heldPast) + past.length >= bufferFixes) {
            toHistory = heldPast === null ? past : [...decodePast(heldPast), ...past];
            nextPast = null;
          } else {
            nextPast = appendHeldPast(heldPast, past);
          }
        }
        // Unchanged data (mergeData returns the same object) keeps what is stored. Data is
        // written as JSONB encoded here (data-jsonb.ts); the full-text queue gets the
        // object's data, formatted with the rest of its entry (putBody).
        const sameData = row !== undefined && old !== null && next.data === old.data;

        // locationExtra's and encodeData's values are valid until their next calls: bound
        // below, before any.
        const values: ObjectValues = [
          next.label,
          location === null ? null : location.longitude,
          location === null ? null : location.latitude,
          location === null ? null : locationExtra(location),
          location === null ? null : location.time,
          next.seen,
        ];
        let rowid: number;
        let pruned = 0;
        if (row === undefined || old === null) {
          // A new object, unless guessNew was wrong: then its row is read and it is written again.
          // Version 0, named by its fixes, the newest of which is the current one (ver_last NULL).
          const result = insert.run(realm, folded.id, ...values, encodeData(next.data), pastBytes(nextPast));
          if (result.changes === 0) {
            const existing = this.selectOne.get(realm, folded.id);
            if (existing === undefined) throw new Error(`object ${folded.id} neither inserted nor found`);
            read(existing);
            writeOne(folded);
            return;
          }
          inserted++;
          rowid = Number(result.lastInsertRowid);
          if (next.tasks !== undefined) setTasks.run(JSON.stringify(next.tasks), rowid);
          if (location !== null) moves.push([rowid, location.longitude, location.latitude]);
          if (textForNew) toIndex.push([rowid, key, folded.id, next.label, next.data]);
          else if (lastNew < firstNew) firstNew = lastNew = rowid;
          else if (rowid === lastNew + 1) lastNew = rowid;
          else toIndex.push([rowid, key, folded.id, next.label, next.data]);
        } else {
          rowid = row.rowid;
          if (location === previous) pruned = row.loc_pruned;
          if (sameData && location !== null && location !== previous && next.label === old.label) {
            moveRow.run(location.longitude, location.latitude, values[3], location.time, next.seen, pastBytes(nextPast), locVer, rowid);
          } else {
            update.run(...values, sameData ? null : encodeData(next.data), pastBytes(nextPast), location === previous ? 1 : 0, ver, locVer, verLast, snaps, rowid);
          }
          // applyPatch keeps the old array when the task ids stay the same.
          if (next.tasks !== old.tasks) setTasks.run(next.tasks === undefined ? null : JSON.stringify(next.tasks), rowid);
          if (location !== old.location) moves.push([rowid, location?.longitude ?? null, location?.latitude ?? null]);
          if (!sameSearchText(old, next)) toIndex.push([rowid, key, folded.id, next.label, next.data]);
        }
        // In write order (a later fix of an equal time wins).
        if (toHistory !== null) this.chunks.add(rowid, toHistory);
        // Updated objects are held for their next write; new ones are not: a bulk import
        // of new objects would only push the trackers' entries out and leave the garbage
        // collector tens of thousands of objects to carry (about 6% of the time of such a
        // batch). A new object's second write reads its row, and the ones after it do not.
        if (row !== undefined) {
          const state: HeldRow = {
            rowid,
            id: folded.id,
            label: next.label,
            seen: next.seen,
            past: nextPast,
            loc_pruned: pruned,
            ver,
            loc_ver: locVer,
            ver_last: verLast,
            snaps,
          };
          written.push([folded.id, { row: state, obj: next }]);
        }

        changes.push({ realm, id: folded.id, old, new: next, history: folded.fixes, time: now });
      };
      for (const folded of batch) writeOne(folded);
      // A large batch of mostly new objects turns the guess on; any batch it was wrong for
      // (however small) turns it off.
      const mostlyNew = inserted >= unread.length * GUESS_NEW_SHARE;
      if (guessNew ? !mostlyNew : unread.length >= GUESS_NEW_MIN && mostlyNew) this.newObjects.set(realm, mostlyNew);
      // The last entry queued and the objects of all of them (the indexer applies entries in order).
      let queued: [number, number] | null = null;
      if (lastNew >= firstNew) queued = [this.indexer.queue('rows', [firstNew, lastNew]), lastNew - firstNew + 1];
      if (toIndex.length > 0) queued = [this.indexer.queue('put', putBody(toIndex)), toIndex.length + (queued?.[1] ?? 0)];
      return { realm, key, changes, queued, written, moves };
    };
    this.writes = new GroupCommit(db, {
      write: (write) => {
        const work = this.upsertNow(write);
        // For the group's later writes (dropped with the group if it does not commit).
        for (const [id, entry] of work.written) this.staged.set(write.realm, id, entry);
        return work;
      },
      // Committed: the spatial index and the recent objects follow, the full-text indexer is told.
      committed: ({ realm, key, changes, queued, written, moves }) => {
        this.keys.set(realm, key);
        this.locations.apply(realm, moves);
        for (const [id, entry] of written) this.recent.set(realm, id, entry);
        if (queued !== null) this.indexer.queued(queued[0], queued[1]);
        return changes;
      },
      begin: () => this.syncHeld(),
      ended: () => this.staged.clear(),
      translate: translateSqliteError,
      retryAlone: isWriteSpecific,
      weight: (write) => write.patches.length,
      maxWeight: GROUP_PATCHES,
    });

    this.deleteTx = db.transaction((realm: string, id: string, now: string) => {
      const row = this.selectObject.get(realm, id);
      if (row === undefined) return null;
      deleteRow.run(row.rowid);
      deleteHistory.run(row.rowid);
      deleteSnapshots.run(row.rowid);
      const change: ObjectChange = { realm, id, old: objectFromRow(row), new: null, history: [], time: now };
      // The trigger queued the entry's removal: the last entry queued.
      return { change, rowid: row.rowid, queued: Number(lastQueued.get() ?? 0) };
    });

    this.listTx = db.transaction((realm: string, query: ObjectListQuery) => this.listNow(realm, query));

    // Retention walks the realm's objects in id order, a chunk per transaction. In each
    // chunk's id range, the past fixes the rows hold move to `history` first; then one
    // statement marks the current fixes before the cut pruned (they stay the objects'
    // locations, history leaves them out), and the past fixes before the cut go (a seek
    // on the (orow, last) key per object of the chunk; history-chunks.ts).
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
    // Snapshots whose every fix is before the cut (`last`: the latest fix time naming them).
    const pruneSnapshots = db.prepare<[string, string, string, number]>(
      'DELETE FROM snapshots WHERE orow IN (SELECT rowid FROM objects WHERE realm = ? AND id > ? AND id <= ?) AND last < ?',
    );
    this.pruneChunkTx = db.transaction((realm: string, after: string, before: string) => {
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
    this.selectHistoryOwner = db.prepare(
      'SELECT rowid, lon, lat, loc_extra, loc_time, loc_pruned, past, label, json(data) AS data, ver, loc_ver, snaps FROM objects WHERE realm = ? AND id = ?',
    );
    this.selectSnapshot = db.prepare<[number, number], [string | null, string]>('SELECT label, json(data) FROM snapshots WHERE orow = ? AND ver = ?').raw(true);
    this.historyTx = db.transaction((realm: string, id: string, query: HistoryQuery) => this.historyNow(realm, id, query));
  }

  /** A prepared statement for `sql`, from the cache; `raw`: its rows are arrays. */
  private statement<R>(sql: string, raw = false): Statement<unknown[], R> {
    const key = raw ? `raw:${sql}` : sql;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
      statement = this.db.prepare(sql);
      if (raw) statement.raw(true);
      this.statements.set(key, statement);
    }
    return statement as Statement<unknown[], R>;
  }

  private realmKey(realm: string): number | null {
    return this.selectKey.get(realm)?.key ?? null;
  }

  upsertMany(realm: string, patches: ObjectPatch[], now: string): Promise<ObjectChange[]> {
    const write: QueuedUpsert = { realm, patches, now };
    // Queued at once, to be committed with the other writes of this turn of the event
    // loop, in the order they were asked for (a v1 connection's pipelined messages rely on it).
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
    return settle(() => {
      const row = this.selectObject.get(realm, id);
      return row === undefined ? null : objectFromRow(row);
    });
  }

  list(realm: string, query: ObjectListQuery): Promise<Page<TrackedObject>> {
    // One read transaction: a shape query reads candidates, then the hits' rows.
    return settle(() => this.listTx(realm, query));
  }

  /** The SQL (with its parameters) and plan of a list query; exposed for EXPLAIN QUERY PLAN tests. */
  listPlan(realm: string, query: ObjectListQuery): { sql: string; params: (string | number)[]; plan: ListPlan } | null {
    const after = pageStart(query);
    const filter = compileFilter(query.filter ?? []);
    if (filter.never) return null;
    let lower = after;
    if (filter.idAfter !== null && compareCodePoints(filter.idAfter, lower) > 0) lower = filter.idAfter;
    const upper = filter.idBefore;
    if (upper !== null && compareCodePoints(lower, upper) >= 0) return null;

    const params: (string | number)[] = [];
    const where = (exact?: string): string => {
      const terms = ['o.realm = ?', 'o.id > ?'];
      params.push(realm, lower);
      if (upper !== null) {
        terms.push('o.id < ?');
        params.push(upper);
      }
      // The exact test before the filter: cheaper than JSON extraction.
      if (exact !== undefined) terms.push(exact);
      terms.push(...filter.terms);
      params.push(...filter.params);
      return terms.join(' AND ');
    };

    if (query.shape === undefined) {
      const sql = `SELECT ${listColumns(query.fields)} FROM objects o WHERE ${where()} ORDER BY o.id LIMIT ?`;
      params.push(query.limit + 1);
      return { sql, params: [...projectionParams(query.fields), ...params], plan: 'index' };
    }

    // The hits in the shape (the exact test on the grid's locations), up to the cap.
    const boxes = queryBoxes(query.shape);
    const inside = compileShape(query.shape);
    const cap = Math.max(1, Math.floor(this.spatialCap(query.limit)));
    const hits: number[] = [];
    this.locations.grid(realm).visit(boxes, (rowid, lon, lat) => {
      if (inside(lon, lat)) hits.push(rowid);
      return hits.length >= cap;
    });
    if (hits.length === 0) return null;

    if (hits.length < cap) {
      // Spatial plan: the hits drive (CROSS JOIN keeps them the outer loop), in rowid
      // order, the order of the table's pages: about 7% faster than the grid's order.
      hits.sort((a, b) => a - b);
      params.push(JSON.stringify(hits));
      const sql = `SELECT ${listColumns(query.fields)} FROM json_each(?) AS c CROSS JOIN objects o ON o.rowid = c.value WHERE ${where()} ORDER BY o.id LIMIT ?`;
      params.push(query.limit + 1);
      return { sql, params: [...projectionParams(query.fields), ...params], plan: 'spatial' };
    }
    // Ordered plan: the (realm, id) index drives; lon/lat prefiltered by the boxes.
    const boxTerm = boxesSql(boxes, params);
    const sql = `SELECT ${listColumns(query.fields)} FROM objects o WHERE ${boxTerm} AND ${where(INSIDE)} ORDER BY o.id LIMIT ?`;
    params.push(query.limit + 1);
    return { sql, params: [...projectionParams(query.fields), ...params], plan: 'ordered' };
  }

  private listNow(realm: string, query: ObjectListQuery): Page<TrackedObject> {
    const planned = this.listPlan(realm, query);
    if (planned === null) return emptyPage();
    const statement = this.statement<ObjectTuple>(planned.sql, true);
    const convert = projector(query.fields);
    if (query.shape === undefined) return toPage(statement.all(...planned.params), query.limit, convert, tupleId);
    // The statement calls locus_inside(lon, lat), this shape's exact test, on each
    // candidate (better-sqlite3 is synchronous: no other query runs meanwhile).
    this.inside = compileShape(query.shape);
    try {
      return toPage(statement.all(...planned.params), query.limit, convert, tupleId);
    } finally {
      this.inside = outside;
    }
  }

  delete(realm: string, id: string, now: string): Promise<ObjectChange | null> {
    this.flushWrites();
    return settle(() => {
      this.syncHeld();
      // IMMEDIATE: the write lock before the reads (see group-commit.ts).
      const deleted = this.deleteTx.immediate(realm, id, now);
      if (deleted === null) return null;
      this.locations.apply(realm, [[deleted.rowid, null, null]]);
      this.recent.delete(realm, id);
      this.indexer.queued(deleted.queued, 1);
      return deleted.change;
    });
  }

  /** A realm was deleted: its in-memory state goes, and a later write for it checks that it exists again. */
  forgetRealm(realm: string): void {
    this.keys.delete(realm);
    this.deletedRealms.add(realm);
    this.newObjects.delete(realm);
    this.locations.forget(realm);
    this.recent.forget(realm);
  }

  /**
   * Before a write: drops the recent objects and realm keys, and the spatial index's grids,
   * when another connection has committed to the file (one read of `PRAGMA data_version`).
   */
  private syncHeld(): void {
    const version = this.selectVersion.get() ?? 0;
    this.locations.noteVersion(version);
    if (version === this.version) return;
    this.version = version;
    this.recent.clear();
    this.keys.clear();
  }

  /** Resolves once the full-text index holds every write made so far (searches wait for it themselves). */
  indexed(): Promise<void> {
    return this.indexer.caughtUp();
  }

  async search(realm: string, query: SearchQuery): Promise<SearchHit[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE) {
      throw invalid(`limit must be an integer from 1 to ${MAX_PAGE}`, 'invalid_query');
    }
    if (query.words.length === 0) return [];
    // Read-your-writes: every write queued before this search is in the index.
    await this.indexer.caughtUp();
    return settle(() => {
      const key = this.realmKey(realm);
      if (key === null) return [];
      this.indexer.attach();
      // FTS5 ranks (rank = bm25(2.0, 1.0), set by search-file.ts: lower is better, id and
      // label words weigh twice as much as data words) and keeps the best `limit` before
      // any object row is read; equal ranks then follow id order.
      const rows = this.statement<ObjectTuple>(
        `SELECT ${listColumns(query.fields)}, f.rank AS bm25
         FROM (SELECT rowid, rank FROM search.object_fts WHERE object_fts MATCH ? ORDER BY rank LIMIT ?) AS f
         CROSS JOIN objects o ON o.rowid = f.rowid
         WHERE o.realm = ? ORDER BY f.rank, o.id`,
        true,
      ).all(...projectionParams(query.fields), searchMatch(key, query.words), query.limit, realm);
      // Reported as higher-is-better; + 0 turns a -0 into 0.
      const convert = projector(query.fields);
      // The rank is the column after the object's.
      return rows.map((row) => ({ object: convert(row), score: -(row[OBJECT_TUPLE_COLUMNS] as number) + 0 }));
    });
  }

  history(realm: string, id: string, query: HistoryQuery): Promise<Page<HistoryEntry>> {
    // One read transaction: the object's row, then its stored fixes.
    return settle(() => this.historyTx(realm, id, query));
  }

  private historyNow(realm: string, id: string, query: HistoryQuery): Page<HistoryEntry> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE) {
      throw invalid(`limit must be an integer from 1 to ${MAX_PAGE}`, 'invalid_query');
    }
    const cursor = query.cursor === undefined ? null : decodeCursor(query.cursor);
    // A history cursor names the time of the last fix of its page.
    if (cursor !== null && !(NORMALISED_TIME.test(cursor) && isoTimeExists(cursor))) throw invalid('cursor is not valid', 'invalid_cursor');
    const asc = query.order === 'asc';
    // Each side is bounded once: by the cursor when it is past the range's own bound.
    let low: HistoryBound | null = query.from === undefined ? null : ['>=', query.from];
    let high: HistoryBound | null = query.to === undefined ? null : ['<=', query.to];
    if (cursor !== null) {
      if (asc && (low === null || cursor >= low[1])) low = ['>', cursor];
      if (!asc && (high === null || cursor <= high[1])) high = ['<', cursor];
    }
    const bounds: HistoryBound[] = [];
    if (low !== null) bounds.push(low);
    if (high !== null) bounds.push(high);
    const owner = this.selectHistoryOwner.get(realm, id);
    if (owner === undefined) return emptyPage();
    const limits = bounds.map(([op, time]): [HistoryBound[0], number] => [op, fixTime(time)]);
    // The past fixes the row holds, within the bounds (a later one of an equal time wins).
    const held = new Map<number, StoredFix>();
    for (const fix of decodePast(owner.past)) if (withinLimits(fix[0], limits)) held.set(fix[0], fix);
    // The stored past fixes merged with the held ones by time, up to the page's end; then
    // the current location unless pruned (schema.ts version 6), in its place by time.
    const merged = this.chunks.page(owner.rowid, limits, asc, query.limit + 1, held);
    // The snapshots the page names: the row's own version, the others from `snapshots`
    // (one lookup per version; a version found nowhere reads as no label and no data).
    const snapshots = new Map<number, Snapshot>();
    for (const [ver, , label, data] of heldSnapshots(owner.snaps)) snapshots.set(ver, { label, data });
    const snapshot = (ver: number): Snapshot => {
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

  async pruneHistory(realm: string, before: string, options: { signal?: AbortSignal } = {}): Promise<number> {
    let deleted = 0;
    let after: string | null = '';
    while (after !== null && options.signal?.aborted !== true) {
      const from: string = after;
      this.flushWrites();
      const chunk = await settle(() => {
        const pruned = this.pruneChunkTx.immediate(realm, from, before);
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

export type ListPlan = 'index' | 'spatial' | 'ordered';

/**
 * The indexer backlog (object rowids) from which writes send it the text of new objects.
 * A long import is bound by the indexer (FTS5 writes): once it is this far behind, the
 * writer has time to spare and the indexer none. A quarter of MAX_BACKLOG_ROWIDS, where
 * writes start to wait.
 */
const TEXT_FOR_NEW_BEHIND = MAX_BACKLOG_ROWIDS / 4;

/** A write waiting for its group commit. */
interface QueuedUpsert {
  realm: string;
  patches: readonly ObjectPatch[];
  now: string;
}

/** What a write did, applied to the in-memory state once its group has committed. */
interface UpsertWork {
  realm: string;
  /** The realm's key (search-index.ts), held once committed. */
  key: number;
  changes: ObjectChange[];
  /** The full-text indexer's queue entry and how many objects it holds. */
  queued: [number, number] | null;
  /** The state written of objects that existed before (held in RecentObjects). */
  written: [string, RecentObject][];
  moves: LocationMove[];
}

/**
 * A group commit takes no more writes once it holds this many patches: larger groups
 * gain little (at 4,000 location updates a commit, the WAL takes about half the bytes per
 * update of 1,000) and make the first write's caller wait for all of them.
 */
const GROUP_PATCHES = 10_000;

/** A batch with this many objects not held in memory tells whether its realm is importing new objects. */
const GUESS_NEW_MIN = 64;

/** The share of new objects among them from which the next batches are guessed new. */
const GUESS_NEW_SHARE = 0.9;

/** Objects whose history one retention transaction walks. */
const PRUNE_CHUNK_OBJECTS = 500;


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

/**
 * True when a write left the label and data as they were (data values are flat: numbers,
 * strings, booleans). A tracker that sends the same data with every fix then writes no
 * snapshot.
 */
export function sameSnapshot(old: TrackedObject, next: TrackedObject): boolean {
  if (old.label !== next.label) return false;
  if (old.data === next.data) return true;
  const keys = Object.keys(next.data);
  if (keys.length !== Object.keys(old.data).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(old.data, key) || !Object.is(old.data[key], next.data[key])) return false;
  }
  return true;
}
