/** Location fixes as sent by clients. Pure. */
import { invalid } from '../errors.js';
import { describe, keyPath, quote, requireObject } from './ids.js';
import { normalizeTime } from './time.js';
import type { Location } from './types.js';

type NumericKey = Exclude<keyof Location, 'time'>;

/** Allowed range of every numeric key; `undefined` bound: unbounded. */
const NUMERIC: Record<NumericKey, { min?: number; max?: number; required: boolean }> = {
  longitude: { min: -180, max: 180, required: true },
  latitude: { min: -90, max: 90, required: true },
  altitude: { required: false },
  speed: { min: 0, required: false },
  heading: { min: 0, max: 360, required: false },
  accuracy: { min: 0, required: false },
  altitudeAccuracy: { min: 0, required: false },
};
const NUMERIC_KEYS = Object.keys(NUMERIC) as NumericKey[];
const ALLOWED = new Set<string>([...NUMERIC_KEYS, 'time']);

function rangeText(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `a number between ${min} and ${max}`;
  if (min !== undefined) return `a number ≥ ${min}`;
  return 'a finite number';
}

/**
 * Validates a location: longitude (−180..180) and latitude (−90..90) required; optional
 * altitude, speed (≥ 0), heading (0..360), accuracy (≥ 0), altitudeAccuracy (≥ 0), all
 * finite numbers; optional `time` (ISO 8601, normalised), `now` when absent. Null for the
 * location or any field, or an unknown key, is a 400 `invalid_location` naming the path.
 * The result holds only the keys given, plus time.
 */
export function parseLocation(value: unknown, now: string, where: string): Location {
  const object = requireObject(value, where, 'invalid_location');
  for (const key of Object.keys(object)) {
    if (!ALLOWED.has(key)) {
      throw invalid(
        `unknown key ${quote(key)} in ${where}; allowed: ${[...ALLOWED].join(', ')}`,
        'invalid_location',
      );
    }
  }
  // Keys in NUMERIC_KEYS order, then time (every location has the same shape of object).
  const location: Partial<Record<keyof Location, number | string>> = {};
  for (const key of NUMERIC_KEYS) {
    const rule = NUMERIC[key];
    // Only allowed keys are own properties here (checked above), none of Object.prototype's.
    const item = object[key];
    if (item === undefined) {
      if (rule.required) throw invalid(`${keyPath(where, key)} is required`, 'invalid_location');
      continue;
    }
    if (
      typeof item !== 'number' ||
      !Number.isFinite(item) ||
      (rule.min !== undefined && item < rule.min) ||
      (rule.max !== undefined && item > rule.max)
    ) {
      throw invalid(`${keyPath(where, key)} must be ${rangeText(rule.min, rule.max)} (got ${describe(item)})`, 'invalid_location');
    }
    location[key] = item;
  }
  const time = object.time;
  location.time = time === undefined ? now : normalizeTime(time, where === '' ? 'time' : `${where}.time`, 'invalid_location');
  return location as Location;
}

/** True when both are absent or both describe the same fix. */
export function sameLocation(a: Location | null, b: Location | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  return (
    a.longitude === b.longitude &&
    a.latitude === b.latitude &&
    a.time === b.time &&
    a.altitude === b.altitude &&
    a.speed === b.speed &&
    a.heading === b.heading &&
    a.accuracy === b.accuracy &&
    a.altitudeAccuracy === b.altitudeAccuracy
  );
}
