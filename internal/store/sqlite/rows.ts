/**
 * Row shapes of the SQLite tables and their conversion to domain values. JSON columns
 * are parsed with JSON.parse, which makes every key (`__proto__` included) an ordinary
 * own property.
 */
import type { Area, Data, Realm, RealmData, RealmSettings, Scope, Shape, TokenRecord, TrackedObject } from '../../domain/types.js';
import { completeLocation } from './current-fix.js';
import type { HeldPast } from './history-rows.js';

export interface ObjectRow {
  rowid: number;
  id: string;
  label: string | null;
  /** The current location (current-fix.ts): all four NULL when the object has none. */
  lon: number | null;
  lat: number | null;
  loc_extra: Buffer | null;
  loc_time: string | null;
  seen: string | null;
  /** JSON text: the column holds JSONB (schema.ts version 5), read as `json(data)`. */
  data: string;
  /** Task ids as a JSON array (schema.ts version 14); NULL when none. */
  tasks: string | null;
}

/**
 * An object row as the write path reads it (and RecentObjects holds it): also the past
 * fixes it holds (history-rows.ts appendPast; schema.ts version 8) and whether retention
 * pruned its current fix.
 */
export interface ObjectStateRow extends ObjectRow {
  past: Uint8Array | null;
  loc_pruned: number;
  /** The version of the row's label and data, of its current fix, and the latest fix time of `ver` (schema.ts version 12). */
  ver: number;
  loc_ver: number;
  ver_last: number | null;
  /** Snapshots held before they move to `snapshots` (snapshot-buffer.ts): JSON text. */
  snaps: string | null;
}

/**
 * What the write path needs of an object's row besides the object itself, and what
 * RecentObjects holds: not the location's columns, which the object holds. (Holding the
 * location's JSON text of earlier versions made every held entry about 130 bytes larger,
 * and held entries are what the young-generation collections copy under a steady location
 * load. Measured: server at 10,000 updates/s for 5 s, `--trace-gc`, six alternating pairs
 * of runs: promoted per scavenge 0.42–0.81 MB instead of 0.98–1.12, scavenge pause mean
 * 3.08–3.75 ms instead of 3.54–4.94.)
 */
export type HeldRow = Omit<ObjectStateRow, 'lon' | 'lat' | 'loc_extra' | 'loc_time' | 'data' | 'tasks' | 'past'> & {
  /** The past fixes as held between writes (history-rows.ts HeldPast). */
  past: HeldPast | null;
};

/**
 * An object row read as an array (better-sqlite3's raw mode: no object with named
 * properties is built per row, about 1.4 µs less per row of a 1,000-object page); the
 * columns of ObjectRow in this order (a query may add more after them).
 */
export type ObjectTuple = [...ObjectColumns, ...more: unknown[]];

/** The columns of ObjectRow, in the order an ObjectTuple (and the write path's tuple) starts with. */
export type ObjectColumns = [
  rowid: number,
  id: string,
  label: string | null,
  lon: number | null,
  lat: number | null,
  locExtra: Buffer | null,
  locTime: string | null,
  seen: string | null,
  data: string,
  tasks: string | null,
];

/** The number of columns of an ObjectTuple before any a query adds. */
export const OBJECT_TUPLE_COLUMNS = 10;

export interface AreaRow {
  id: string;
  label: string | null;
  shape: string;
  data: string;
}

export interface RealmRow {
  id: string;
  tenant: string;
  /** Null only in a row written by a build before version 12 (never after the migration). */
  name: string | null;
  label: string | null;
  /** JSON text. */
  data: string;
  settings: string;
  created: string;
}

export interface TokenRow {
  id: string;
  realm: string;
  hash: string;
  scope: string;
  created: string;
}

/**
 * An object from its row as read (data as JSON text): for the write path and
 * single reads.
 *
 * objectFromTuple builds the same object from a literal of its own, on purpose: V8 learns
 * per allocation site whether the objects made there live long, and then allocates them
 * in the old generation directly (pretenuring). The write path keeps the objects it reads
 * (RecentObjects) and so teaches this site that; a list's objects live for one request.
 * Sharing one site, after a burst of location updates every list page was allocated in
 * the old generation pointing at young strings, which each scavenge then had to keep
 * alive: scavenges took about 7 ms instead of 0.7 and a 1,000-object page twice as long
 * (measured: ingest and updates of 300,000 objects, then rectangle queries in the same
 * process).
 */
export function objectFromRow(row: ObjectRow): TrackedObject {
  const obj: TrackedObject = {
    id: row.id,
    label: row.label,
    location:
      row.loc_time === null || row.lon === null || row.lat === null
        ? null
        : completeLocation({ longitude: row.lon + 0, latitude: row.lat + 0 }, row.loc_extra, row.loc_time),
    data: JSON.parse(row.data) as Data,
    seen: row.seen,
  };
  // Only an object with task ids has the key (domain/types.ts TrackedObject).
  if (row.tasks !== null) obj.tasks = JSON.parse(row.tasks) as string[];
  return obj;
}

/** An object from a row read as an array: for lists and searches (see objectFromRow). */
export function objectFromTuple(row: ObjectTuple): TrackedObject {
  const lon = row[3];
  const lat = row[4];
  const time = row[6];
  const tasks = row[9];
  const obj: TrackedObject = {
    id: row[1],
    label: row[2],
    location: time === null || lon === null || lat === null ? null : completeLocation({ longitude: lon + 0, latitude: lat + 0 }, row[5], time),
    data: JSON.parse(row[8]) as Data,
    seen: row[7],
  };
  if (tasks !== null) obj.tasks = JSON.parse(tasks) as string[];
  return obj;
}

export function areaFromRow(row: AreaRow): Area {
  return {
    id: row.id,
    label: row.label,
    shape: JSON.parse(row.shape) as Shape,
    data: JSON.parse(row.data) as Data,
  };
}

export function realmFromRow(row: RealmRow): Realm {
  return {
    id: row.id,
    tenant: row.tenant,
    name: row.name ?? row.id,
    label: row.label,
    data: JSON.parse(row.data) as RealmData,
    settings: JSON.parse(row.settings) as RealmSettings,
    created: row.created,
  };
}

export function tokenFromRow(row: TokenRow): TokenRecord {
  return { id: row.id, realm: row.realm, hash: row.hash, scope: row.scope as Scope, created: row.created };
}
