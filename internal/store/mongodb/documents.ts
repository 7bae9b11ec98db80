/**
 * The documents of the MongoDB store and their conversions to domain values. Pure.
 *
 * Object and history data are stored as an array of pairs `{k, v}` in key order, not as a
 * subdocument: data keys may be anything (`$`, `a.b`, `__proto__`), which MongoDB field
 * names and update paths cannot all carry, and a pair keeps the value's type (5 is never
 * "5"). Each pair of an object also carries `w`, the search words of its value
 * (domain/search.ts), computed once when the value is written, so that a data merge done
 * by the server itself (object-writes.ts) keeps the words of the kept values.
 *
 * A nested value (an object or an array) is held as JSON text in `j`, never in `v`: a query
 * on `v` then never reaches it, where MongoDB would match an array when any element
 * matches and order objects among numbers and strings (filters compare top-level scalars
 * only, decisions.md); and its keys may be anything, as the data's own. Its `w` holds the
 * words of its string leaves.
 *
 * Realm and area data (realms: nested JSON) are stored as JSON text: read and written
 * whole, never queried.
 */
import type { ObjectId } from 'mongodb';
import { isNested } from '../../domain/data.js';
import { dataValueWords } from '../../domain/search.js';
import type { Area, Data, Location, RealmData, RealmSettings, Shape, SigningKeyRecord, TenantRecord, TokenRecord, TrackedObject } from '../../domain/types.js';
import type { HistoryEntry } from '../port.js';

/** One data key and its value, `v` or `j`; `w`: the value's search words (objects only). */
export interface DataPair {
  k: string;
  /** A string, number or boolean. */
  v?: string | number | boolean;
  /** A nested object or array, as JSON text. */
  j?: string;
  w?: string[];
}

export interface GeoPoint {
  type: 'Point';
  coordinates: [number, number];
}

/** An object in a realm's `objects` collection. */
export interface ObjectDoc {
  _id: string;
  /** label */
  l: string | null;
  /** The current fix, as stored (every field of the Location). */
  loc?: Location | null;
  /** The current fix's time (normalised ISO: string order is time order): the newer-fix rule compares it. */
  t?: string | null;
  /** The current fix as GeoJSON, for the 2dsphere index. */
  g?: GeoPoint;
  /** seen */
  s: string | null;
  d: DataPair[];
  /** task ids, absent when none */
  tk?: string[];
  /** Search words of the id and the label. */
  wi: string[];
  wl: string[];
  /** The stamp of the last write (object-writes.ts stampedUpdate); absent on documents written before stamps. */
  n?: ObjectId | null;
}

/** One stored fix in a realm's `history` collection. (o, t) is unique. */
export interface HistoryDoc {
  o: string;
  t: string;
  /** The fix time as a Date: the TTL index's field. */
  at: Date;
  f: Location;
  l: string | null;
  d: DataPair[];
}

export interface AreaDoc {
  _id: string;
  l: string | null;
  shape: Shape;
  /** Data as JSON text. */
  d: string;
  /** A geometry for the 2dsphere index (areaGeometry). */
  g: { type: 'MultiPoint'; coordinates: [number, number][] };
  /** Bumped by each update (optimistic concurrency). */
  v: number;
}

export interface RealmDoc {
  _id: string;
  tenant: string;
  name: string;
  label: string | null;
  /** Data as JSON text (nested values, key order and `__proto__` kept exactly). */
  data: string;
  settings: RealmSettings;
  created: string;
  /** The realm's database (names.ts realmDatabaseName). */
  db: string;
  /** Bumped by each label/data update (optimistic concurrency). */
  v: number;
}

export interface TenantDoc {
  _id: string;
  label: string | null;
  created: string;
}

export interface TokenDoc {
  _id: string;
  realm: string;
  hash: string;
  scope: TokenRecord['scope'];
  created: string;
}

export interface KeyDoc {
  _id: string;
  tenant: string;
  realm: string | null;
  secret: string;
  created: string;
}

/** The search words of one data value, as objectSearchWords finds them. */
export function valueWords(value: Data[string]): string[] {
  return dataValueWords(value);
}

/** Distinct words, first occurrence order. */
export function distinctWords(words: string[]): string[] {
  return [...new Set(words)];
}

/** A data pair, without words: a nested value as JSON text. */
function pair(k: string, v: Data[string]): DataPair {
  return isNested(v) ? { k, j: JSON.stringify(v) } : { k, v };
}

/** A data pair of an object, with its value's words. */
export function objectPair(k: string, v: Data[string]): DataPair {
  const p = pair(k, v);
  const words = valueWords(v);
  if (words.length > 0) p.w = words;
  return p;
}

/** Data as pairs, in key order; `withWords`: with each value's search words (objects). */
export function dataToPairs(data: Data, withWords: boolean): DataPair[] {
  return Object.keys(data).map((k) => {
    const v = data[k] as Data[string];
    return withWords ? objectPair(k, v) : pair(k, v);
  });
}

/** A pair's value (JSON.parse keeps a nested key `__proto__` an ordinary own key). */
function pairValue(p: DataPair): Data[string] {
  return p.j === undefined ? (p.v as string | number | boolean) : (JSON.parse(p.j) as Data[string]);
}

