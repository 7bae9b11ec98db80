/**
 * Past fixes: as `history` held them from schema.ts version 7 to 9, as an object row holds
 * them (version 8) and as `history` holds them since version 10 (chunks).
 *
 * Version 7: rows of `history` keyed by the object's rowid and
 * the fix's time in milliseconds since 1970 (UTC), with one REAL column per numeric key
 * of a location (NULL when the fix has none). About 35 bytes a row instead of about 130
 * with the realm, the id, the time and the location as text. A location update inserts
 * a past fix at a random place of the table, and the row size is most of that cost: with
 * rows a quarter of the size a page splits a quarter as often, the table stays in the
 * page cache four times as long, and the WAL takes about half the bytes per insert
 * (measured at 10,000 objects with 100 past fixes each: 14 µs of CPU per insert
 * instead of 44).
 *
 * Times convert exactly: normalised times (domain/time.ts) have whole milliseconds and
 * years 0000–9999, which Date.parse and toISOString map one to one, in the same order.
 */
import type { Location } from '../../domain/types.js';

/** The columns of a read, in the order of StoredFix. */
export const STORED_FIX_COLUMNS = 'time, lon, lat, altitude, speed, heading, accuracy, altitude_accuracy';

/** The columns of `history`, in the order of FixRow. */
export const FIX_COLUMNS = `orow, ${STORED_FIX_COLUMNS}`;

/** A row as read (STORED_FIX_COLUMNS): the fix without its object. */
export type StoredFix = [
  time: number,
  lon: number,
  lat: number,
  altitude: number | null,
  speed: number | null,
  heading: number | null,
  accuracy: number | null,
  altitudeAccuracy: number | null,
  /**
   * The snapshot of the object's label and data this fix was written with (schema.ts
   * version 12: the object row's `ver` at that write); absent means 0.
   */
  ver?: number,
];

/** The snapshot version of a stored fix (0 when it has none). */
export function fixVersion(fix: StoredFix): number {
  return fix[8] ?? 0;
}

/** A fix as stored with its snapshot version (a fix of version 0 stays without one: the same bytes as before version 12). */
export function versioned(fix: StoredFix, ver: number): StoredFix {
  if (ver !== 0) fix[8] = ver;
  return fix;
}

/** A row as written (FIX_COLUMNS): the object's rowid, then the fix. */
export type FixRow = [orow: number, ...fix: StoredFix];

const digit = (text: string, at: number): number => text.charCodeAt(at) - 48;

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/**
 * A normalised time (`YYYY-MM-DDTHH:mm:ss.sssZ`) as stored: milliseconds since 1970, the
 * value of Date.parse, computed from its digits (Date.parse was 2.6% of the server's
 * profile under the v1 throughput load). Any other text goes to Date.parse.
 */
export function fixTime(time: string): number {
  if (time.length !== 24 || time.charCodeAt(23) !== 90 /* Z */) return Date.parse(time);
  const year = digit(time, 0) * 1000 + digit(time, 1) * 100 + digit(time, 2) * 10 + digit(time, 3);
  const month = digit(time, 5) * 10 + digit(time, 6);
  const day = digit(time, 8) * 10 + digit(time, 9);
  const seconds = (digit(time, 11) * 10 + digit(time, 12)) * 3600 + (digit(time, 14) * 10 + digit(time, 15)) * 60 + digit(time, 17) * 10 + digit(time, 18);
  const millis = digit(time, 20) * 100 + digit(time, 21) * 10 + digit(time, 22);
  return daysFromCivil(year, month, day) * 86_400_000 + seconds * 1000 + millis;
}

export function fixRow(orow: number, fix: Location): FixRow {
  return [orow, ...storedFix(fix)];
}

/**
 * The fix a row holds, with its keys in the order parseLocation gives them (responses
 * read the same as for the current location). `+ 0` turns a -0 into 0, as the JSON text
 * of the current location does.
 */
export function fixFromRow(row: StoredFix): Location {
  const location: Partial<Record<keyof Location, number | string>> = { longitude: row[1] + 0, latitude: row[2] + 0 };
  if (row[3] !== null) location.altitude = row[3] + 0;
  if (row[4] !== null) location.speed = row[4] + 0;
  if (row[5] !== null) location.heading = row[5] + 0;
  if (row[6] !== null) location.accuracy = row[6] + 0;
  if (row[7] !== null) location.altitudeAccuracy = row[7] + 0;
  location.time = new Date(row[0]).toISOString();
  return location as Location;
}

/**
 * Past fixes an object's row holds (column `past`, schema.ts version 8) before they move
 * to `history` together: a location update then changes only the object's row, whose
 * page it writes anyway, and one update in PAST_BUFFER_FIXES also writes the history
 * page of that object (which takes all of them at once), instead of every update writing
 * one of each.
 */
export const PAST_BUFFER_FIXES = 8;

/** The optional numbers of a fix, in StoredFix order (after time, lon, lat). */
const OPTIONAL_COUNT = 5;

