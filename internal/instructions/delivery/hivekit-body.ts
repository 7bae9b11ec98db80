/**
 * The body of a sendToUrl POST, as Hivekit's receivers parse it (hivescript.md 3.1): a JSON
 * array with one element per entry; a pair is `{"objects":[<object>,<object>]}`, an object or an
 * area is its record itself. Objects are the v1 records `obj rea` shows (short keys `id`, `lab`,
 * `loc`, `dat`; transport/actions/v1-records.ts) without presence and tasks, plus
 * `lastExternalUpdate`; areas are the records `are rea` shows.
 */
import type { Entry } from '../language/ast.js';
import type { Area, TrackedObject } from '../../domain/types.js';
import { areaRecord, objectRecord } from '../../transport/actions/v1-records.js';

/** An entry with what it stands for: null where the object or area no longer exists. */
export type EntryContent =
  | { kind: 'object'; id: string; object: TrackedObject | null }
  | { kind: 'pair'; a: string; b: string; objects: [TrackedObject | null, TrackedObject | null] }
  | { kind: 'area'; id: string; area: Area | null };

/** Looks up what entries stand for (the runtime's mirror of the realm). */
export interface EntrySource {
  object(id: string): TrackedObject | null;
  area(id: string): Area | null;
}

export function entryContents(entries: readonly Entry[], source: EntrySource): EntryContent[] {
  return entries.map((entry): EntryContent => {
    switch (entry.kind) {
      case 'object':
        return { kind: 'object', id: entry.id, object: source.object(entry.id) };
      case 'area':
        return { kind: 'area', id: entry.id, area: source.area(entry.id) };
      case 'pair':
        return { kind: 'pair', a: entry.a, b: entry.b, objects: [source.object(entry.a), source.object(entry.b)] };
    }
  });
}

/**
 * An object as sent: `{"id","lab"?,"loc","dat"?,"lastExternalUpdate"}`. `lastExternalUpdate` is
 * the server time of the object's last write that carried a location (null when it never had
 * one); a gone object (deleted, so it left the set) is `{"id"}` alone.
 */
function sentObject(id: string, object: TrackedObject | null): object {
  if (object === null) return { id };
  const record: Record<string, unknown> = { ...objectRecord(object, 'dis') };
  delete record.cst;
  delete record.tds;
  record.lastExternalUpdate = object.seen ?? object.location?.time ?? null;
  return record;
}

function sentEntry(entry: EntryContent): object {
  switch (entry.kind) {
    case 'object':
      return sentObject(entry.id, entry.object);
    case 'area':
      return entry.area === null ? { id: entry.id } : areaRecord(entry.area);
    case 'pair':
      return { objects: [sentObject(entry.a, entry.objects[0]), sentObject(entry.b, entry.objects[1])] };
  }
}

/** The JSON text of the body. */
export function sendToUrlBody(entries: readonly EntryContent[]): string {
  return JSON.stringify(entries.map(sentEntry));
}
