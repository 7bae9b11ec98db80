/** Free-form data properties: flat JSON objects of numbers, strings, booleans and null. */
import { invalid } from '../errors.js';
import { checkName, describe, hasLoneSurrogate, keyPath, quote, requireObject } from './ids.js';
import type { Data, DataPatch, DataValue } from './types.js';

/** Most properties one data object may hold. */
export const MAX_DATA_KEYS = 1000;

/**
 * Longest string value, in UTF-16 code units. Data is a tracked object's state: each
 * write keeps a copy in the history and its words in the search index, so a megabyte
 * string would be stored and indexed over and over.
 */
export const MAX_DATA_STRING_CHARS = 16_384;

/**
 * Validates data as given in a write: a plain JSON object (not an array, not null) with
 * at most 1000 keys of 1–256 UTF-8 bytes without control characters; every value is a
 * finite number, a string of at most 16,384 characters, a boolean or null (null removes the key in an update). A
 * nested object or array is a 400 naming the key. Strings must be valid Unicode (no
 * unpaired surrogates), so that every storage backend keeps them unchanged.
 * Code `invalid_data`. Built with Object.fromEntries: a key `__proto__` stays an
 * ordinary own key.
 */
export function parseDataPatch(value: unknown, where: string): DataPatch {
  const object = requireObject(value, where, 'invalid_data');
  const keys = Object.keys(object);
  if (keys.length > MAX_DATA_KEYS) {
    throw invalid(`${where} has ${keys.length} keys; at most ${MAX_DATA_KEYS} are allowed`, 'invalid_data');
  }
  const entries: [string, DataValue][] = [];
  for (const key of keys) {
    checkName(key, () => (key === '' ? `${where} key` : `${where} key ${quote(key)}`), 'invalid_data');
    const item: unknown = object[key];
    if (item === undefined) continue; // not JSON; counts as absent
    entries.push([key, parseDataValue(item, where, key)]);
  }
  return Object.fromEntries<DataValue>(entries);
}

/** A data value; `where` and `key` name it in messages. */
function parseDataValue(value: unknown, where: string, key: string): DataValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`${keyPath(where, key)} must be a finite number (got ${describe(value)})`, 'invalid_data');
    return value;
  }
  if (typeof value === 'string') {
    if (value.length > MAX_DATA_STRING_CHARS) {
      throw invalid(`${keyPath(where, key)} is ${value.length} characters long; at most ${MAX_DATA_STRING_CHARS} are allowed`, 'invalid_data');
    }
    if (hasLoneSurrogate(value)) {
      throw invalid(`${keyPath(where, key)} holds an unpaired UTF-16 surrogate (not valid Unicode)`, 'invalid_data');
    }
    return value;
  }
  const path = keyPath(where, key);
  const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  throw invalid(
    `${path} must be a number, string, boolean or null; nested objects and arrays are not allowed (got ${kind})`,
    'invalid_data',
  );
}

/** Data for a create: like parseDataPatch, with keys set to null dropped. */
export function parseData(value: unknown, where: string): Data {
  const patch = parseDataPatch(value, where);
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null)) as Data;
}
