/** Area create and update bodies. Pure. */
import { invalid } from '../errors.js';
import { parseData, parseDataPatch } from './data.js';
import { describe, parseId, quote, requireObject } from './ids.js';
import { parseLabel } from './object-input.js';
import { parseShapeAt } from './shape.js';
import type { AreaCreate, AreaPatch, Data, Shape } from './types.js';

const ALLOWED = new Set(['id', 'label', 'shape', 'data']);

/** The body as a JSON object, with unknown keys and a mismatching `id` rejected. */
function readBody(id: string, body: unknown): Record<string, unknown> {
  const object = requireObject(body, '', 'invalid_request');
  for (const key of Object.keys(object)) {
    if (!ALLOWED.has(key)) throw invalid(`unknown key ${quote(key)} in the request body; allowed: id, label, shape, data`);
  }
  const given = object.id;
  if (given !== undefined && given !== id) {
    throw invalid(
      `id in the request body (${describe(given)}) differs from the area id in the path (${quote(id)}); omit it or make them equal`,
      'invalid_id',
    );
  }
  return object;
}

function parseShapeField(value: unknown, maxVertices: number): Shape {
  if (value === null) throw invalid('shape must be a shape object; null is not allowed', 'invalid_shape');
  return parseShapeAt(value, maxVertices, 'shape');
}

/** How strict an area create is about its label. */
export interface AreaCreateRules {
  /**
   * REST requires a label, as Hivekit's HTTP API documents; the v1 protocol does not (the
   * Hivekit client sends `lab` only when the application gives one).
   */
  labelRequired: boolean;
}

/**
 * An area create: shape required, label as `rules` say; data optional (keys set to null are
 * dropped). An `id` key is allowed only when equal to `id`.
 */
export function parseAreaCreate(id: string, body: unknown, maxVertices: number, rules: AreaCreateRules = { labelRequired: true }): AreaCreate {
  const areaId = parseId(id, 'area');
  const object = readBody(areaId, body);
  if (rules.labelRequired && (object.label === undefined || object.label === null)) {
    throw invalid('label is required: a string naming the area');
  }
  if (object.shape === undefined) throw invalid('shape is required: a circle {cx, cy, r}, a rectangle {w, n, e, s} or a polygon {points}', 'invalid_shape');
  const label = object.label === undefined ? null : parseLabel(object.label, 'label');
  const shape = parseShapeField(object.shape, maxVertices);
  const data: Data = object.data === undefined ? {} : parseData(object.data, 'data');
  return { id: areaId, label, shape, data };
}

/**
 * An area update: label, shape and data all optional. A null label clears it, a null
 * shape is a 400, data keys set to null are kept (they remove the key).
 */
export function parseAreaPatch(id: string, body: unknown, maxVertices: number): AreaPatch {
  const object = readBody(parseId(id, 'area'), body);
  const patch: AreaPatch = {};
  if (object.label !== undefined) patch.label = parseLabel(object.label, 'label');
  if (object.shape !== undefined) patch.shape = parseShapeField(object.shape, maxVertices);
  if (object.data !== undefined) patch.data = parseDataPatch(object.data, 'data');
  return patch;
}
