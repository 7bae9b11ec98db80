/**
 * Row shapes of the SQLite tables and their conversion to domain values. JSON columns
 * are parsed with JSON.parse, which makes every key (`__proto__` included) an ordinary
 * own property.
 */
import type { Area, Data, Location, Realm, RealmSettings, Scope, Shape, TokenRecord, TrackedObject } from '../../domain/types.js';

export interface ObjectRow {
  rowid: number;
  id: string;
  label: string | null;
  location: string | null;
  seen: string | null;
  /** JSON text: the column holds JSONB (schema.ts version 5), read as `json(data)`. */
  data: string;
}

/**
 * An object row as the write path reads it (and RecentObjects holds it): also the past
 * fixes it holds (history-rows.ts appendPast; schema.ts version 8) and whether retention
 * pruned its current fix.
 */
export interface ObjectStateRow extends ObjectRow {
  past: Uint8Array | null;
  loc_pruned: number;
}

/**
 * An object row read as an array (better-sqlite3's raw mode: no object with named
 * properties is built per row, about 1.4 µs less per row of a 1,000-object page); the
 * columns of ObjectRow in this order (a query may add more after them).
 */
export type ObjectTuple = [rowid: number, id: string, label: string | null, location: string | null, seen: string | null, data: string, ...more: unknown[]];

export interface AreaRow {
  id: string;
  label: string | null;
  shape: string;
  data: string;
}

export interface RealmRow {
  id: string;
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

/** An object from its columns as read (location and data JSON text). */
function decodeObject(id: string, label: string | null, location: string | null, seen: string | null, data: string): TrackedObject {
  return {
    id,
    label,
    location: location === null ? null : (JSON.parse(location) as Location),
    data: JSON.parse(data) as Data,
    seen,
  };
}

export function objectFromRow(row: ObjectRow): TrackedObject {
  return decodeObject(row.id, row.label, row.location, row.seen, row.data);
}

export function objectFromTuple(row: ObjectTuple): TrackedObject {
  return decodeObject(row[1], row[2], row[3], row[4], row[5]);
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
  return { id: row.id, settings: JSON.parse(row.settings) as RealmSettings, created: row.created };
}

export function tokenFromRow(row: TokenRow): TokenRecord {
  return { id: row.id, realm: row.realm, hash: row.hash, scope: row.scope as Scope, created: row.created };
}
