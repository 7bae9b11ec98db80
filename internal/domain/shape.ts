/** Shapes (circle, rectangle, polygon) as sent by clients. Pure. */
import { invalid, type LocusError } from '../errors.js';
import { findSelfIntersection, orientation, polygonArea2, ringWithoutRepeats, type Point } from '../geo/polygon.js';
import { describe, entriesOf, keyPath, quote, requireObject } from './ids.js';
import type { Shape } from './types.js';

/**
 * Largest circle radius in metres: half the Earth's circumference at the equator
 * (π × 6,378,137 m ≈ 20,037,508.3 m). No two points on Earth are farther apart along the
 * surface (with the 6,371,008.8 m mean radius used for distances, at most ~20,015,115 m),
 * so a larger radius means nothing more.
 */
export const MAX_RADIUS_M = 20_037_509;

/**
 * A polygon whose area, divided by its largest bounding-box side, is below this many
 * degrees is a sliver thinner than the 1e-9° boundary tolerance: it has zero area.
 */
const MIN_POLYGON_WIDTH_DEG = 1e-9;

const KINDS = [
  { kind: 'circle', keys: ['cx', 'cy', 'r'] },
  { kind: 'rectangle', keys: ['w', 'n', 'e', 's'] },
  { kind: 'polygon', keys: ['points'] },
] as const;
type Kind = (typeof KINDS)[number]['kind'];
const KIND_OF = new Map<string, Kind>(KINDS.flatMap(({ kind, keys }) => keys.map((key) => [key, kind] as const)));
const KINDS_TEXT = 'a circle {cx, cy, r}, a rectangle {w, n, e, s} or a polygon {points}';

const fail = (message: string): LocusError => invalid(message, 'invalid_shape');

function coordinate(value: unknown, path: string, axis: 'longitude' | 'latitude'): number {
  const limit = axis === 'longitude' ? 180 : 90;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < -limit || value > limit) {
    throw fail(`${path} must be a ${axis}: a number between -${limit} and ${limit} (got ${describe(value)})`);
  }
  return value;
}

function parsePolygon(value: unknown, where: string, maxVertices: number): Shape {
  const path = keyPath(where, 'points');
  if (!Array.isArray(value)) {
    throw fail(`${path} must be an array of [longitude, latitude] pairs (got ${describe(value)})`);
  }
  const raw: unknown[] = value;
  // A closing vertex equal to the first does not count against the limit.
  if (raw.length > maxVertices + 1) {
    throw fail(`${path} has ${raw.length} vertices; a polygon may have at most ${maxVertices}`);
  }
  const points: [number, number][] = raw.map((pair, i) => {
    const at = `${path}[${i}]`;
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw fail(`${at} must be a [longitude, latitude] pair of numbers (got ${describe(pair)})`);
    }
    const items: unknown[] = pair;
    return [coordinate(items[0], `${at}[0]`, 'longitude'), coordinate(items[1], `${at}[1]`, 'latitude')];
  });
  // Repeated consecutive vertices (a closing vertex equal to the first among them) add no
  // edge: they are dropped, and the stored polygon holds the remaining vertices.
  const { ring, index } = ringWithoutRepeats(points);
  if (ring.length > maxVertices) {
    throw fail(`${path} has ${ring.length} vertices; a polygon may have at most ${maxVertices}`);
  }
  const distinct = new Set(ring.map(([x, y]) => `${x},${y}`)).size;
  if (distinct < 3) {
    throw fail(`${path} must have at least 3 distinct vertices (got ${distinct})`);
  }
  const first = ring[0] as Point;
  const second = ring[1] as Point;
  if (ring.every((p) => orientation(first, second, p) === 0)) {
    throw fail(`${path} encloses zero area: all vertices lie on one line`);
  }
  const crossing = findSelfIntersection(ring);
  if (crossing !== null) {
    const edge = (k: number): string => {
      const from = index[k] as number;
      const to = index[(k + 1) % index.length] as number;
      return `${path}[${from}]→[${to}]`;
    };
    const [i, j] = crossing;
    throw fail(
      `${path} is self-intersecting: the edges ${edge(i)} and ${edge(j)} meet; edges may only share a vertex with the edges next to them`,
    );
  }
  const area = Math.abs(polygonArea2(ring)) / 2;
  let [minX, minY] = first;
  let [maxX, maxY] = first;
  for (const [x, y] of ring) {
    minX = Math.min(minX, x);
    maxX = Math.max(maxX, x);
    minY = Math.min(minY, y);
    maxY = Math.max(maxY, y);
  }
  const extent = Math.max(maxX - minX, maxY - minY);
  if (!(area / extent >= MIN_POLYGON_WIDTH_DEG)) {
    throw fail(`${path} encloses zero area: the polygon is thinner than ${MIN_POLYGON_WIDTH_DEG} degrees`);
  }
  return { points: ring.map(([x, y]) => [x, y] as [number, number]) };
}

