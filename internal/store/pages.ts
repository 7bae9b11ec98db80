/**
 * Pages of a read (objects, areas, history), shared by every store adapter: the limit, the
 * cursor (cursor.ts), and the page built from one row too many. Pure.
 */
import { invalid } from '../errors.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { Page } from './port.js';

export const MAX_PAGE = 10_000;

/** Throws `invalid_query` unless the limit is an integer from 1 to MAX_PAGE. */
export function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw invalid(`limit must be an integer from 1 to ${MAX_PAGE}`, 'invalid_query');
  }
}

/** Validates a page limit and returns the id after which the page starts ('' sorts before every id). */
export function pageStart(query: { limit: number; cursor?: string }): string {
  checkLimit(query.limit);
  return query.cursor === undefined ? '' : decodeCursor(query.cursor);
}

/** Builds a page from up to limit + 1 items: the extra one only says that more remain. */
export function toPage<R, T>(rows: R[], limit: number, convert: (row: R) => T, key: (row: R) => string): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { items: kept.map(convert), next: more && last !== undefined ? encodeCursor(key(last)) : null };
}

export const emptyPage = <T>(): Page<T> => ({ items: [], next: null });
