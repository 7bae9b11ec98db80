/**
 * The records the v1 wire shows (compat 4.2, 4.3, 5.3): objects and areas with Hivekit's short
 * keys, and tasks (compat 4.10). Object reads (`obj rea`) and subscription pushes use objectRecord; `obj lis` uses
 * objectListEntry, `are rea` and area pushes areaRecord, `are lis` areaListEntry. List entries
 * carry exactly their keys (the client compares them with deep equality), so an unset label is
 * `""` there; records leave `lab` out when unset.
 */
import { toV1Shape, type V1ShapeData, type V1ShapeType } from '../../domain/hivekit-shapes.js';
import type { TaskRecord, TaskStatus } from '../../domain/task.js';
import type { Area, ConnectionStatus, Data, Location, RealmData, ShapeType, TrackedObject } from '../../domain/types.js';

/** A location as the v1 wire shows it: every key present, zero-filled; `tim` only with a fix. */
export interface V1Location {
  gcs: string;
  lon: number;
  lat: number;
  acc: number;
  spe: number;
  hea: number;
  alt: number;
  alc: number;
  tim?: string;
}

export interface V1ObjectRecord {
  id: string;
  lab?: string;
  loc: V1Location;
  dat?: Data;
  cst: ConnectionStatus;
  tds?: string[];
}

export interface V1AreaRecord {
  id: string;
  lab?: string;
  sty: V1ShapeType;
  sha: V1ShapeData;
  dat: Data;
}

export function locationRecord(location: Location | null): V1Location {
  if (location === null) return { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 };
  return {
    gcs: '',
    lon: location.longitude,
    lat: location.latitude,
    acc: location.accuracy ?? 0,
    spe: location.speed ?? 0,
    hea: location.heading ?? 0,
    alt: location.altitude ?? 0,
    alc: location.altitudeAccuracy ?? 0,
    tim: location.time,
  };
}

const isEmpty = (data: Data): boolean => {
  for (const _key in data) return false;
  return true;
};

/**
 * `{"id","lab"?,"loc","dat"?,"cst","tds"?}` in the key order of compat 4.2: `loc` zero-filled,
 * `lab` only when set, `dat` only when not empty, `tds` (task ids) only when there are some.
 */
export function objectRecord(obj: TrackedObject, cst: ConnectionStatus): V1ObjectRecord {
  const record: Partial<V1ObjectRecord> = { id: obj.id };
  if (obj.label !== null) record.lab = obj.label;
  record.loc = locationRecord(obj.location);
  if (!isEmpty(obj.data)) record.dat = obj.data;
  record.cst = cst;
  if (obj.tasks !== undefined && obj.tasks.length > 0) record.tds = obj.tasks;
  return record as V1ObjectRecord;
}

/** `{"id","lab"?,"sty","sha","dat"}` as `are rea` returns it: the shape in the v1 form it was sent in. */
export function areaRecord(area: Area): V1AreaRecord {
  const { sty, sha } = toV1Shape(area.shape);
  return area.label === null ? { id: area.id, sty, sha, dat: area.data } : { id: area.id, lab: area.label, sty, sha, dat: area.data };
}

/** The realm-data push payload `{"id","lab"?,"dat"}` (`id`: the name the tenant knows). */
export function realmRecord(name: string, label: string | null, data: RealmData): object {
  return label === null ? { id: name, dat: data } : { id: name, lab: label, dat: data };
}

/** A task step on the v1 wire: long keys (see taskRecord). */
export interface V1TaskStep {
  label?: string;
  status: TaskStatus;
  data: Data;
}

export interface V1TaskRecord {
  id: string;
  lab?: string;
  dsc?: string;
  sts: TaskStatus;
  stp: V1TaskStep[];
  tid?: string;
  loc: V1Location;
  dat: Data;
}

/**
 * `{"id","lab"?,"dsc"?,"sts","stp","tid"?,"loc","dat"}` as `tsk rea` answers it, `tsk lis`
 * lists it and `tsk` pushes carry it (compat 4.10): `loc` zero-filled (all zeros for a task
 * with a target; `tim` only when its location has one), `lab`, `dsc` and `tid` only when set,
 * `dat` always. Steps carry long keys `{label?, status, data}`: Hivekit's client renames only
 * the top-level keys of a pushed record, and reads `steps[i].status` both from a read (where
 * it renames the steps' short keys too, and keeps long ones) and from a push.
 */
export function taskRecord(task: TaskRecord): V1TaskRecord {
  const record: Partial<V1TaskRecord> = { id: task.id };
  if (task.label !== null) record.lab = task.label;
  if (task.description !== null) record.dsc = task.description;
  record.sts = task.status;
  record.stp = task.steps.map((step) => (step.label === null ? { status: step.status, data: step.data } : { label: step.label, status: step.status, data: step.data }));
  if (task.targetId !== null) record.tid = task.targetId;
  record.loc = locationRecord(task.location);
  record.dat = task.data;
  return record as V1TaskRecord;
}

export interface V1ObjectListEntry {
  id: string;
  lab: string;
  cst: ConnectionStatus;
  dat?: Data;
}

export interface V1AreaListEntry {
  id: string;
  lab: string;
  sty: V1ShapeType;
}

/** Only the named data properties the object has. */
function pick(data: Data, fields: readonly string[]): Data {
  const out: Data = {};
  for (const field of fields) {
    if (Object.hasOwn(data, field)) {
      Object.defineProperty(out, field, { value: data[field], writable: true, enumerable: true, configurable: true });
    }
  }
  return out;
}

/** An `obj lis` entry: exactly `{id, lab, cst}`, plus `dat` (the named properties) when `fields` is given. */
export function objectListEntry(obj: TrackedObject, cst: ConnectionStatus, fields: readonly string[] | null): V1ObjectListEntry {
  const entry: V1ObjectListEntry = { id: obj.id, lab: obj.label ?? '', cst };
  if (fields !== null) entry.dat = pick(obj.data, fields);
  return entry;
}

const STY: Readonly<Record<ShapeType, V1ShapeType>> = { rectangle: 'rec', circle: 'cir', polygon: 'pol' };

/** An `are lis` entry: exactly `{id, lab, sty}` (no `sha`: compat 4.3). */
export function areaListEntry(area: { id: string; label: string | null; shapeType: ShapeType }): V1AreaListEntry {
  return { id: area.id, lab: area.label ?? '', sty: STY[area.shapeType] };
}
