/** The MongoDB store's history cursor (store/cursor.ts encodes the cursors; store/pages.ts builds the pages). Pure. */
import { invalid } from '../../errors.js';
import { decodeCursor } from '../cursor.js';

const NORMALISED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The fix time a history cursor names; `invalid_cursor` unless it is a real normalised time. */
export function historyCursorTime(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const time = decodeCursor(cursor);
  const ms = Date.parse(time);
  if (!NORMALISED_TIME.test(time) || Number.isNaN(ms) || new Date(ms).toISOString() !== time) throw invalid('cursor is not valid', 'invalid_cursor');
  return time;
}