/** Pairs back to data; Object.fromEntries defines every key as an own property (`__proto__` too). */
export function pairsToData(pairs: readonly DataPair[] | undefined): Data {
  if (pairs === undefined || pairs.length === 0) return {};
  return Object.fromEntries(pairs.map((p) => [p.k, pairValue(p)]));
}

/** Only the named fields of the pairs (a list projection), in the order of `fields`. */
export function projectPairs(pairs: readonly DataPair[] | undefined, fields: readonly string[] | null): Data {
  if (fields === null || fields.length === 0 || pairs === undefined) return {};
  const byKey = new Map(pairs.map((p) => [p.k, p]));
  const kept: [string, Data[string]][] = [];
  for (const field of fields) {
    const found = byKey.get(field);
    if (found !== undefined) kept.push([field, pairValue(found)]);
  }
  return Object.fromEntries(kept);
}

/** A Location copied field by field (no stray keys a document may carry). */
export function cleanLocation(loc: Location): Location {
  const out: Location = { longitude: loc.longitude, latitude: loc.latitude, time: loc.time };
  if (loc.altitude !== undefined && loc.altitude !== null) out.altitude = loc.altitude;
  if (loc.speed !== undefined && loc.speed !== null) out.speed = loc.speed;
  if (loc.heading !== undefined && loc.heading !== null) out.heading = loc.heading;
  if (loc.accuracy !== undefined && loc.accuracy !== null) out.accuracy = loc.accuracy;
  if (loc.altitudeAccuracy !== undefined && loc.altitudeAccuracy !== null) out.altitudeAccuracy = loc.altitudeAccuracy;
  return out;
}

export function geoPoint(loc: Location): GeoPoint {
  return { type: 'Point', coordinates: [loc.longitude, loc.latitude] };
}

/** A stored object document as the domain object. */
export function objectFromDoc(doc: ObjectDoc): TrackedObject {
  const obj: TrackedObject = {
    id: doc._id,
    label: doc.l ?? null,
    location: doc.loc === undefined || doc.loc === null ? null : cleanLocation(doc.loc),
    data: pairsToData(doc.d),
    seen: doc.s ?? null,
  };
  if (doc.tk !== undefined && doc.tk !== null && doc.tk.length > 0) obj.tasks = [...doc.tk];
  return obj;
}

/** A list item with a projection: id, label and seen as stored, the named data fields. */
export function projectedFromDoc(doc: ObjectDoc, fields: readonly string[] | null): TrackedObject {
  return { id: doc._id, label: doc.l ?? null, location: null, data: projectPairs(doc.d, fields), seen: doc.s ?? null };
}

export function historyEntryFromDoc(doc: HistoryDoc): HistoryEntry {
  return { location: cleanLocation(doc.f), label: doc.l ?? null, data: pairsToData(doc.d) };
}

/** The points a MultiPoint area geometry holds: a circle's centre, a rectangle's corners, a polygon's vertices. */
export function areaGeometry(shape: Shape): AreaDoc['g'] {
  let points: [number, number][];
  if ('r' in shape) points = [[shape.cx, shape.cy]];
  else if ('points' in shape) points = shape.points.map(([x, y]) => [x, y]);
  else points = [[shape.w, shape.s], [shape.e, shape.s], [shape.e, shape.n], [shape.w, shape.n]];
  return { type: 'MultiPoint', coordinates: points };
}

export function areaToDoc(area: Area, version: number): AreaDoc {
  return { _id: area.id, l: area.label, shape: area.shape, d: JSON.stringify(area.data), g: areaGeometry(area.shape), v: version };
}

/** A shape as stored, copied to exactly its own fields. */
function cleanShape(shape: Shape): Shape {
  if ('r' in shape) return { cx: shape.cx, cy: shape.cy, r: shape.r };
  if ('points' in shape) return { points: shape.points.map(([x, y]) => [x, y] as [number, number]) };
  return { w: shape.w, n: shape.n, e: shape.e, s: shape.s };
}

export function areaFromDoc(doc: AreaDoc): Area {
  return { id: doc._id, label: doc.l ?? null, shape: cleanShape(doc.shape), data: JSON.parse(doc.d) as Data };
}

export function realmFromDoc(doc: RealmDoc): { id: string; tenant: string; name: string; label: string | null; data: RealmData; settings: RealmSettings; created: string } {
  const s = doc.settings;
  return {
    id: doc._id,
    tenant: doc.tenant,
    name: doc.name,
    label: doc.label ?? null,
    data: JSON.parse(doc.data) as RealmData,
    settings: {
      connectionTimeout: s.connectionTimeout,
      historyRetentionDays: s.historyRetentionDays,
      rateLimit: s.rateLimit ?? null,
      ...(s.filterIndexes !== undefined && s.filterIndexes.length > 0 ? { filterIndexes: [...s.filterIndexes] } : {}),
    },
    created: doc.created,
  };
}

export function tenantFromDoc(doc: TenantDoc): TenantRecord {
  return { id: doc._id, label: doc.label ?? null, created: doc.created };
}

export function tokenFromDoc(doc: TokenDoc): TokenRecord {
  return { id: doc._id, realm: doc.realm, hash: doc.hash, scope: doc.scope, created: doc.created };
}

export function keyFromDoc(doc: KeyDoc): SigningKeyRecord {
  return { id: doc._id, tenant: doc.tenant, realm: doc.realm ?? null, secret: doc.secret, created: doc.created };
}
