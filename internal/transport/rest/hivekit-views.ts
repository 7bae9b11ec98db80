/**
 * REST v2 bodies of Hivekit's history and search forms (hivekit-rest.md D3, D5): history
 * entries `{data, location, time}` with the location zero-filled under the long names, and
 * search match records with long names and locus's `score`.
 */
import type { MatchRecord } from '../../domain/match-records.js';
import type { HistoryEntry } from '../../store/port.js';

export interface RestHistoryEntry {
  data: Record<string, unknown>;
  location: {
    accuracy: number;
    altitude: number;
    altitudeAccuracy: number;
    heading: number;
    latitude: number;
    longitude: number;
    speed: number;
    time: string;
  };
  time: string;
}

/** A history entry as `GET /v2/realm/<r>/history/<id>` shows it: every location key, 0 when unknown. */
export function restHistoryEntry(entry: HistoryEntry): RestHistoryEntry {
  const l = entry.location;
  return {
    data: entry.data,
    location: {
      accuracy: l.accuracy ?? 0,
      altitude: l.altitude ?? 0,
      altitudeAccuracy: l.altitudeAccuracy ?? 0,
      heading: l.heading ?? 0,
      latitude: l.latitude,
      longitude: l.longitude,
      speed: l.speed ?? 0,
      time: l.time,
    },
    time: l.time,
  };
}

/** A match record as `GET /v2/realm/<r>/search?searchString=` shows it (label null when unset). */
export function restSearchRecord(record: MatchRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: record.id,
    type: record.type,
    label: record.label,
    field: record.field,
    value: record.value,
    start: record.start,
    end: record.end,
  };
  if (record.property !== undefined) out.property = record.property;
  out.score = record.score;
  return out;
}
