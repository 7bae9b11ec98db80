/**
 * Point-in-shape: THE single decision of "inside" for every store (the exact test after
 * an index prefilter), the geofence engine and the property-test oracles, plus the index
 * boxes that cover a shape. Pure: no I/O, no dependencies.
 *
 * Rules (docs/api.md, "Shapes"):
 * - Circle {cx, cy, r}: the great-circle (haversine) distance from the centre, on a sphere
 *   of radius 6,371,008.8 m, is at most r + 0.1112 mm. The 0.1112 mm is the boundary
 *   tolerance of 1e-9 degrees measured along a great circle (1e-9 × π/180 × R).
 * - Rectangle {w, n, e, s}: s − 1e-9 ≤ lat ≤ n + 1e-9 and lon within 1e-9 of the
 *   longitudes from w eastward to e (w > e crosses the antimeridian).
 * - Polygon {points}: planar in lon/lat (edges straight in lon/lat, RFC 7946), closed
 *   implicitly, even-odd rule; a point within 1e-9 degrees (planar distance in lon/lat) of
 *   an edge or vertex is inside.
 * - Longitudes −180 and 180 are the same meridian: a point near it is also tested on the
 *   other side. The poles are points: a point at latitude ±90 (within 1e-9) is inside a
 *   rectangle or polygon whose latitudes reach that pole (within 1e-9), at any longitude.
 *   (Circles need no rule: the haversine distance ignores the longitude at a pole.)
 * Points are expected as lon in −180..180 and lat in −90..90 (validated locations).
 */
import type { BBox, CircleShape, PolygonShape, RectangleShape, Shape } from '../domain/types.js';

/** Mean Earth radius in metres (IUGG; the same as @turf/turf's). */
export const earthRadiusMeters = 6_371_008.8;
/** A point this many degrees from a shape's boundary counts as on it (inside). */
export const boundaryEpsilonDeg = 1e-9;
/** The boundary tolerance as a great-circle distance in metres (≈ 0.000111 m). */
export const boundaryEpsilonMeters = ((boundaryEpsilonDeg * Math.PI) / 180) * earthRadiusMeters;
/**
 * How far shapeBounds pads its boxes, in degrees: twice the boundary tolerance, so that
 * rounding in the tests (lon ± 360, the circle trigonometry) never puts an accepted point
 * outside its box.
 */
export const boundsPaddingDeg = 2 * boundaryEpsilonDeg;

const EPS = boundaryEpsilonDeg;
const EPS2 = EPS * EPS;
const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;
const NORTH = 90 - EPS;
const SOUTH = -90 + EPS;
const EAST = 180 - EPS;
const WEST = -180 + EPS;

/** A compiled point test: lon, lat in degrees. */
export type PointTest = (lon: number, lat: number) => boolean;

/** Great-circle distance in metres between two points in degrees (haversine, R = 6,371,008.8 m). */
export function haversineMeters(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const phi1 = lat1 * RAD;
  const phi2 = lat2 * RAD;
  const sinDPhi = Math.sin((phi2 - phi1) / 2);
  const sinDLambda = Math.sin(((lon2 - lon1) * RAD) / 2);
  const a = sinDPhi * sinDPhi + Math.cos(phi1) * Math.cos(phi2) * sinDLambda * sinDLambda;
  return 2 * earthRadiusMeters * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a));
}

const isCircle = (shape: Shape): shape is CircleShape => 'r' in shape;
const isPolygon = (shape: Shape): shape is PolygonShape => 'points' in shape;

/** Angular radius in radians of a circle, tolerance included. */
const circleAngle = (shape: CircleShape): number => (shape.r + boundaryEpsilonMeters) / earthRadiusMeters;

function compileCircle(shape: CircleShape): PointTest {
  const angle = circleAngle(shape);
  // A central angle of π or more reaches the antipode: every point.
  if (angle >= Math.PI) return () => true;
  // haversine: d ≤ R·angle ⇔ asin(√a) ≤ angle/2 ⇔ a ≤ sin²(angle/2), with no atan2.
  const half = Math.sin(angle / 2);
  const limit = half * half;
  const phi0 = shape.cy * RAD;
  const cosPhi0 = Math.cos(phi0);
  const lambda0 = shape.cx * RAD;
  return (lon, lat) => {
    const phi = lat * RAD;
    const sinDPhi = Math.sin((phi - phi0) / 2);
    const sinDLambda = Math.sin((lon * RAD - lambda0) / 2);
    return sinDPhi * sinDPhi + cosPhi0 * Math.cos(phi) * sinDLambda * sinDLambda <= limit;
  };
}

