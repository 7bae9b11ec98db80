/**
 * An object's current location as its row holds it (schema.ts version 9): `lon`, `lat`,
 * `loc_time` (the normalised time as text) and `loc_extra`, the fix's optional numbers
 * (altitude, speed, heading, accuracy, altitudeAccuracy) as one byte whose bit i says that
 * the i-th is present, then each present one as a little-endian double; NULL when the fix
 * has none. An object has a location exactly when `loc_time` is not NULL.
 *
 * Before version 9 the row also held the location as JSON text (about 100 bytes, which
 * repeated lon, lat and loc_time). A location update formatted it (JSON.stringify was
 * about 5% of the server's profile under the v1 throughput load) and a read parsed it;
 * without it a row is about a third smaller, so that a commit of random updates writes
 * fewer pages.
 */
import type { Location } from '../../domain/types.js';

/** The optional keys of a location, in the order of their bits and of parseLocation's output. */
const OPTIONAL_KEYS = ['altitude', 'speed', 'heading', 'accuracy', 'altitudeAccuracy'] as const;

/** Where locationExtra encodes (its result is a view of it). */
const scratch = Buffer.alloc(1 + 8 * OPTIONAL_KEYS.length);
/** Views of scratch by the number of optional numbers they hold. */
const views = OPTIONAL_KEYS.map((_, i) => scratch.subarray(0, 1 + 8 * (i + 1)));

/**
 * The `loc_extra` value of a location (null: no optional numbers). The result is a view of
 * one shared buffer, valid until the next call: bind it to a statement at once (better-sqlite3
 * copies what it binds) and keep no reference to it.
 */
export function locationExtra(location: Location): Uint8Array | null {
  let mask = 0;
  let count = 0;
  for (let i = 0; i < OPTIONAL_KEYS.length; i++) {
    const value = location[OPTIONAL_KEYS[i] as (typeof OPTIONAL_KEYS)[number]];
    if (value === undefined) continue;
    mask |= 1 << i;
    scratch.writeDoubleLE(value, 1 + 8 * count);
    count++;
  }
  if (count === 0) return null;
  scratch[0] = mask;
  return views[count - 1] as Buffer;
}

/**
 * The location a row holds, completed from its longitude and latitude: keys in the order
 * parseLocation gives them (responses read as the JSON text of earlier versions did).
 * Callers build `position` as `{ longitude: lon + 0, latitude: lat + 0 }` (`+ 0` turns a
 * -0 into 0, as that text did) with an object literal of their own: V8 decides per
 * allocation site whether to allocate in the old generation (see rows.ts objectFromRow).
 */
export function completeLocation(position: { longitude: number; latitude: number }, extra: Buffer | null, time: string): Location {
  const location = position as Partial<Record<keyof Location, number | string>>;
  if (extra !== null) {
    const mask = extra[0] as number;
    let at = 1;
    for (let i = 0; i < OPTIONAL_KEYS.length; i++) {
      if ((mask & (1 << i)) === 0) continue;
      location[OPTIONAL_KEYS[i] as (typeof OPTIONAL_KEYS)[number]] = extra.readDoubleLE(at) + 0;
      at += 8;
    }
  }
  location.time = time;
  return location as Location;
}
