/**
 * Database names of the MongoDB store. Pure.
 *
 * MongoDB database names may not hold `/\. "$*<>:|?` or NUL, must stay below 64 bytes,
 * and two names that differ only in case cannot coexist. A realm's database is named
 * from its control database and its key: a readable, sanitised prefix of the key, then a
 * hash of the whole key (lower-case hex), so that two keys never share a database, even
 * when their readable parts (cut, sanitised or differing in case only) coincide.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../../config/config.js';

/** The control database when the URL names none. */
export const DEFAULT_CONTROL_DATABASE = 'locus';
/** MongoDB allows names of fewer than 64 bytes. */
export const MAX_DATABASE_NAME_BYTES = 63;
/** Hex digits of the key's SHA-256 in a realm database name (48 bits). */
const HASH_DIGITS = 12;
/** Longest control database name: room must remain for a realm's readable part and hash. */
export const MAX_CONTROL_NAME_BYTES = 32;
const FORBIDDEN = /[/\\. "$*<>:|?\0]/;
const UNSAFE = /[^A-Za-z0-9_-]/g;

/**
 * The control database named by a `mongodb://` or `mongodb+srv://` URL's path (`locus`
 * when it names none). ConfigError when the name is not a safe database name.
 */
export function controlDatabaseName(url: string): string {
  const schemeEnd = url.indexOf('://');
  const rest = schemeEnd < 0 ? url : url.slice(schemeEnd + 3);
  const slash = rest.indexOf('/');
  if (slash < 0) return DEFAULT_CONTROL_DATABASE;
  const path = rest.slice(slash + 1).split('?')[0] ?? '';
  if (path === '') return DEFAULT_CONTROL_DATABASE;
  let name: string;
  try {
    name = decodeURIComponent(path);
  } catch {
    throw new ConfigError(`LOCUS_STORE: the database name "${path}" is not valid URL encoding`);
  }
  if (FORBIDDEN.test(name) || Buffer.byteLength(name) > MAX_CONTROL_NAME_BYTES) {
    throw new ConfigError(
      `LOCUS_STORE: the database name "${name}" must have at most ${MAX_CONTROL_NAME_BYTES} bytes and none of / \\ . " $ * < > : | ? space`,
    );
  }
  return name;
}

/** The database of the realm with this key: `<control>_<readable key>_<hash>`. */
export function realmDatabaseName(control: string, realmKey: string): string {
  const hash = createHash('sha256').update(realmKey, 'utf8').digest('hex').slice(0, HASH_DIGITS);
  const room = MAX_DATABASE_NAME_BYTES - Buffer.byteLength(control) - HASH_DIGITS - 2;
  // Only ASCII remains after sanitising: one byte per character.
  const readable = realmKey.replace(UNSAFE, '_').slice(0, Math.max(0, room));
  return `${control}_${readable}_${hash}`;
}

/** True for a database this store's control database names (its own or a realm's). */
export function isStoreDatabase(control: string, name: string): boolean {
  return name === control || name.startsWith(`${control}_`);
}