function compileRectangle({ w, n, e, s }: RectangleShape): PointTest {
  const south = s - EPS;
  const north = n + EPS;
  const west = w - EPS;
  const east = e + EPS;
  const northPole = n >= NORTH;
  const southPole = s <= SOUTH;
  if (w > e) {
    // Crosses the antimeridian: [w, 180] and [−180, e]; ±180 themselves are inside.
    return (lon, lat) => {
      if (lat < south || lat > north) return false;
      if ((lat >= NORTH && northPole) || (lat <= SOUTH && southPole)) return true;
      return lon >= west || lon <= east;
    };
  }
  return (lon, lat) => {
    if (lat < south || lat > north) return false;
    if ((lat >= NORTH && northPole) || (lat <= SOUTH && southPole)) return true;
    if (lon >= west && lon <= east) return true;
    // The same meridian on the other side of ±180.
    if (lon >= EAST) return lon - 360 >= west && lon - 360 <= east;
    if (lon <= WEST) return lon + 360 >= west && lon + 360 <= east;
    return false;
  };
}

/** Per polygon edge, packed: ax, ay, bx, by, loX, hiX, loY, hiY (spans padded by the tolerance), 1/|ab|². */
const EDGE = 9;
/** Most latitude bands of a compiled polygon, and most band entries per edge on average. */
const MAX_BANDS = 1024;
const MAX_BAND_ENTRIES_PER_EDGE = 16;

function compilePolygon(shape: PolygonShape): PointTest {
  // The ring without repeated consecutive vertices (a closing vertex equal to the first included).
  const ring: (readonly [number, number])[] = [];
  for (const p of shape.points) {
    const last = ring[ring.length - 1];
    if (last === undefined || last[0] !== p[0] || last[1] !== p[1]) ring.push(p);
  }
  while (ring.length > 1 && ring[0]![0] === ring[ring.length - 1]![0] && ring[0]![1] === ring[ring.length - 1]![1]) ring.pop();
  const n = ring.length;
  if (n === 0) return () => false;
  const edges = new Float64Array(n * EDGE);
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < n; i++) {
    const [ax, ay] = ring[i]!;
    const [bx, by] = ring[(i + 1) % n]!;
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    edges.set(
      [ax, ay, bx, by, Math.min(ax, bx) - EPS, Math.max(ax, bx) + EPS, Math.min(ay, by) - EPS, Math.max(ay, by) + EPS, len2 > 0 ? 1 / len2 : 0],
      i * EDGE,
    );
    minX = Math.min(minX, ax);
    maxX = Math.max(maxX, ax);
    minY = Math.min(minY, ay);
    maxY = Math.max(maxY, ay);
  }
  const boxW = minX - EPS;
  const boxE = maxX + EPS;
  const boxS = minY - EPS;
  const boxN = maxY + EPS;
  const northPole = maxY >= NORTH;
  const southPole = minY <= SOUTH;

  // Latitude bands: band b lists the edges whose padded latitude span meets it, so a point
  // looks only at the edges of its band (a handful, for most polygons, of any size). The
  // band of a latitude is monotone in it, so an edge whose span holds the point's latitude
  // is always listed in the point's band.
  let bands = Math.min(n, MAX_BANDS);
  let scale = 0;
  const bandOf = (y: number): number => {
    const b = Math.floor((y - boxS) * scale);
    return b < 0 ? 0 : b >= bands ? bands - 1 : b;
  };
  let entries: number;
  for (;;) {
    scale = bands / (boxN - boxS);
    entries = 0;
    for (let i = 0; i < n; i++) entries += bandOf(edges[i * EDGE + 7]!) - bandOf(edges[i * EDGE + 6]!) + 1;
    if (entries <= MAX_BAND_ENTRIES_PER_EDGE * n || bands === 1) break;
    bands = Math.max(1, bands >> 1);
  }
  const bandCount = bands;
  const bandScale = scale;
  const start = new Int32Array(bands + 1);
  for (let i = 0; i < n; i++) {
    for (let b = bandOf(edges[i * EDGE + 6]!), last = bandOf(edges[i * EDGE + 7]!); b <= last; b++) start[b + 1]!++;
  }
  for (let b = 0; b < bands; b++) start[b + 1]! += start[b]!;
  const fill = start.slice(0, bands);
  const list = new Int32Array(entries);
  for (let i = 0; i < n; i++) {
    for (let b = bandOf(edges[i * EDGE + 6]!), last = bandOf(edges[i * EDGE + 7]!); b <= last; b++) list[fill[b]!++] = i * EDGE;
  }

  const planar = (px: number, py: number): boolean => {
    if (px < boxW || px > boxE) return false;
    let band = Math.floor((py - boxS) * bandScale);
    band = band < 0 ? 0 : band >= bandCount ? bandCount - 1 : band;
    let inside = false;
    for (let k = start[band]!, end = start[band + 1]!; k < end; k++) {
      const o = list[k]!;
      if (py < edges[o + 6]! || py > edges[o + 7]! || px > edges[o + 5]!) continue;
      const ay = edges[o + 1]!;
      const by = edges[o + 3]!;
      if (px < edges[o + 4]!) {
        // The edge lies wholly east of the point, farther than the tolerance: it crosses
        // the ray when it crosses the point's latitude.
        if ((ay > py) !== (by > py)) inside = !inside;
        continue;
      }
      const ax = edges[o]!;
      const bx = edges[o + 2]!;
      // Within the tolerance of the edge (planar distance to the segment).
      const dx = bx - ax;
      const dy = by - ay;
      const qx = px - ax;
      const qy = py - ay;
      let t = (qx * dx + qy * dy) * edges[o + 8]!;
      t = t < 0 ? 0 : t > 1 ? 1 : t;
      const ex = qx - t * dx;
      const ey = qy - t * dy;
      if (ex * ex + ey * ey <= EPS2) return true;
      // Even-odd crossing of the ray going east from the point.
      if ((ay > py) !== (by > py) && px < ax + (dx * (py - ay)) / dy) inside = !inside;
    }
    return inside;
  };

  return (lon, lat) => {
    if (lat < boxS || lat > boxN) return false;
    if ((lat >= NORTH && northPole) || (lat <= SOUTH && southPole)) return true;
    if (planar(lon, lat)) return true;
    if (lon >= EAST) return planar(lon - 360, lat);
    if (lon <= WEST) return planar(lon + 360, lat);
    return false;
  };
}

