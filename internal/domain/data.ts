/**
 * Free-form data properties: JSON objects whose values are numbers, strings, booleans,
 * null, and nested objects and arrays (decisions.md: Hivekit's own tutorial writes an
 * object into an object's data). Pure.
 */
import { invalid } from '../errors.js';
import { checkName, describe, hasLoneSurrogate, isJsonObject, keyPath, quote, requireObject } from './ids.js';
import type { Data, DataPatch, DataValue } from './types.js';

/**
 * Most members one object's (or area's) data may hold: its keys and, inside nested values,
 * every key of an object and every element of an array, counted at all levels together.
 * Flat data thus holds at most 1000 keys, and nesting cannot hide more.
 */
export const MAX_DATA_KEYS = 1000;

/**
 * Longest string value, in UTF-16 code units; also the longest key inside a nested value.
 * Data is a tracked object's state: each write keeps a copy in the history and its words
 * in the search index, so a megabyte string would be stored and indexed over and over.
 */
export const MAX_DATA_STRING_CHARS = 16_384;

/**
 * Deepest nesting of data (objects, areas and realms alike): the data object itself is
 * level 1, each object or array in it one level more, so a value at the top level may hold
 * objects and arrays down to level 8. Deep enough for any record a client keeps, shallow
 * enough that every reader (JSON functions of the stores, recursive walks) stays cheap.
 */
export const MAX_DATA_DEPTH = 8;

/**
 * What a walk over nested values still allows: `left` members (object data), or null for
 * realm data, whose size is bounded as JSON text instead (realm-entity.ts).
 */
export interface DataBudget {
  left: number;
  /** The data's name in messages (`data`, `objects[3].data`). */
  where: string;
}

/** Counts `members` against the budget (none for realm data). */
function spend(budget: DataBudget | null, members: number): void {
  if (budget === null) return;
  budget.left -= members;
  if (budget.left >= 0) return;
  throw invalid(
    `${budget.where} holds more than ${MAX_DATA_KEYS} keys and array elements in all (nested values included); at most ${MAX_DATA_KEYS} are allowed`,
    'invalid_data',
  );
}

function checkString(text: string, path: string, what: string, budget: DataBudget | null): void {
  if (budget !== null && text.length > MAX_DATA_STRING_CHARS) {
    throw invalid(`${path}${what} is ${text.length} characters long; at most ${MAX_DATA_STRING_CHARS} are allowed`, 'invalid_data');
  }
  if (hasLoneSurrogate(text)) throw invalid(`${path}${what} holds an unpaired UTF-16 surrogate (not valid Unicode)`, 'invalid_data');
}

/**
 * Checks one data value at `path`, which sits inside a container of level `level - 1` (a
 * top-level value: level 2), and returns it unchanged. Scalars: finite numbers, strings
 * (valid Unicode; with a budget at most MAX_DATA_STRING_CHARS long), booleans, null.
 * Objects (plain JSON objects only; keys any valid Unicode text) and arrays: at most
 * MAX_DATA_DEPTH levels, each member counted against the budget. Code `invalid_data`.
 */
export function checkDataValue(value: unknown, path: string, level: number, budget: DataBudget | null): DataValue {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalid(`${path} must be a finite number (got ${describe(value)})`, 'invalid_data');
    return value;
  }
  if (typeof value === 'string') {
    checkString(value, path, '', budget);
    return value;
  }
  const isArray = Array.isArray(value);
  if (!isArray && !isJsonObject(value)) {
    throw invalid(`${path} must be a JSON value: a number, string, boolean, null, object or array (got ${describe(value)})`, 'invalid_data');
  }
  if (level > MAX_DATA_DEPTH) {
    throw invalid(
      `${path} is nested too deeply: data may hold at most ${MAX_DATA_DEPTH} levels of objects and arrays (the data object is level 1)`,
      'invalid_data',
    );
  }
  if (isArray) {
    const items: unknown[] = value;
    spend(budget, items.length);
    for (let i = 0; i < items.length; i++) checkDataValue(items[i], `${path}[${i}]`, level + 1, budget);
    return value as DataValue[];
  }
  const keys = Object.keys(value);
  spend(budget, keys.length);
  for (const key of keys) {
    checkString(key, path, ` has a key ${quote(key)} that`, budget);
    checkDataValue(value[key], keyPath(path, key), level + 1, budget);
  }
  return value as { [key: string]: DataValue };
}

/**
 * Validates data as given in a write: a plain JSON object (not an array, not null) with
 * at most 1000 keys of 1–256 UTF-8 bytes without control characters; every value a JSON
 * value as checkDataValue takes it (null at the top level removes the key in an update),
 * at most MAX_DATA_KEYS members in all and MAX_DATA_DEPTH levels deep. Strings must be
 * valid Unicode (no unpaired surrogates), so that every storage backend keeps them
 * unchanged. Code `invalid_data`. Built with Object.fromEntries: a key `__proto__` stays
 * an ordinary own key.
 */
export function parseDataPatch(value: unknown, where: string): DataPatch {
  const object = requireObject(value, where, 'invalid_data');
  const keys = Object.keys(object);
  if (keys.length > MAX_DATA_KEYS) {
    throw invalid(`${where} has ${keys.length} keys; at most ${MAX_DATA_KEYS} are allowed`, 'invalid_data');
  }
  const budget: DataBudget = { left: MAX_DATA_KEYS - keys.length, where };
  const entries: [string, DataValue][] = [];
  for (const key of keys) {
    checkName(key, () => (key === '' ? `${where} key` : `${where} key ${quote(key)}`), 'invalid_data');
    const item: unknown = object[key];
    if (item === undefined) continue; // not JSON; counts as absent
    entries.push([key, checkDataValue(item, keyPath(where, key), 2, budget)]);
  }
  return Object.fromEntries<DataValue>(entries);
}

/** Data for a create: like parseDataPatch, with keys set to null dropped. */
export function parseData(value: unknown, where: string): Data {
  const patch = parseDataPatch(value, where);
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null)) as Data;
}

/** True for a nested value (an object or an array), which filters never compare (decisions.md). */
export function isNested(value: DataValue | undefined): value is DataValue[] | { [key: string]: DataValue } {
  return typeof value === 'object' && value !== null;
}

/**
 * True when two data values are the same JSON: equal scalars, or nested values equal member
 * by member with their keys in the same order (a reordered object reads differently).
 * Nested values read back from a store are new objects each time, so identity says little.
 */
export function sameDataValue(a: DataValue | undefined, b: DataValue | undefined): boolean {
  if (a === b) return true;
  if (!isNested(a) || !isNested(b)) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameDataValue(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== other[i] || !sameDataValue(a[key], b[key])) return false;
  }
  return true;
}
