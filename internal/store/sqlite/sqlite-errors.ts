/**
 * Translation of SQLite errors into the error catalogue, done once at the adapter
 * boundary. Constraint violations become `conflict` only where the caller names what
 * conflicted (the callers know which key can collide); a busy or locked database is
 * `unavailable`; anything else becomes `internal` without leaking SQLite's text.
 */
import Database from 'better-sqlite3';
import { LocusError, toLocusError } from '../../errors.js';

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE']);
const BUSY_CODES = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT', 'SQLITE_LOCKED']);

/** True for a busy or locked database (another connection holds the lock asked for). */
export function isBusy(err: unknown): boolean {
  return err instanceof Database.SqliteError && BUSY_CODES.has(err.code);
}

/** True for a primary-key or unique-index violation. */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof Database.SqliteError && UNIQUE_CODES.has(err.code);
}

/**
 * True for an error one write may cause on its own: a JavaScript error, or a constraint
 * violation (its data). SQLite's other errors (a busy, locked or full database, an I/O
 * error) are the database's: every write would meet them.
 */
export function isWriteSpecific(err: unknown): boolean {
  return !(err instanceof Database.SqliteError) || err.code.startsWith('SQLITE_CONSTRAINT');
}

export function translateSqliteError(err: unknown): LocusError {
  if (err instanceof LocusError) return err;
  if (isBusy(err)) {
    return new LocusError('unavailable', 'store is busy', { cause: err });
  }
  return toLocusError(err);
}

/**
 * Runs a synchronous store operation and settles a promise with its result, its
 * errors translated. better-sqlite3 is synchronous; the port is asynchronous.
 */
export function settle<T>(operation: () => T): Promise<T> {
  try {
    return Promise.resolve(operation());
  } catch (err) {
    return Promise.reject(translateSqliteError(err));
  }
}
