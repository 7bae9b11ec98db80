/**
 * Hivekit's v1 shape encodings (hivekit-compat.md 4.3) and locus shapes (types.ts Shape):
 * `sty` names the kind, `sha` holds the data, `x`/`cx` longitude, `y`/`cy` latitude, `r` metres.
 *
 * | `sty` | `sha`                                   | locus shape              |
 * |-------|-----------------------------------------|--------------------------|
 * | `rec` | `{x1: west, y1: south, x2: east, y2: north}` (or `{west,north,east,south}`) | `{w, n, e, s}` |
 * | `cir` | `{cx, cy, r}`                           | `{cx, cy, r}`            |
 * | `pol` | `{points: [{x, y}, …]}` (or `[[x, y], …]`) | `{points: [[x, y], …]}` |
 *
 * After translation the locus rules of domain/shape.ts apply unchanged (ranges, zero area,
 * self-intersection). Pure. The encoding back (toV1Shape) is the one every v1 record uses;
 * parseV1Shape reads subscription scopes (areas and `obj lis` read theirs with
 * transport/actions/v1-shapes.ts, whose messages name the v1 keys of each bad value).
 */
import { invalid, type LocusError } from '../errors.js';
import { describe, isJsonObject, keyPath, quote } from './ids.js';
import { parseShapeAt } from './shape.js';
import type { Shape } from './types.js';

/** The v1 shape kinds. */
export type V1ShapeType = 'rec' | 'cir' | 'pol';
export const v1ShapeTypes: readonly V1ShapeType[] = ['rec', 'cir', 'pol'];

/** The `sha` of each kind, as the wire shows it. */
export type V1ShapeData =
  | { x1: number; y1: number; x2: number; y2: number }
  | { cx: number; cy: number; r: number }
  | { points: { x: number; y: number }[] };

export interface V1Shape {
  sty: V1ShapeType;
  sha: V1ShapeData;
}

const fail = (message: string): LocusError => invalid(message, 'invalid_shape');

export function isV1ShapeType(value: unknown): value is V1ShapeType {
  return value === 'rec' || value === 'cir' || value === 'pol';
}

function number(object: Record<string, unknown>, key: string, where: string, axis: 'longitude' | 'latitude'): number {
  const value = object[key];
  const limit = axis === 'longitude' ? 180 : 90;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < -limit || value > limit) {
    throw fail(`${keyPath(where, key)} must be a ${axis}: a number between -${limit} and ${limit} (got ${describe(value)})`);
  }
  return value;
}

/**
 * Parses `sha` of kind `sty` (`where` names `sha` in messages, e.g. `dat.sha`) into a locus
 * shape, validated by the rules of domain/shape.ts. Throws `invalid_shape`.
 */
export function parseV1Shape(sty: V1ShapeType, sha: unknown, maxVertices: number, where: string): Shape {
  if (!isJsonObject(sha)) throw fail(`${where} must be the shape data of a ${kindName[sty]} (${hint[sty]}) (got ${describe(sha)})`);
  switch (sty) {
    case 'cir': {
      for (const key of ['cx', 'cy', 'r']) {
        if (!Object.hasOwn(sha, key)) throw fail(`${where} lacks ${key}; a circle is ${hint.cir}`);
      }
      return parseShapeAt({ cx: sha.cx, cy: sha.cy, r: sha.r }, maxVertices, where);
    }
    case 'rec': {
      const named = ['west', 'north', 'east', 'south'].every((key) => Object.hasOwn(sha, key));
      const keys = named ? ['west', 'south', 'east', 'north'] : ['x1', 'y1', 'x2', 'y2'];
      for (const key of keys) {
        if (!Object.hasOwn(sha, key)) throw fail(`${where} lacks ${key}; a rectangle is ${hint.rec}`);
      }
      const [wk, sk, ek, nk] = keys as [string, string, string, string];
      const w = number(sha, wk, where, 'longitude');
      const s = number(sha, sk, where, 'latitude');
      const e = number(sha, ek, where, 'longitude');
      const n = number(sha, nk, where, 'latitude');
      if (s > n) throw fail(`${where} has its south edge (${sk} = ${s}) north of its north edge (${nk} = ${n})`);
      return parseShapeAt({ w, n, e, s }, maxVertices, where);
    }
    case 'pol': {
      const points = sha.points;
      if (!Array.isArray(points)) throw fail(`${keyPath(where, 'points')} must be an array of points {x: longitude, y: latitude} (got ${describe(points)})`);
      const pairs = (points as unknown[]).map((point, i) => {
        if (isJsonObject(point)) return [point.x, point.y];
        if (Array.isArray(point)) return point as unknown[];
        throw fail(`${keyPath(where, 'points')}[${i}] must be a point {x: longitude, y: latitude} (got ${describe(point)})`);
      });
      return parseShapeAt({ points: pairs }, maxVertices, where);
    }
  }
}

/** The v1 encoding of a locus shape. */
export function toV1Shape(shape: Shape): V1Shape {
  if ('r' in shape) return { sty: 'cir', sha: { cx: shape.cx, cy: shape.cy, r: shape.r } };
  if ('points' in shape) return { sty: 'pol', sha: { points: shape.points.map(([x, y]) => ({ x, y })) } };
  return { sty: 'rec', sha: { x1: shape.w, y1: shape.s, x2: shape.e, y2: shape.n } };
}

const kindName: Readonly<Record<V1ShapeType, string>> = { rec: 'rectangle', cir: 'circle', pol: 'polygon' };
const hint: Readonly<Record<V1ShapeType, string>> = {
  rec: '{x1: west, y1: south, x2: east, y2: north}',
  cir: '{cx: longitude, cy: latitude, r: metres}',
  pol: '{points: [{x: longitude, y: latitude}, …]}',
};

/** A quoted list of the shape kinds, for messages. */
export const v1ShapeTypesText = v1ShapeTypes.map(quote).join(', ');