/** The mask bit that says a fix carries its snapshot version (schema.ts version 12). */
const VERSION_BIT = 1 << OPTIONAL_COUNT;

/**
 * A fix as held in `past`: one byte whose bits say which optional numbers are present
 * (bit i: StoredFix[3 + i]), then, as little-endian doubles, the time (ms), longitude,
 * latitude and each present optional number; then, when bit 5 is set, the fix's snapshot
 * version as a little-endian uint32 (schema.ts version 12; a fix of version 0 has none,
 * so fixes written before read as version 0). A typical tracker fix takes 41–53 bytes.
 */
function encodedLength(fix: StoredFix): number {
  let length = 1 + 3 * 8;
  for (let i = 0; i < OPTIONAL_COUNT; i++) if (fix[3 + i] !== null) length += 8;
  if ((fix[8] ?? 0) !== 0) length += 4;
  return length;
}

/** The most bytes a fix takes (every optional number present, and a version). */
export const MAX_FIX_BYTES = 1 + (3 + OPTIONAL_COUNT) * 8 + 4;

/** Encodes fixes into `out` from `at`; returns where they end. */
function encodeFixes(out: Buffer, at: number, fixes: readonly StoredFix[]): number {
  for (const fix of fixes) {
    const maskAt = at++;
    let mask = 0;
    for (let i = 0; i < 3; i++, at += 8) out.writeDoubleLE(fix[i] as number, at);
    for (let i = 0; i < OPTIONAL_COUNT; i++) {
      const value = fix[3 + i];
      if (value === null || value === undefined) continue;
      mask |= 1 << i;
      out.writeDoubleLE(value, at);
      at += 8;
    }
    const ver = fix[8] ?? 0;
    if (ver !== 0) {
      mask |= VERSION_BIT;
      out.writeUInt32LE(ver, at);
      at += 4;
    }
    out[maskAt] = mask;
  }
  return at;
}

/** Fixes (in write order) appended to a `past` value (null: none yet), in a buffer of their own. */
export function appendPast(past: Uint8Array | null, fixes: readonly StoredFix[]): Buffer {
  let length = past === null ? 0 : past.length;
  for (const fix of fixes) length += encodedLength(fix);
  const out = Buffer.allocUnsafeSlow(length);
  if (past !== null) out.set(past, 0);
  encodeFixes(out, past === null ? 0 : past.length, fixes);
  return out;
}

/**
 * Fixes encoded as a `past` value into `scratch` (which must have room for them); returns
 * a view of it, valid until `scratch` is written again: for a value bound to a statement
 * at once (better-sqlite3 copies what it binds).
 */
export function encodePastInto(scratch: Buffer, fixes: readonly StoredFix[]): Buffer {
  return scratch.subarray(0, encodeFixes(scratch, 0, fixes));
}

/**
 * A `past` value as the write path holds it from one update of an object to the next
 * (RecentObjects): its bytes as a latin1 string, one character per byte. An append is a
 * string concatenation (V8 makes a pair of the two strings, flattened only when read),
 * and the value is written out into a scratch buffer when it is bound (pastBytes).
 *
 * Earlier versions held a Buffer per object, grown in place in a buffer of room for
 * PAST_BUFFER_FIXES fixes: one ArrayBuffer per held object, thousands of them, which
 * every major garbage collection swept on the event loop (sweep_array_buffers: 2–5 ms of
 * a 7–11 ms pause, `--trace-gc-nvp`, server at 10,000 updates/s). Strings hold no pointers
 * and need no sweeping.
 */
export type HeldPast = string;

/** Scratch for pastBytes and appendHeldPast (grown when a value needs more). */
let scratch = Buffer.alloc(16 * MAX_FIX_BYTES);

function scratchOf(length: number): Buffer {
  if (scratch.length < length) scratch = Buffer.alloc(Math.max(length, scratch.length * 2));
  return scratch;
}

/** A `past` value as read from a row, held (null: none). */
export function holdPast(past: Uint8Array | null): HeldPast | null {
  if (past === null) return null;
  return Buffer.from(past.buffer, past.byteOffset, past.byteLength).toString('latin1');
}

/**
 * The bytes of a held value, for a statement to bind at once (better-sqlite3 copies what
 * it binds): a view of scratch, valid until the next call of this module's functions.
 */
export function pastBytes(held: HeldPast | null): Buffer | null {
  if (held === null) return null;
  const out = scratchOf(held.length);
  return out.subarray(0, out.write(held, 0, 'latin1'));
}

/** Fixes (in write order) appended to a held value. */
export function appendHeldPast(held: HeldPast | null, fixes: readonly StoredFix[]): HeldPast {
  let length = 0;
  for (const fix of fixes) length += encodedLength(fix);
  const out = scratchOf(length);
  const added = out.toString('latin1', 0, encodeFixes(out, 0, fixes));
  return held === null ? added : held + added;
}

