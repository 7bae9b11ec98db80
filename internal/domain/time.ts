/** ISO 8601 timestamps, normalised to UTC `YYYY-MM-DDTHH:mm:ss.sssZ`. Pure. */
import { invalid, type ErrorCode } from '../errors.js';
import { describe, quote } from './ids.js';

// date T hh:mm[:ss[.fraction]] (Z | ±hh:mm | ±hhmm). RFC 3339 also allows a lower-case t/z.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses an ISO 8601 date-time with `Z` or an offset (`±hh:mm`, also `±hhmm`); seconds
 * and a fraction of any length are optional. The date and time must exist (no
 * 2023-02-29, month 13, hour 24, second 60) and the instant must fall in the years
 * 0000–9999 once converted to UTC. Returns `YYYY-MM-DDTHH:mm:ss.sssZ` (digits below the
 * millisecond are dropped, not rounded). `where` names the value in messages.
 */
export function normalizeTime(value: unknown, where: string, code: ErrorCode = 'invalid_request'): string {
  if (typeof value === 'string') {
    const canonical = canonicalTime(value);
    if (canonical !== null) return canonical;
  }
  if (typeof value !== 'string') {
    throw invalid(`${where} must be an ISO 8601 date-time string such as "2024-05-01T12:00:00Z" (got ${describe(value)})`, code);
  }
  const match = ISO_DATE_TIME.exec(value);
  if (match === null) {
    throw invalid(
      `${where} must be an ISO 8601 date-time with Z or an offset, such as "2024-05-01T12:00:00Z" or "2024-05-01T14:00:00+02:00" (got ${quote(value)})`,
      code,
    );
  }
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const bad = (what: string): never => {
    throw invalid(`${where} is not a real date-time: ${what} (got ${quote(value)})`, code);
  };
  if (month < 1 || month > 12) bad(`month ${mo} does not exist`);
  if (day < 1 || day > daysInMonth(year, month)) bad(`day ${d} does not exist in ${y}-${mo}`);
  if (hour > 23) bad(`hour ${h} does not exist (00–23)`);
  if (minute > 59) bad(`minute ${mi} does not exist (00–59)`);
  if (second > 59) bad(`second ${s} does not exist (00–59)`);
  let offsetMinutes = 0;
  if (zulu === undefined) {
    const offsetHours = Number(oh);
    const offsetMins = Number(om);
    if (offsetHours > 23 || offsetMins > 59) bad(`offset ${sign}${oh}:${om} does not exist`);
    offsetMinutes = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear does not.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  const utc = new Date(date.getTime() - offsetMinutes * 60_000);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < 0 || utcYear > 9999) {
    throw invalid(`${where} falls outside the years 0000–9999 once converted to UTC (got ${quote(value)})`, code);
  }
  return utc.toISOString();
}

const ZERO = 48;

/** Two decimal digits at `at`, or -1. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - ZERO;
  const b = text.charCodeAt(at + 1) - ZERO;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The fast path of normalizeTime, for what clients mostly send: UTC as
 * `YYYY-MM-DDTHH:mm:ssZ` or `YYYY-MM-DDTHH:mm:ss.sssZ`, a date and time that exist.
 * Returns the normalised text (the input, with `.000` added to the short form), or null
 * for anything else, which the general path then parses (and accepts or rejects).
 */
function canonicalTime(text: string): string | null {
  const long = text.length === 24;
  if (!long && text.length !== 20) return null;
  if (text.charCodeAt(text.length - 1) !== 90 /* Z */) return null;
  if (text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return null;
  if (long && (text[19] !== '.' || twoDigits(text, 20) < 0 || twoDigits(text, 21) < 0)) return null;
  const high = twoDigits(text, 0);
  const low = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (high < 0 || low < 0 || month < 1 || month > 12 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return null;
  }
  if (day < 1 || day > daysInMonth(high * 100 + low, month)) return null;
  return long ? text : `${text.slice(0, 19)}.000Z`;
}