/** parseShape for a value found at `where` (messages name `<where>.cx` and so on). */
export function parseShapeAt(value: unknown, maxVertices: number, where: string): Shape {
  const object = requireObject(value, where, 'invalid_shape');
  const entries = entriesOf(object);
  const byKind = new Map<Kind, string[]>();
  for (const [key] of entries) {
    const kind = KIND_OF.get(key);
    if (kind === undefined) throw fail(`unknown key ${quote(key)} in ${where}; a shape is ${KINDS_TEXT}`);
    byKind.set(kind, [...(byKind.get(kind) ?? []), key]);
  }
  if (byKind.size === 0) throw fail(`${where} must be ${KINDS_TEXT}`);
  if (byKind.size > 1) {
    const parts = [...byKind].map(([kind, keys]) => `a ${kind} (${keys.join(', ')})`);
    throw fail(`${where} mixes the keys of ${parts.join(' and ')}; a shape is exactly one of ${KINDS_TEXT}`);
  }
  const [kind] = [...byKind.keys()] as [Kind];
  const spec = KINDS.find((k) => k.kind === kind)!;
  const missing = spec.keys.filter((key) => !byKind.get(kind)!.includes(key));
  if (missing.length > 0) {
    throw fail(`${where} looks like a ${kind} but lacks ${missing.join(', ')}; a ${kind} is {${spec.keys.join(', ')}}`);
  }
  const get = (key: string): unknown => object[key];
  const at = (key: string): string => keyPath(where, key);
  switch (kind) {
    case 'circle': {
      const cx = coordinate(get('cx'), at('cx'), 'longitude');
      const cy = coordinate(get('cy'), at('cy'), 'latitude');
      const r = get('r');
      if (typeof r !== 'number' || !Number.isFinite(r) || r <= 0 || r > MAX_RADIUS_M) {
        throw fail(
          `${at('r')} must be a radius in metres: a number greater than 0 and at most ${MAX_RADIUS_M} (half the Earth's circumference) (got ${describe(r)})`,
        );
      }
      return { cx, cy, r };
    }
    case 'rectangle': {
      const w = coordinate(get('w'), at('w'), 'longitude');
      const n = coordinate(get('n'), at('n'), 'latitude');
      const e = coordinate(get('e'), at('e'), 'longitude');
      const s = coordinate(get('s'), at('s'), 'latitude');
      // w > e is allowed: the rectangle crosses the antimeridian.
      if (s > n) throw fail(`${where} has its south edge (s = ${s}) north of its north edge (n = ${n}); s must be < n`);
      // Zero area is rejected as it is for polygons: an area nothing can enter, a query
      // box that finds only what lies exactly on a line (a small circle finds a point).
      if (s === n) throw fail(`${where} encloses zero area: its south and north edges are equal (s = n = ${s}); s must be < n`);
      // A crossing rectangle from 180 to -180 is as narrow as one from 10 to 10.
      if (w === e || (w === 180 && e === -180)) {
        throw fail(`${where} encloses zero area: its west and east edges are the same meridian (w = ${w}, e = ${e})`);
      }
      return { w, n, e, s };
    }
    case 'polygon':
      return parsePolygon(get('points'), where, maxVertices);
  }
}

/**
 * Validates a shape: exactly one kind, told by its keys — circle {cx, cy, r}, rectangle
 * {w, n, e, s} or polygon {points}. Longitudes −180..180, latitudes −90..90, finite
 * numbers; 0 < r ≤ 20,037,509 m; rectangle s < n and w ≠ e, no zero area (w > e
 * crosses the antimeridian);
 * polygon: at most `maxVertices` [lon, lat] pairs, at least 3 distinct vertices, a
 * closing vertex equal to the first is dropped, no zero area, no self-intersection.
 * The result holds only the canonical keys. Code `invalid_shape`.
 */
export function parseShape(value: unknown, maxVertices: number): Shape {
  return parseShapeAt(value, maxVertices, 'shape');
}

/** The `shape` list query parameter: a shape serialised as JSON. */
export function parseShapeParam(text: string, maxVertices: number): Shape {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw fail(`the shape parameter is not valid JSON (got ${quote(text)})`);
  }
  return parseShapeAt(value, maxVertices, 'shape');
}
