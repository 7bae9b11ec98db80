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
