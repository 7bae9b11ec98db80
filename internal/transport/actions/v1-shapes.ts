/**
 * Hivekit's shape encodings on the v1 wire (compat 4.3, 11 #19), translated at the boundary to
 * the domain's shapes (domain/shape.ts validates them, with decisions.md's geometry rules):
 *
 * | `sty` | `sha` (v1)                         | domain                 |
 * |-------|------------------------------------|------------------------|
 * | `rec` | `{x1, y1, x2, y2}` (x lon, y lat)  | `{w: x1, s: y1, e: x2, n: y2}` |
 * | `cir` | `{cx, cy, r}` (r in metres)        | `{cx, cy, r}`          |
 * | `pol` | `{points: [{x, y}, …]}`            | `{points: [[x, y], …]}` |
 *
 * The translation back (shapeToV1) gives the v1 form exactly as it was sent: a rectangle's four
 * numbers and a circle's three are stored as given, and a polygon's points too (as long as no
 * two consecutive points repeat: the domain drops such repeats, and a closing point equal to
 * the first, which add no edge). Used by `are` actions, `obj lis` and the subscriptions' scopes.
 */
import { toV1Shape, type V1ShapeData, type V1ShapeType } from '../../domain/hivekit-shapes.js';
import { describe, isJsonObject, quote } from '../../domain/ids.js';
import { parseShapeAt } from '../../domain/shape.js';
import type { Shape } from '../../domain/types.js';
import { invalid, LocusError } from '../../errors.js';

export type { V1ShapeType };
export type V1Shape = V1ShapeData;

const fail = (message: string): LocusError => invalid(message, 'invalid_shape');

const KEYS: Readonly<Record<V1ShapeType, readonly string[]>> = {
  rec: ['x1', 'y1', 'x2', 'y2'],
  cir: ['cx', 'cy', 'r'],
  pol: ['points'],
};

/** Domain key → v1 key of a rectangle, for messages. */
const RECT_NAMES: Readonly<Record<string, string>> = { w: 'x1', s: 'y1', e: 'x2', n: 'y2' };