/**
 * Compiles a shape into a point test that precomputes what it can (circle trigonometry,
 * polygon edge arrays): use it when testing many points against one shape. Decides
 * exactly as containsPoint.
 */
export function compileShape(shape: Shape): PointTest {
  if (isCircle(shape)) return compileCircle(shape);
  if (isPolygon(shape)) return compilePolygon(shape);
  return compileRectangle(shape);
}

/** Compiled tests of the shapes seen so far. Shapes are values: they must not be mutated once tested. */
const compiled = new WeakMap<Shape, PointTest>();

/**
 * True when the point (degrees) lies in the shape, boundary and 1e-9° tolerance included
 * (see the rules at the top of this file). Compiles the shape on first use and keeps the
 * compiled test for as long as the shape object lives, so a shape object must not be
 * mutated after it was tested.
 */
export function containsPoint(shape: Shape, lon: number, lat: number): boolean {
  let test = compiled.get(shape);
  if (test === undefined) {
    test = compileShape(shape);
    compiled.set(shape, test);
  }
  return test(lon, lat);
}

// ---------------------------------------------------------------------------
// Index boxes
// ---------------------------------------------------------------------------

/**
 * When a circle comes within this angle (radians, ≈ 640 m) of a pole, its box takes all
 * longitudes: near there asin(sin(r/R)/cos(lat)) is ill-conditioned (its slope grows
 * without bound), and the margin keeps its rounding error near 1e-12 rad.
 */
const POLE_MARGIN_RAD = 1e-4;

