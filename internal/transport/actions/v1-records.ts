/**
 * The records the v1 wire shows (compat 4.2, 4.3): objects and areas with Hivekit's short
 * keys. Object reads (`obj rea`) and subscription pushes use objectRecord; `obj lis` uses
 * objectListEntry, `are rea` areaRecord, `are lis` areaListEntry. List entries carry exactly
 * their keys (the client compares them with deep equality), so an unset label is `""` there;
 * records leave `lab` out when unset.
 */
import { areaRecord, locationRecord, objectRecord, taskRecord } from '../../service/live/records.js';
import type { ConnectionStatus, Data, ShapeType, TrackedObject } from '../../domain/types.js';
import type { V1ShapeType } from './v1-shapes.js';

// One builder for reads and pushes: service/live/records.ts.
export { areaRecord, locationRecord, objectRecord, taskRecord };
export type { V1AreaRecord, V1Location, V1ObjectRecord, V1TaskRecord } from '../../service/live/records.js';

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