/** The domain's message, with the domain's key names at `where` turned into the v1 ones. */
function v1Message(err: unknown, where: string, kind: V1ShapeType | 'wnes'): unknown {
  if (!(err instanceof LocusError)) return err;
  const at = where.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let text = err.message;
  if (kind === 'rec') {
    text = text.replace(new RegExp(`${at}\\.([wsen])\\b`, 'g'), (_all, key: string) => `${where}.${RECT_NAMES[key] ?? key}`);
    text = text.replace(/\((s|n|w|e) = /g, (_all, key: string) => `(${RECT_NAMES[key] ?? key} = `);
    text = text.replace(/\(w = ([^,]+), e = /g, '(x1 = $1, x2 = ');
    text = text.replace(/s = n = /g, 'y1 = y2 = ');
  } else if (kind === 'pol') {
    text = text.replace(new RegExp(`${at}\\.points\\[(\\d+)\\]\\[([01])\\]`, 'g'), (_all, i: string, axis: string) => `${where}.points[${i}].${axis === '0' ? 'x' : 'y'}`);
  }
  return new LocusError(err.code, text, { cause: err });
}

function requireKeys(sha: Record<string, unknown>, kind: V1ShapeType, where: string): void {
  const missing = KEYS[kind].filter((key) => sha[key] === undefined);
  if (missing.length > 0) {
    throw fail(`${where} lacks ${missing.join(', ')}; a ${kind} shape is {${KEYS[kind].join(', ')}}${kind === 'pol' ? ' with points [{"x": lon, "y": lat}, …]' : ''}`);
  }
}

function points(value: unknown, where: string): unknown {
  if (!Array.isArray(value)) return value; // the domain names the error
  return (value as unknown[]).map((point, i) => {
    if (!isJsonObject(point)) throw fail(`${where}.points[${i}] must be a point {"x": longitude, "y": latitude} (got ${describe(point)})`);
    return [point.x, point.y];
  });
}

/** The domain shape of a v1 shape of the given kind; unknown keys of `sha` are ignored. */
function toDomain(kind: V1ShapeType | 'wnes', sha: Record<string, unknown>, maxVertices: number, where: string): Shape {
  let domain: Record<string, unknown>;
  switch (kind) {
    case 'rec':
      domain = { w: sha.x1, s: sha.y1, e: sha.x2, n: sha.y2 };
      break;
    case 'wnes':
      domain = { w: sha.west, n: sha.north, e: sha.east, s: sha.south };
      break;
    case 'cir':
      domain = { cx: sha.cx, cy: sha.cy, r: sha.r };
      break;
    case 'pol':
      domain = { points: points(sha.points, where) };
      break;
  }
  for (const key of Object.keys(domain)) {
    if (domain[key] === undefined) throw fail(`${where} lacks ${kind === 'wnes' ? ({ w: 'west', n: 'north', e: 'east', s: 'south' } as Record<string, string>)[key] : key}`);
  }
  try {
    return parseShapeAt(domain, maxVertices, where);
  } catch (err) {
    throw v1Message(err, where, kind);
  }
}

/** `sty` checked: `rec`, `cir` or `pol`. */
export function parseV1ShapeType(sty: unknown, where = 'sty'): V1ShapeType {
  if (sty === 'rec' || sty === 'cir' || sty === 'pol') return sty;
  throw fail(`${where} must be "rec" (rectangle), "cir" (circle) or "pol" (polygon) (got ${describe(sty)})`);
}

/** A shape given as `sty` and `sha` (areas, subscription scopes). */
export function shapeFromV1(sty: unknown, sha: unknown, maxVertices: number, where = 'sha'): Shape {
  const kind = parseV1ShapeType(sty);
  if (!isJsonObject(sha)) throw fail(`${where} must be the shape's data, e.g. {"cx": 13.4, "cy": 52.5, "r": 500} (got ${describe(sha)})`);
  requireKeys(sha, kind, where);
  return toDomain(kind, sha, maxVertices, where);
}

/**
 * A shape given as `sha` alone (the `obj lis` filter, compat 4.2): the kind is told by its
 * keys: `x1,y1,x2,y2` rectangle, `cx,cy,r` circle, `points` polygon, and also
 * `west,north,east,south` (a rectangle in the client's user-facing form).
 */
export function shapeFromV1Keys(sha: unknown, maxVertices: number, where = 'dat.sha'): Shape {
  if (!isJsonObject(sha)) throw fail(`${where} must be a shape object such as {"x1": 13, "y1": 52, "x2": 14, "y2": 53} (got ${describe(sha)})`);
  const has = (keys: readonly string[]): boolean => keys.some((key) => sha[key] !== undefined);
  const kinds: (V1ShapeType | 'wnes')[] = [];
  if (has(KEYS.rec)) kinds.push('rec');
  if (has(KEYS.cir)) kinds.push('cir');
  if (has(KEYS.pol)) kinds.push('pol');
  if (has(['west', 'north', 'east', 'south'])) kinds.push('wnes');
  const [kind] = kinds;
  if (kind === undefined || kinds.length > 1) {
    const keys = Object.keys(sha).slice(0, 8).map(quote).join(', ');
    throw fail(
      `${where} must be exactly one of a rectangle {x1, y1, x2, y2}, a circle {cx, cy, r}, a polygon {points} or {west, north, east, south} (got keys ${keys || 'none'})`,
    );
  }
  if (kind !== 'wnes') requireKeys(sha, kind, where);
  return toDomain(kind, sha, maxVertices, where);
}

/** The v1 form of a domain shape: `sty` and `sha` (domain/hivekit-shapes.ts toV1Shape). */
export const shapeToV1 = toV1Shape;
