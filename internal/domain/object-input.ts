/** Object write bodies (single create-or-update and bulk). Pure. */
import { invalid, LocusError } from '../errors.js';
import { parseDataPatch } from './data.js';
import { containerName, describe, hasLoneSurrogate, parseId, parseIdAt, quote, requireObject } from './ids.js';
import { parseLocation } from './location.js';
import type { ObjectPatch } from './types.js';

/** Longest label, in characters (Unicode code points). */
export const MAX_LABEL_CHARS = 1024;

/** A label: a string of at most 1024 characters (valid Unicode), or null to clear it. */
export function parseLabel(value: unknown, path: string): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') {
    throw invalid(`${path} must be a string or null (got ${describe(value)})`);
  }
  // Code points never outnumber UTF-16 code units; count them only when it matters.
  if (value.length > MAX_LABEL_CHARS && (value.length > 2 * MAX_LABEL_CHARS || [...value].length > MAX_LABEL_CHARS)) {
    throw invalid(`${path} is too long: at most ${MAX_LABEL_CHARS} characters are allowed`);
  }
  if (hasLoneSurrogate(value)) throw invalid(`${path} holds an unpaired UTF-16 surrogate (not valid Unicode)`);
  return value;
}

/** Most task ids an object holds (v1 `tds`): 1,000 ids of at most 256 bytes each. */
export const MAX_TASKS = 1000;

/**
 * Task ids (Hivekit's `tds`, hivekit-compat.md 4.2): an array of ids (the identifier rules
 * of ids.ts: 1–256 UTF-8 bytes, no control characters), at most MAX_TASKS of them, kept in
 * the given order (duplicates too). [] clears the object's task ids. `path` names the value
 * in messages (`tds`). Code `invalid_request`, or `invalid_id` for a bad id.
 */
export function parseTasks(value: unknown, path: string): string[] {
  if (!Array.isArray(value)) throw invalid(`${path} must be an array of task ids (got ${describe(value)})`);
  const ids: unknown[] = value;
  if (ids.length > MAX_TASKS) throw invalid(`${path} has ${ids.length} task ids; at most ${MAX_TASKS} are allowed`);
  const tasks: string[] = [];
  for (let i = 0; i < ids.length; i++) tasks.push(parseIdAt(ids[i], `${path}[${i}]`));
  return tasks;
}

/**
 * How far ahead of the server clock a fix may be dated. Fixes never replace newer ones,
 * so one dated years ahead would stay the current location for good.
 */
export interface FutureLimit {
  /** The latest time accepted: the server time plus `skewS` (normalised ISO 8601). */
  latest: string;
  /** The allowed skew in seconds (LOCUS_MAX_FUTURE_SKEW_S), for the message. */
  skewS: number;
}

/** The optional label/location/data of an object body or bulk entry at `where` ('' is the top level). */
function parseFields(object: Record<string, unknown>, where: string, now: string, patch: ObjectPatch, future: FutureLimit | undefined): ObjectPatch {
  // The known keys are plain names: their paths need no keyPath.
  const at = (key: string): string => (where === '' ? key : `${where}.${key}`);
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined) continue; // not JSON; counts as absent
    switch (key) {
      case 'id':
        break; // checked by the caller
      case 'label':
        patch.label = parseLabel(value, at(key));
        break;
      case 'location':
        if (value === null) {
          throw invalid(`${at(key)} must be a location object; null is not allowed (omit the key to keep the location)`, 'invalid_location');
        }
        patch.location = parseLocation(value, now, at(key));
        // Normalised times of the years 0000–9999 order as their text does.
        if (future !== undefined && patch.location.time > future.latest) {
          const whose = where === '' ? '' : ` (object ${quote(patch.id)})`;
          throw invalid(
            `${at(key)}.time${whose} is ${patch.location.time}, more than ${future.skewS} s ahead of the server clock (${now}); a fix may be dated at most ${future.skewS} s in the future`,
            'invalid_location',
          );
        }
        break;
      case 'data':
        patch.data = parseDataPatch(value, at(key));
        break;
      default:
        throw invalid(`unknown key ${quote(key)} in ${containerName(where)}; allowed: id, label, location, data`);
    }
  }
  return patch;
}

/**
 * The body of a single create-or-update: a JSON object with optional label (string ≤ 1024
 * characters, or null to clear), location (a fix; null is a 400) and data (merged; null
 * removes a key). An `id` key is allowed only when it equals the path id. A location
 * without time is stamped `now`; one dated after `future.latest` is `invalid_location`.
 */
export function parseObjectBody(body: unknown, pathId: string, now: string, future?: FutureLimit): ObjectPatch {
  const id = parseId(pathId, 'object');
  const object = requireObject(body, '', 'invalid_request');
  const given = object.id;
  if (given !== undefined && given !== id) {
    throw invalid(
      `id in the request body (${describe(given)}) differs from the id in the path (${quote(id)}); omit it or make them equal`,
      'invalid_id',
    );
  }
  return parseFields(object, '', now, { id }, future);
}

/**
 * The body of a bulk write: `{"objects": [...]}` and nothing else. More than `maxEntries`
 * entries is `too_large`. Each entry: id required, optional label, location and data as
 * in parseObjectBody. Any invalid entry rejects the whole request, naming `objects[i]`
 * (and its id when its fix is dated too far ahead).
 */
export function parseBulkBody(body: unknown, now: string, maxEntries: number, future?: FutureLimit): ObjectPatch[] {
  const object = requireObject(body, '', 'invalid_request');
  for (const key of Object.keys(object)) {
    if (key !== 'objects') throw invalid(`unknown key ${quote(key)} in the request body; a bulk body is {"objects": [...]}`);
  }
  const objects = object.objects;
  if (objects === undefined) throw invalid('objects is required: a bulk body is {"objects": [...]}');
  if (!Array.isArray(objects)) throw invalid(`objects must be an array of objects (got ${describe(objects)})`);
  const entries: unknown[] = objects;
  if (entries.length > maxEntries) {
    throw new LocusError(
      'too_large',
      `objects has ${entries.length} entries; at most ${maxEntries} are allowed in one request`,
    );
  }
  return entries.map((entry, i) => {
    const where = `objects[${i}]`;
    const fields = requireObject(entry, where, 'invalid_request');
    if (fields.id === undefined) throw invalid(`${where}.id is required`, 'invalid_id');
    const id = parseIdAt(fields.id, `${where}.id`);
    return parseFields(fields, where, now, { id }, future);
  });
}
