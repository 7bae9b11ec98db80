/**
 * Opaque page cursors shared by every store adapter.
 *
 * A cursor names the last id of the page it ends (pages are in id order, so the next
 * page starts after it). It is base64url of a small JSON object `{"v":1,"after":id}`:
 * opaque to clients, versioned so that its content may change later, and decoded
 * strictly, so that anything that was not produced by encodeCursor is rejected with
 * `invalid_cursor` rather than silently restarting a listing.
 */
import { invalid, type LocusError } from '../errors.js';

const CURSOR_VERSION = 1;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ v: CURSOR_VERSION, after: lastId }), 'utf8').toString('base64url');
}

/** The last id named by `cursor`; throws `invalid_cursor` on anything malformed. */
export function decodeCursor(cursor: string): string {
  const bad = (): LocusError => invalid('cursor is not valid', 'invalid_cursor');
  if (typeof cursor !== 'string' || !BASE64URL.test(cursor)) throw bad();
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder skips stray bits; only the canonical spelling is accepted.
  if (bytes.toString('base64url') !== cursor) throw bad();
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.decode(bytes));
  } catch {
    throw bad();
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad();
  const keys = Object.keys(parsed);
  if (keys.length !== 2) throw bad();
  const { v, after } = parsed as { v?: unknown; after?: unknown };
  if (v !== CURSOR_VERSION || typeof after !== 'string' || after.length === 0) throw bad();
  return after;
}
