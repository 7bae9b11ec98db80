/**
 * Response shapes of objects, areas and realms, shared by REST v2 and the v1 action protocol
 * (a v1 `loc` event carries the object as GET returns it).
 */
import { shapeTypeOf } from '../domain/area.js';
import type { Area, ConnectionStatus, Data, Location, Realm, RealmData, Shape, ShapeType, TrackedObject } from '../domain/types.js';

export interface ObjectView {
  id: string;
  label: string | null;
  location: Location | null;
  data: Data;
  connectionStatus: ConnectionStatus;
}

export interface ObjectListEntry {
  id: string;
  label: string | null;
  data?: Data;
  connectionStatus: ConnectionStatus;
}

export interface AreaView {
  id: string;
  label: string | null;
  shape: Shape;
  data: Data;
}

/** A realm as Hivekit's realm endpoints show it (id: the name its tenant knows): settings and tokens are the admin API's. */
export interface RealmView {
  id: string;
  label: string | null;
  data: RealmData;
}

export interface AreaListEntry {
  id: string;
  label: string | null;
  shapeType: ShapeType;
}

/** `status` comes from presence (service/presence-port.ts), never from the object's last location. */
export function objectView(obj: TrackedObject, status: ConnectionStatus): ObjectView {
  return { id: obj.id, label: obj.label, location: obj.location, data: obj.data, connectionStatus: status };
}

/** Only the named data fields that the object has (a nested value whole). */
function pick(data: Data, fields: readonly string[]): Data {
  const out: [string, Data[string]][] = [];
  for (const field of fields) {
    if (Object.hasOwn(data, field)) out.push([field, data[field] as Data[string]]);
  }
  return Object.fromEntries(out);
}

export function objectListEntry(obj: TrackedObject, fields: readonly string[] | null, status: ConnectionStatus): ObjectListEntry {
  if (fields === null) return { id: obj.id, label: obj.label, connectionStatus: status };
  return { id: obj.id, label: obj.label, data: pick(obj.data, fields), connectionStatus: status };
}

export function areaView(area: Area): AreaView {
  return { id: area.id, label: area.label, shape: area.shape, data: area.data };
}

export function realmView(realm: Realm): RealmView {
  return { id: realm.name, label: realm.label, data: realm.data };
}

export function areaListEntry(area: Area): AreaListEntry {
  return { id: area.id, label: area.label, shapeType: shapeTypeOf(area.shape) };
}

/** A JSON object keyed by id (clients must not rely on key order; see docs/api.md). */
export function keyedById<T extends { id: string }>(entries: readonly T[]): Record<string, T> {
  return Object.fromEntries(entries.map((entry) => [entry.id, entry]));
}
