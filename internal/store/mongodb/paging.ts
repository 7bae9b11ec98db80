/** Page limits and cursors of the MongoDB store's lists (store/cursor.ts encodes the cursors). Pure. */
import { invalid } from '../../errors.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { Page } from '../port.js';

export const MAX_PAGE = 10_000;
const NORMALISED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw invalid(`limit must be an integer from 1 to ${MAX_PAGE}`, 'invalid_query');
}

/** Validates a page limit and returns the id after which the page starts ('' sorts before every id). */
export function pageStart(query: { limit: number; cursor?: string }): string {
  checkLimit(query.limit);
  return query.cursor === undefined ? '' : decodeCursor(query.cursor);
}

/** The fix time a history cursor names; `invalid_cursor` unless it is a real normalised time. */
export function historyCursorTime(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const time = decodeCursor(cursor);
  const ms = Date.parse(time);
  if (!NORMALISED_TIME.test(time) || Number.isNaN(ms) || new Date(ms).toISOString() !== time) throw invalid('cursor is not valid', 'invalid_cursor');
  return time;
}

/** A page from up to limit + 1 items: the extra one only says that more remain. */
export function toPage<R, T>(rows: R[], limit: number, convert: (row: R) => T, key: (row: R) => string): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(convert), next: more && last !== undefined ? encodeCursor(key(last)) : null };
}