/** Raw boxes (longitudes may pass ±180, by less than 360) of a shape, before normalising. */
function rawBoxes(shape: Shape): BBox[] {
  const pad = boundsPaddingDeg;
  if (isCircle(shape)) {
    // Slightly more than the tested angle, for rounding in the test's trigonometry.
    const angle = circleAngle(shape) * (1 + 1e-12) + 1e-15;
    const phi = shape.cy * RAD;
    const minLat = (phi - angle) * DEG - pad;
    const maxLat = (phi + angle) * DEG + pad;
    if (angle >= Math.PI / 2 - Math.abs(phi) - POLE_MARGIN_RAD) {
      // The cap reaches (or nearly reaches) a pole: all longitudes.
      return [{ minLon: -180, minLat, maxLon: 180, maxLat }];
    }
    // Widest longitude of a cap that holds no pole: asin(sin(angle) / cos(phi)).
    const half = Math.asin(Math.min(1, Math.sin(angle) / Math.cos(phi))) * DEG * (1 + 1e-12) + pad;
    return [{ minLon: shape.cx - half, minLat, maxLon: shape.cx + half, maxLat }];
  }
  let boxes: BBox[];
  let south: number;
  let north: number;
  if (isPolygon(shape)) {
    let minLon = Infinity;
    let maxLon = -Infinity;
    south = Infinity;
    north = -Infinity;
    for (const [x, y] of shape.points) {
      minLon = Math.min(minLon, x);
      maxLon = Math.max(maxLon, x);
      south = Math.min(south, y);
      north = Math.max(north, y);
    }
    if (south > north) return [];
    boxes = [{ minLon: minLon - pad, minLat: south - pad, maxLon: maxLon + pad, maxLat: north + pad }];
  } else {
    const { w, n, e, s } = shape;
    south = s;
    north = n;
    const east = w > e ? e + 360 : e;
    boxes = [{ minLon: w - pad, minLat: s - pad, maxLon: east + pad, maxLat: n + pad }];
  }
  // The pole rule: a point at a pole the shape reaches is inside at any longitude.
  if (north >= NORTH) boxes.push({ minLon: -180, minLat: 90 - pad, maxLon: 180, maxLat: 90 });
  if (south <= SOUTH) boxes.push({ minLon: -180, minLat: -90, maxLon: 180, maxLat: -90 + pad });
  return boxes;
}

/** True when box a lies within box b. */
const within = (a: BBox, b: BBox): boolean =>
  a.minLon >= b.minLon && a.maxLon <= b.maxLon && a.minLat >= b.minLat && a.maxLat <= b.maxLat;

/**
 * Boxes (minLon ≤ maxLon, none wraps, all within lon −180..180 and lat −90..90) that
 * together hold every point containsPoint accepts for the shape, for an index prefilter:
 * each is padded by boundsPaddingDeg (2e-9°); a shape crossing the antimeridian gets a box
 * on each side; a box reaching lon ±180 also gets a sliver at the other side (the same
 * meridian); a circle reaching a pole, and a rectangle or polygon touching one, cover all
 * longitudes there. Circles: latitude span ±r/R; longitude half-width
 * asin(sin(r/R)/cos(lat)), or all longitudes when the cap comes within 1e-4 rad (≈ 640 m) of a pole.
 */
export function shapeBounds(shape: Shape): BBox[] {
  const out: BBox[] = [];
  const add = (minLon: number, minLat: number, maxLon: number, maxLat: number): void => {
    out.push({
      minLon: Math.max(-180, minLon),
      minLat: Math.max(-90, minLat),
      maxLon: Math.min(180, maxLon),
      maxLat: Math.min(90, maxLat),
    });
  };
  for (const { minLon, minLat, maxLon, maxLat } of rawBoxes(shape)) {
    if (maxLon - minLon >= 360) add(-180, minLat, 180, maxLat);
    else if (minLon < -180) {
      add(minLon + 360, minLat, 180, maxLat);
      add(-180, minLat, maxLon, maxLat);
    } else if (maxLon > 180) {
      add(minLon, minLat, 180, maxLat);
      add(-180, minLat, maxLon - 360, maxLat);
    } else {
      add(minLon, minLat, maxLon, maxLat);
      // Exactly at ±180 (no padding beyond it): the other side of the same meridian.
      if (maxLon === 180) add(-180, minLat, -180 + boundsPaddingDeg, maxLat);
      if (minLon === -180) add(180 - boundsPaddingDeg, minLat, 180, maxLat);
    }
  }
  // Drop boxes that another box holds.
  return out.filter((box, i) => !out.some((other, j) => j !== i && within(box, other) && (!within(other, box) || j < i)));
}
