/**
 * The records that Hivekit subscription pushes carry (hivekit-compat.md 4.2, 4.3, 5.3).
 *
 * NOTE for the merge: the "core" helper writes `objectRecord` (and the area record) in
 * internal/transport/actions/v1-records.ts for `obj rea`/`are rea`; these local ones follow
 * the same shape and can be replaced by those (the engine takes them as a RecordFormat).
 */
import { toV1Shape } from '../../domain/hivekit-shapes.js';
import type { Area, ConnectionStatus, RealmData, TrackedObject } from '../../domain/types.js';

/** How pushed entities are written; the engine takes one so the v1 views can be swapped in. */
export interface RecordFormat {
  object(obj: TrackedObject, status: ConnectionStatus): object;
  area(area: Area): object;
}

/**
 * `{"id","lab"?,"loc":{"gcs":"","lon","lat","acc","spe","hea","alt","alc","tim"?},"dat"?,"cst","tds"?}`:
 * `loc` zero-filled (`tim` only with a fix), `lab` only when set, `dat` only when not empty,
 * `tds` (task ids) only when there are some. The same record as `obj rea`
 * (transport/actions/v1-records.ts objectRecord).
 */
export function objectRecord(obj: TrackedObject, status: ConnectionStatus): object {
  const l = obj.location;
  const loc =
    l === null
      ? { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }
      : {
          gcs: '',
          lon: l.longitude,
          lat: l.latitude,
          acc: l.accuracy ?? 0,
          spe: l.speed ?? 0,
          hea: l.heading ?? 0,
          alt: l.altitude ?? 0,
          alc: l.altitudeAccuracy ?? 0,
          tim: l.time,
        };
  const record: Record<string, unknown> = { id: obj.id };
  if (obj.label !== null) record.lab = obj.label;
  record.loc = loc;
  if (hasKeys(obj.data)) record.dat = obj.data;
  record.cst = status;
  if (obj.tasks !== undefined && obj.tasks.length > 0) record.tds = obj.tasks;
  return record;
}

function hasKeys(data: object): boolean {
  for (const key in data) if (Object.hasOwn(data, key)) return true;
  return false;
}

/** `{"id","lab","sty","sha","dat"}` as `are rea` returns it (`lab` only when set). */
export function areaRecord(area: Area): object {
  const { sty, sha } = toV1Shape(area.shape);
  const record: Record<string, unknown> = { id: area.id };
  if (area.label !== null) record.lab = area.label;
  record.sty = sty;
  record.sha = sha;
  record.dat = area.data;
  return record;
}

/** The realm-data push payload `{"id","lab"?,"dat"}` (`id`: the name the tenant knows). */
export function realmRecord(name: string, label: string | null, data: RealmData): object {
  return label === null ? { id: name, dat: data } : { id: name, lab: label, dat: data };
}

export const v1Records: RecordFormat = { object: objectRecord, area: areaRecord };
