/**
 * Reading the top-level keys of v1 messages (compat 3.2, 4.2): ids, the optional `dat`
 * options object, and an object write's `lab`/`loc`/`dat` mapped onto the body the domain
 * validates (domain/object-input.ts), so that v1 and REST share every value rule.
 */
import { describe, isJsonObject, parseIdAt } from '../../../domain/ids.js';
import { parseTasks } from '../../../domain/object-input.js';
import { invalid, LocusError, toLocusError } from '../../../errors.js';
import type { V1Message } from '../v1-handler.js';

/** The message's `id`, validated (`what` names it in messages: "id"). */
export function idOf(message: V1Message, what = 'id'): string {
  if (message.raw.id === undefined) throw invalid(`${what} is required`, 'invalid_id');
  return parseIdAt(message.raw.id, what);
}

/** The message's `dat` as an options object; absent or null: `{}`. */
export function optionsOf(message: V1Message): Record<string, unknown> {
  const dat = message.raw.dat;
  if (dat === undefined || dat === null) return {};
  if (!isJsonObject(dat)) throw invalid(`dat must be a JSON object of options (got ${describe(dat)})`);
  return dat;
}

/** v1 location key → the domain's (compat 3.3). `time` is the client's string alias of `tim`. */
const LOCATION_KEYS: Readonly<Record<string, string>> = {
  lon: 'longitude',
  lat: 'latitude',
  alt: 'altitude',
  spe: 'speed',
  hea: 'heading',
  acc: 'accuracy',
  alc: 'altitudeAccuracy',
};
const SHORT_NAMES: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(LOCATION_KEYS).map(([short, long]) => [long, short]));

/**
 * `loc` as the domain's location: the short keys renamed, `tim` (or else `time`) as `time`,
 * `gcs` and unknown keys (`undefined`, …) left out. Values are the domain's to check.
 */
export function locationBody(loc: unknown): unknown {
  if (!isJsonObject(loc)) return loc;
  // Key by key, not a loop over entries: this runs for every location update.
  const out: Record<string, unknown> = {};
  const { lon, lat, alt, spe, hea, acc, alc } = loc;
  if (lon !== undefined) out.longitude = lon;
  if (lat !== undefined) out.latitude = lat;
  if (alt !== undefined) out.altitude = alt;
  if (spe !== undefined) out.speed = spe;
  if (hea !== undefined) out.heading = hea;
  if (acc !== undefined) out.accuracy = acc;
  if (alc !== undefined) out.altitudeAccuracy = alc;
  const time = loc.tim ?? loc.time;
  if (time !== undefined && time !== null) out.time = time;
  return out;
}

/**
 * The body of an object write (`cre`, `upd`, `set`): `lab` → label (replaces; null clears),
 * `loc` → location (replaces), `dat` → data (merged; null removes a key). Other keys are
 * ignored; `tds` is read by tasksOf.
 */
export function objectWriteBody(message: V1Message): Record<string, unknown> {
  const { lab, loc, dat } = message.raw;
  const body: Record<string, unknown> = {};
  if (lab !== undefined) body.label = lab;
  if (loc !== undefined) body.location = locationBody(loc);
  if (dat !== undefined) body.data = dat;
  return body;
}

/**
 * An object write's `tds` (compat 4.2): the task ids that replace the object's ([] clears
 * them), validated (domain parseTasks: ids, at most 1,000); undefined when not given.
 * null counts as not given (the client sends no `tds` it was not given).
 */
export function tasksOf(message: V1Message): string[] | undefined {
  const tds = message.raw.tds;
  return tds === undefined || tds === null ? undefined : parseTasks(tds, 'tds');
}

/** A domain message about a write body, with the v1 key names (`loc.lon`, `lab`, `dat`). */
export function v1Wording(err: unknown): Error {
  if (!(err instanceof LocusError)) return err instanceof Error ? err : toLocusError(err);
  const text = err.message
    .replace(/\blocation\.(longitude|latitude|altitude|speed|heading|accuracy|altitudeAccuracy|time)\b/g, (_all, key: string) => `loc.${key === 'time' ? 'tim' : (SHORT_NAMES[key] ?? key)}`)
    .replace(/(^|[\s(])location\b/g, '$1loc')
    .replace(/(^|[\s(])label\b/g, '$1lab')
    .replace(/(^|[\s(])data(?=[.[\s])/g, '$1dat');
  if (text === err.message) return err;
  return new LocusError(err.code, text, { cause: err, headers: { ...err.headers } });
}
