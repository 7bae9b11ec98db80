/**
 * A realm as a Hivekit entity: its label and data, the bodies that create and update them
 * over REST v2, and the merge of an update. Pure.
 */
import { invalid } from '../errors.js';
import { checkDataValue } from './data.js';
import { checkName, describe, keyPath, parseId, quote, requireObject, utf8Length } from './ids.js';
import { parseLabel } from './object-input.js';
import type { JsonValue, Realm, RealmData, RealmPatch } from './types.js';

/**
 * Largest realm data, in UTF-8 bytes of its JSON text. Realm data is configuration read
 * whole with the realm (every read and every cached realm holds it), not a place for bulk data.
 */
export const MAX_REALM_DATA_BYTES = 64 * 1024;

const ALLOWED_KEYS = ['id', 'label', 'data'];

function checkSize(data: RealmData, what: string): void {
  const bytes = utf8Length(JSON.stringify(data));
  if (bytes > MAX_REALM_DATA_BYTES) {
    throw invalid(`${what} is ${bytes} bytes as JSON; at most ${MAX_REALM_DATA_BYTES} bytes (64 KiB) are allowed`, 'invalid_data');
  }
}

/**
 * Realm data as given in a write: a JSON object whose keys are names (as object data keys:
 * 1–256 UTF-8 bytes, no control characters) and whose values are any JSON, nested at most
 * MAX_DATA_DEPTH levels (data.ts), at most 64 KiB as JSON. Top-level nulls stay (they remove keys in an update).
 * Code `invalid_data`.
 */
function parseRealmData(value: unknown): RealmData {
  const object = requireObject(value, 'data', 'invalid_data');
  const entries: [string, JsonValue][] = [];
  for (const [key, item] of Object.entries(object)) {
    checkName(key, () => (key === '' ? 'data key' : `data key ${quote(key)}`), 'invalid_data');
    if (item === undefined) continue; // not JSON; counts as absent
    entries.push([key, checkDataValue(item, keyPath('data', key), 2, null)]);
  }
  // Object.fromEntries keeps a key `__proto__` an ordinary own key.
  const data = Object.fromEntries(entries);
  checkSize(data, 'data');
  return data;
}

/** The body as a JSON object, with unknown keys and an `id` other than the path's rejected. */
function readBody(id: string, body: unknown): Record<string, unknown> {
  const object = requireObject(body, '', 'invalid_request');
  for (const key of Object.keys(object)) {
    if (!ALLOWED_KEYS.includes(key)) throw invalid(`unknown key ${quote(key)} in the request body; allowed: ${ALLOWED_KEYS.join(', ')}`);
  }
  if (object.id !== undefined && object.id !== id) {
    throw invalid(`id in the request body (${describe(object.id)}) differs from the realm id in the path (${quote(id)}); omit it or make them equal`, 'invalid_id');
  }
  return object;
}

/**
 * A realm create: label required (a string, as Hivekit's HTTP API documents; v1 `rea cre`
 * passes labelRequired false, its `lab` is optional), data optional (top-level nulls dropped).
 */
export function parseRealmCreate(
  realmId: string,
  body: unknown,
  options: { labelRequired?: boolean } = {},
): { id: string; label: string | null; data: RealmData } {
  const id = parseId(realmId, 'realm');
  const object = readBody(id, body);
  const missing = object.label === undefined || object.label === null;
  if (missing && options.labelRequired !== false) throw invalid('label is required: a string naming the realm');
  const label = missing ? null : parseLabel(object.label, 'label');
  const given = object.data === undefined ? {} : parseRealmData(object.data);
  return { id, label, data: Object.fromEntries(Object.entries(given).filter(([, v]) => v !== null)) };
}

/** A realm update: label (null clears it) and data (merged by applyRealmPatch), both optional. */
export function parseRealmPatch(realmId: string, body: unknown): { id: string; patch: RealmPatch } {
  const id = parseId(realmId, 'realm');
  const object = readBody(id, body);
  const patch: RealmPatch = {};
  if (object.label !== undefined) patch.label = parseLabel(object.label, 'label');
  if (object.data !== undefined) patch.data = parseRealmData(object.data);
  return { id, patch };
}

/**
 * The realm after an update: the given label; data merged key by key at the top level (a
 * nested value is replaced whole, a null removes the key). The merged data must stay
 * within MAX_REALM_DATA_BYTES, or nothing changes (`invalid_data`).
 */
export function applyRealmPatch(old: Realm, patch: RealmPatch): Realm {
  let data = old.data;
  if (patch.data !== undefined) {
    const merged = new Map(Object.entries(old.data));
    for (const [key, value] of Object.entries(patch.data)) {
      if (value === null) merged.delete(key);
      else merged.set(key, value);
    }
    data = Object.fromEntries(merged);
    checkSize(data, 'data after the merge');
  }
  return { ...old, label: patch.label === undefined ? old.label : patch.label, data };
}