/** The fixes a `past` value holds, in write order (a later one of an equal time wins). */
export function decodePast(value: Uint8Array | HeldPast | null): StoredFix[] {
  const fixes: StoredFix[] = [];
  const past = typeof value === 'string' ? pastBytes(value) : value;
  if (past === null) return fixes;
  const view = new DataView(past.buffer, past.byteOffset, past.byteLength);
  let at = 0;
  while (at < past.length) {
    const mask = view.getUint8(at++);
    const fix: StoredFix = [0, 0, 0, null, null, null, null, null];
    for (let i = 0; i < 3; i++, at += 8) fix[i] = view.getFloat64(at, true);
    for (let i = 0; i < OPTIONAL_COUNT; i++) {
      if ((mask & (1 << i)) === 0) continue;
      fix[3 + i] = view.getFloat64(at, true);
      at += 8;
    }
    if ((mask & VERSION_BIT) !== 0) {
      fix[8] = view.getUint32(at, true);
      at += 4;
    }
    fixes.push(fix);
  }
  return fixes;
}

/** How many fixes a `past` value holds (reads only the masks). */
export function pastCount(past: Uint8Array | HeldPast | null): number {
  if (past === null) return 0;
  const held = typeof past === 'string';
  let count = 0;
  for (let at = 0; at < past.length; count++) {
    let mask = held ? past.charCodeAt(at) : (past[at] as number);
    at += 1 + 3 * 8;
    if ((mask & VERSION_BIT) !== 0) {
      at += 4;
      mask &= ~VERSION_BIT;
    }
    for (; mask !== 0; mask >>= 1) if ((mask & 1) !== 0) at += 8;
  }
  return count;
}

/** A fix as stored (StoredFix), without its object. */
export function storedFix(fix: Location): StoredFix {
  return [
    fixTime(fix.time),
    fix.longitude,
    fix.latitude,
    fix.altitude ?? null,
    fix.speed ?? null,
    fix.heading ?? null,
    fix.accuracy ?? null,
    fix.altitudeAccuracy ?? null,
  ];
}

/** A bound of a history page: the operator and the time (normalised ISO). */
export type HistoryBound = ['>=' | '>' | '<=' | '<', string];

/** True when a normalised time is within every bound. */
export function withinBounds(time: string, bounds: readonly HistoryBound[]): boolean {
  for (const [op, bound] of bounds) {
    const inside = op === '>=' ? time >= bound : op === '>' ? time > bound : op === '<=' ? time <= bound : time < bound;
    if (!inside) return false;
  }
  return true;
}

/** True when a time (ms, as stored) is within every bound (their times as stored: fixTime). */
export function withinLimits(time: number, limits: readonly [HistoryBound[0], number][]): boolean {
  for (const [op, bound] of limits) {
    const inside = op === '>=' ? time >= bound : op === '>' ? time > bound : op === '<=' ? time <= bound : time < bound;
    if (!inside) return false;
  }
  return true;
}

/**
 * The longest time (ms) from the first to the last fix of a chunk of `history` (schema.ts
 * version 10): 15 minutes. Reads rely on it: a chunk that holds a time t ends at most this
 * long after t, so an ascending page reads this much past its last fix (at one fix a
 * second, about 110 chunks: 0.6 ms). A tracker reporting every two minutes still fills
 * a chunk with one flush. Never lower it without a migration that splits the chunks
 * written before.
 */
export const CHUNK_SPAN_MS = 15 * 60_000;

/** The most fixes a chunk holds (a tracker's flush is PAST_BUFFER_FIXES of them). */
export const CHUNK_FIXES = 64;

/** How past fixes are cut into chunks (options for tests). */
export interface ChunkLimits {
  span: number;
  fixes: number;
}

export const CHUNK_LIMITS: ChunkLimits = { span: CHUNK_SPAN_MS, fixes: CHUNK_FIXES };

/**
 * Past fixes, in write order, as the chunks `history` keeps: in time order, one fix per
 * time (a later write of an equal time wins), cut where a chunk would span more than
 * `limits.span` ms or hold more than `limits.fixes` fixes.
 */
export function chunkFixes(fixes: readonly StoredFix[], limits: ChunkLimits = CHUNK_LIMITS): StoredFix[][] {
  let sorted: StoredFix[] = fixes as StoredFix[];
  for (let i = 1; i < fixes.length; i++) {
    if ((fixes[i] as StoredFix)[0] <= (fixes[i - 1] as StoredFix)[0]) {
      // Out of order or repeated (rare): one per time, the last written, by time.
      const byTime = new Map<number, StoredFix>();
      for (const fix of fixes) byTime.set(fix[0], fix);
      sorted = [...byTime.values()].sort((a, b) => a[0] - b[0]);
      break;
    }
  }
  const chunks: StoredFix[][] = [];
  let chunk: StoredFix[] = [];
  for (const fix of sorted) {
    const start = chunk[0];
    if (start !== undefined && (chunk.length >= limits.fixes || fix[0] - start[0] > limits.span)) {
      chunks.push(chunk);
      chunk = [];
    }
    chunk.push(fix);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}
