import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { booleanPointInPolygon, distance, point, polygon } from '@turf/turf';
import {
  boundaryEpsilonDeg,
  boundaryEpsilonMeters,
  compileShape,
  containsPoint,
  earthRadiusMeters,
  haversineMeters,
  shapeBounds,
} from '../../internal/geo/contains.js';
import { MAX_RADIUS_M } from '../../internal/domain/shape.js';
import type { BBox, CircleShape, PolygonShape, RectangleShape, Shape } from '../../internal/domain/types.js';

const RAD = Math.PI / 180;
const EPS = boundaryEpsilonDeg;
/** Metres per degree of latitude (and of longitude at the equator). */
const M_PER_DEG = earthRadiusMeters * RAD;

/** The point `meters` from (lon, lat) along the initial bearing (degrees clockwise from north). */
function destination(lon: number, lat: number, bearing: number, meters: number): [number, number] {
  const d = meters / earthRadiusMeters;
  const theta = bearing * RAD;
  const phi1 = lat * RAD;
  const phi2 = Math.asin(Math.sin(phi1) * Math.cos(d) + Math.cos(phi1) * Math.sin(d) * Math.cos(theta));
  const lambda =
    lon * RAD + Math.atan2(Math.sin(theta) * Math.sin(d) * Math.cos(phi1), Math.cos(d) - Math.sin(phi1) * Math.sin(phi2));
  let lon2 = lambda / RAD;
  while (lon2 > 180) lon2 -= 360;
  while (lon2 < -180) lon2 += 360;
  return [lon2, Math.max(-90, Math.min(90, phi2 / RAD))];
}

const inBox = (b: BBox, lon: number, lat: number): boolean =>
  lon >= b.minLon && lon <= b.maxLon && lat >= b.minLat && lat <= b.maxLat;

/** Asserts that a point containsPoint accepts lies in one of the boxes; returns whether it was accepted. */
function assertCovered(shape: Shape, boxes: BBox[], lon: number, lat: number): boolean {
  if (!containsPoint(shape, lon, lat)) return false;
  if (!boxes.some((b) => inBox(b, lon, lat))) {
    assert.fail(`point (${lon}, ${lat}) is inside ${JSON.stringify(shape)} but in none of ${JSON.stringify(boxes)}`);
  }
  return true;
}

/** Planar distance in degrees from p to the segment ab. */
function segmentDistance(px: number, py: number, [ax, ay]: [number, number], [bx, by]: [number, number]): number {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / len2));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function edgeDistance(shape: PolygonShape, px: number, py: number): number {
  let best = Infinity;
  const pts = shape.points;
  for (let i = 0; i < pts.length; i++) {
    best = Math.min(best, segmentDistance(px, py, pts[i]!, pts[(i + 1) % pts.length]!));
  }
  return best;
}

const inside = (shape: Shape, lon: number, lat: number): boolean => containsPoint(shape, lon, lat);

describe('haversineMeters', () => {
  it('gives great-circle distances on the 6,371,008.8 m sphere', () => {
    assert.equal(haversineMeters(0, 0, 0, 0), 0);
    assert.ok(Math.abs(haversineMeters(0, 0, 1, 0) - M_PER_DEG) < 1e-6);
    assert.ok(Math.abs(haversineMeters(0, 0, 180, 0) - Math.PI * earthRadiusMeters) < 1e-6);
    assert.ok(Math.abs(haversineMeters(17, 90, -123, 90)) < 1e-6, 'longitude means nothing at the pole');
    assert.ok(Math.abs(haversineMeters(179.99, 0, -179.99, 0) - 0.02 * M_PER_DEG) < 1e-6, 'across the antimeridian');
    assert.ok(Math.abs(haversineMeters(13.4, 52.5, 2.35, 48.86) - 877_000) < 2_000, 'Berlin–Paris');
  });

  it('agrees with turf.distance', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -90, max: 90, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -90, max: 90, noNaN: true }),
        (lon1, lat1, lon2, lat2) => {
          const expected = distance([lon1, lat1], [lon2, lat2], { units: 'meters' });
          assert.ok(Math.abs(haversineMeters(lon1, lat1, lon2, lat2) - expected) <= 1e-6 + 1e-12 * expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('containsPoint: circles', () => {
  it('uses the boundary tolerance of 1e-9 degrees of arc', () => {
    assert.ok(Math.abs(boundaryEpsilonMeters - 1e-9 * M_PER_DEG) < 1e-15);
    assert.ok(boundaryEpsilonMeters > 1.1e-4 && boundaryEpsilonMeters < 1.12e-4);
  });

  it('includes the boundary and the tolerance, not more', () => {
    const c: CircleShape = { cx: 13.4, cy: 52.5, r: 1000 };
    assert.equal(inside(c, 13.4, 52.5), true, 'the centre');
    const north = (m: number): number => 52.5 + m / M_PER_DEG;
    assert.equal(inside(c, 13.4, north(999.999)), true);
    assert.equal(inside(c, 13.4, north(1000)), true, 'on the boundary');
    assert.equal(inside(c, 13.4, north(1000.00005)), true, 'within 1e-9° (0.11 mm)');
    assert.equal(inside(c, 13.4, north(1000.001)), false, '1 mm outside');
    assert.equal(inside(c, 13.4, 52.5 + 1000 / M_PER_DEG + 1e-6), false, '1e-6° outside');
    assert.equal(inside(c, 13.4, 52.5 + 1000 / M_PER_DEG + 0.5e-9), true, '0.5e-9° outside counts as on it');
  });

  it('handles tiny circles (r = 0.5 m)', () => {
    const c: CircleShape = { cx: -70.5, cy: -33.4, r: 0.5 };
    assert.equal(inside(c, -70.5, -33.4), true);
    assert.equal(inside(c, -70.5, -33.4 + 0.4 / M_PER_DEG), true);
    assert.equal(inside(c, -70.5, -33.4 - 0.4999 / M_PER_DEG), true);
    assert.equal(inside(c, -70.5, -33.4 + 0.6 / M_PER_DEG), false);
    const [elon, elat] = destination(-70.5, -33.4, 90, 0.49);
    assert.equal(inside(c, elon, elat), true);
    const [flon, flat] = destination(-70.5, -33.4, 45, 0.51);
    assert.equal(inside(c, flon, flat), false);
  });

  it('handles huge circles (r = 20,000 km) and the whole Earth', () => {
    const c: CircleShape = { cx: 0, cy: 0, r: 20_000_000 };
    assert.equal(inside(c, 179, 0), true, '179° away: 19,904 km');
    assert.equal(inside(c, -179, 0), true);
    assert.equal(inside(c, 0, 89.9), true);
    assert.equal(inside(c, 180, 0), false, 'the antipode is 20,015 km away');
    assert.equal(inside(c, -180, 0), false);
    assert.equal(inside(c, 179.95, 0.05), false);
    const all: CircleShape = { cx: 10, cy: 20, r: MAX_RADIUS_M };
    assert.equal(inside(all, -170, -20), true, 'the antipode is inside the largest circle');
    assert.equal(inside({ cx: 0, cy: 0, r: Math.PI * earthRadiusMeters }, 180, 0), true, 'exactly half round');
  });

  it('handles the poles', () => {
    const cap: CircleShape = { cx: 0, cy: 90, r: 1000 };
    for (const lon of [-180, -123.4, 0, 45, 180]) {
      assert.equal(inside(cap, lon, 90), true, `pole at lon ${lon}`);
      assert.equal(inside(cap, lon, 90 - 500 / M_PER_DEG), true, `500 m from the pole at lon ${lon}`);
      assert.equal(inside(cap, lon, 90 - 1001 / M_PER_DEG), false, `1001 m from the pole at lon ${lon}`);
      assert.equal(inside(cap, lon, -90), false);
    }
    // A circle near the pole holds the pole at every longitude.
    const near: CircleShape = { cx: 17, cy: 89.99, r: 1200 }; // the pole is 1112 m away
    const far: CircleShape = { cx: 17, cy: 89.99, r: 1100 };
    for (const lon of [-180, -163, 0, 17, 100, 180]) {
      assert.equal(inside(near, lon, 90), true);
      assert.equal(inside(far, lon, 90), false);
    }
    // Across the pole: 89.995 on the far side is 0.015° from the centre.
    assert.equal(inside(near, 17 - 180, 89.995), false);
    assert.equal(inside({ cx: 17, cy: 89.99, r: 1700 }, 17 - 180, 89.995), true);
    assert.equal(inside({ cx: 0, cy: -90, r: 10 }, 99, -90), true);
  });

  it('crosses the antimeridian', () => {
    const c: CircleShape = { cx: 179.99, cy: 0, r: 5000 };
    assert.equal(inside(c, -179.99, 0), true, '0.02° ≈ 2.2 km across the antimeridian');
    assert.equal(inside(c, 180, 0), true);
    assert.equal(inside(c, -180, 0), true);
    assert.equal(inside(c, -179.97, 0), true);
    assert.equal(inside(c, -179.9, 0), false, '0.11° ≈ 12 km');
    assert.equal(inside(c, 179.9, 0), false);
    const west: CircleShape = { cx: -180, cy: 10, r: 100 };
    assert.equal(inside(west, 180, 10), true);
    assert.equal(inside(west, 179.9995, 10), true);
  });

  it('agrees with turf.distance away from the boundary', () => {
    let insideCount = 0;
    let outsideCount = 0;
    const circle = fc.record({
      cx: fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.constantFrom(-180, 180, 179.999, 0)),
      cy: fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.constantFrom(-90, 90, 89.9999, 0)),
      // Log-uniform radius from 0.5 m to the largest allowed.
      r: fc.double({ min: Math.log(0.5), max: Math.log(MAX_RADIUS_M), noNaN: true }).map((x) => Math.min(MAX_RADIUS_M, Math.exp(x))),
    });
    const probe = fc.oneof(
      fc.tuple(fc.constant('near' as const), fc.double({ min: 0, max: 360, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true })),
      fc.tuple(fc.constant('any' as const), fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: -90, max: 90, noNaN: true })),
    );
    fc.assert(
      fc.property(circle, fc.array(probe, { minLength: 1, maxLength: 20 }), (c, probes) => {
        for (const [kind, a, b] of probes) {
          const [lon, lat] = kind === 'near' ? destination(c.cx, c.cy, a, b * c.r) : [a, b];
          const d = distance([c.cx, c.cy], [lon, lat], { units: 'meters' });
          if (Math.abs(d - c.r) <= 1e-6 * c.r + 1e-3) continue;
          const expected = d <= c.r;
          assert.equal(containsPoint(c, lon, lat), expected, `${JSON.stringify(c)} (${lon}, ${lat}) at ${d} m`);
          if (expected) insideCount++;
          else outsideCount++;
        }
      }),
      { numRuns: 1000 },
    );
    assert.ok(insideCount > 1000 && outsideCount > 1000, `${insideCount} inside, ${outsideCount} outside`);
  });
});

describe('containsPoint: rectangles', () => {
  const r: RectangleShape = { w: 10, n: 40, e: 20, s: 30 };

  it('includes edges and corners exactly, and within 1e-9 degrees', () => {
    assert.equal(inside(r, 15, 35), true);
    for (const [lon, lat] of [
      [10, 35],
      [20, 35],
      [15, 30],
      [15, 40],
      [10, 30],
      [20, 40],
      [10, 40],
      [20, 30],
    ] as const) {
      assert.equal(inside(r, lon, lat), true, `on the boundary at (${lon}, ${lat})`);
    }
    assert.equal(inside(r, 10 - 0.5e-9, 35), true);
    assert.equal(inside(r, 20 + 0.9e-9, 35), true);
    assert.equal(inside(r, 15, 40 + 0.5e-9), true);
    assert.equal(inside(r, 15, 30 - 0.9e-9), true);
    assert.equal(inside(r, 20 + 0.9e-9, 40 + 0.9e-9), true, 'near a corner');
    assert.equal(inside(r, 10 - 1e-6, 35), false);
    assert.equal(inside(r, 20 + 1e-6, 35), false);
    assert.equal(inside(r, 15, 40 + 1e-6), false);
    assert.equal(inside(r, 15, 30 - 1e-6), false);
    assert.equal(inside(r, 9, 35), false);
    assert.equal(inside(r, 15, 41), false);
  });

  it('crosses the antimeridian when w > e', () => {
    const pacific: RectangleShape = { w: 170, n: 10, e: -170, s: -10 };
    assert.equal(inside(pacific, 175, 0), true);
    assert.equal(inside(pacific, -175, 0), true);
    assert.equal(inside(pacific, 180, 0), true);
    assert.equal(inside(pacific, -180, 0), true);
    assert.equal(inside(pacific, 170, 10), true, 'corner');
    assert.equal(inside(pacific, -170, -10), true, 'corner');
    assert.equal(inside(pacific, 170 - 0.5e-9, 0), true);
    assert.equal(inside(pacific, -170 + 0.5e-9, 0), true);
    assert.equal(inside(pacific, 170 - 1e-6, 0), false);
    assert.equal(inside(pacific, -170 + 1e-6, 0), false);
    assert.equal(inside(pacific, 0, 0), false);
    assert.equal(inside(pacific, 169.99, 0), false);
    assert.equal(inside(pacific, -169.99, 0), false);
    assert.equal(inside(pacific, 175, 10.1), false);
  });

  it('treats longitudes -180 and 180 as one meridian', () => {
    const east: RectangleShape = { w: 170, n: 10, e: 180, s: 0 };
    assert.equal(inside(east, -180, 5), true);
    assert.equal(inside(east, -180 + 0.5e-9, 5), true);
    assert.equal(inside(east, -180 + 1e-6, 5), false);
    assert.equal(inside(east, -179, 5), false);
    const west: RectangleShape = { w: -180, n: 10, e: -170, s: 0 };
    assert.equal(inside(west, 180, 5), true);
    assert.equal(inside(west, 180 - 0.5e-9, 5), true);
    assert.equal(inside(west, 180 - 1e-6, 5), false);
    const world: RectangleShape = { w: -180, n: 90, e: 180, s: -90 };
    assert.equal(inside(world, 180, 90), true);
    assert.equal(inside(world, -180, -90), true);
    assert.equal(inside(world, 0, 0), true);
  });

  it('allows zero width and height', () => {
    const line: RectangleShape = { w: 5, n: 10, e: 5, s: 0 };
    assert.equal(inside(line, 5, 3), true);
    assert.equal(inside(line, 5 + 0.5e-9, 3), true);
    assert.equal(inside(line, 5 + 1e-6, 3), false);
    const dot: RectangleShape = { w: 5, n: 3, e: 5, s: 3 };
    assert.equal(inside(dot, 5, 3), true);
    assert.equal(inside(dot, 5, 3 + 1e-6), false);
  });

  it('holds a pole it reaches at every longitude', () => {
    const arctic: RectangleShape = { w: 0, n: 90, e: 10, s: 80 };
    assert.equal(inside(arctic, 5, 90), true);
    assert.equal(inside(arctic, 50, 90), true, 'the pole is one point');
    assert.equal(inside(arctic, -180, 90), true);
    assert.equal(inside(arctic, 50, 90 - 0.5e-9), true);
    assert.equal(inside(arctic, 50, 89.99), false);
    assert.equal(inside(arctic, 50, -90), false);
    const below: RectangleShape = { w: 0, n: 89.99, e: 10, s: 80 };
    assert.equal(inside(below, 5, 90), false);
    const antarctic: RectangleShape = { w: -10, n: -80, e: 10, s: -90 };
    assert.equal(inside(antarctic, 170, -90), true);
  });
});

describe('containsPoint: polygons', () => {
  const triangle: PolygonShape = {
    points: [
      [0, 0],
      [10, 0],
      [0, 10],
    ],
  };

  it('includes edges and vertices exactly, and within 1e-9 degrees', () => {
    assert.equal(inside(triangle, 2, 2), true);
    assert.equal(inside(triangle, 5, 5), true, 'on the hypotenuse');
    assert.equal(inside(triangle, 5, 0), true, 'on the bottom edge');
    assert.equal(inside(triangle, 0, 5), true, 'on the left edge');
    for (const [x, y] of triangle.points) assert.equal(inside(triangle, x, y), true, `vertex (${x}, ${y})`);
    const n = Math.SQRT1_2; // unit normal of the hypotenuse, pointing out
    assert.equal(inside(triangle, 5 + 0.9e-9 * n, 5 + 0.9e-9 * n), true);
    assert.equal(inside(triangle, 5 + 1e-6 * n, 5 + 1e-6 * n), false);
    assert.equal(inside(triangle, 5, -0.5e-9), true);
    assert.equal(inside(triangle, 5, -1e-6), false);
    assert.equal(inside(triangle, -0.9e-9, 5), true);
    assert.equal(inside(triangle, -1e-6, 5), false);
    assert.equal(inside(triangle, 10 + 0.9e-9, 0), true, 'next to a vertex');
    assert.equal(inside(triangle, 10 + 0.6e-9, 0.6e-9), true, 'diagonally next to a vertex');
    assert.equal(inside(triangle, 10 + 0.8e-9, -0.8e-9), false, '1.13e-9 from the vertex');
    assert.equal(inside(triangle, 10 + 1e-6, 0), false);
    assert.equal(inside(triangle, -1e-6, -1e-6), false);
    assert.equal(inside(triangle, 6, 6), false);
  });

  it('gets concave polygons right: the notch of a U is outside', () => {
    const u: PolygonShape = {
      points: [
        [0, 0],
        [3, 0],
        [3, 3],
        [2, 3],
        [2, 1],
        [1, 1],
        [1, 3],
        [0, 3],
      ],
    };
    assert.equal(inside(u, 1.5, 2), false, 'in the notch');
    assert.equal(inside(u, 1.5, 2.9999), false);
    assert.equal(inside(u, 1.5, 3), false, 'the open top of the notch');
    assert.equal(inside(u, 0.5, 2), true, 'left arm');
    assert.equal(inside(u, 2.5, 2), true, 'right arm');
    assert.equal(inside(u, 1.5, 0.5), true, 'base');
    assert.equal(inside(u, 1.5, 1), true, 'on the bottom of the notch');
    assert.equal(inside(u, 1.5, 1 + 0.5e-9), true);
    assert.equal(inside(u, 1.5, 1 + 1e-6), false);
    assert.equal(inside(u, 1, 2), true, 'on the inner edge of the left arm');
    assert.equal(inside(u, 1 + 0.5e-9, 2), true);
    assert.equal(inside(u, 1 + 1e-6, 2), false);
    assert.equal(inside(u, 2 - 1e-6, 2), false);
    // A ray through vertices and along horizontal edges.
    assert.equal(inside(u, -0.5, 1), false);
    assert.equal(inside(u, 0.5, 1), true);
    assert.equal(inside(u, 2.5, 1), true);
    assert.equal(inside(u, 3.5, 1), false);
    assert.equal(inside(u, 0.5, 3), true, 'on the top edge of an arm');
    assert.equal(inside(u, -0.5, 3), false);
  });

  it('ignores a repeated closing vertex', () => {
    const closed: PolygonShape = { points: [...triangle.points, [0, 0]] };
    assert.equal(inside(closed, 2, 2), true);
    assert.equal(inside(closed, 6, 6), false);
    assert.equal(inside(closed, 0, 0), true);
  });

  it('treats longitudes -180 and 180 as one meridian', () => {
    const east: PolygonShape = {
      points: [
        [170, 0],
        [180, 0],
        [180, 10],
        [170, 10],
      ],
    };
    assert.equal(inside(east, 180, 5), true);
    assert.equal(inside(east, -180, 5), true);
    assert.equal(inside(east, -180 + 0.5e-9, 5), true);
    assert.equal(inside(east, -180 + 1e-6, 5), false);
    assert.equal(inside(east, -180, 10.5), false);
    const west: PolygonShape = {
      points: [
        [-180, -10],
        [-170, 0],
        [-180, 10],
      ],
    };
    assert.equal(inside(west, 180, 0), true);
    assert.equal(inside(west, 180, 9), true);
    assert.equal(inside(west, 180, 11), false);
    assert.equal(inside(west, 180 - 0.5e-9, 5), true);
    assert.equal(inside(west, 180 - 1e-6, 5), false);
    const near: PolygonShape = {
      points: [
        [170, 0],
        [180 - 0.5e-9, 0],
        [180 - 0.5e-9, 10],
        [170, 10],
      ],
    };
    assert.equal(inside(near, -180, 5), true, 'within 1e-9° across the antimeridian');
  });

  it('holds a pole it reaches at every longitude', () => {
    const cap: PolygonShape = {
      points: [
        [0, 80],
        [10, 80],
        [5, 90],
      ],
    };
    assert.equal(inside(cap, 5, 90), true);
    assert.equal(inside(cap, 120, 90), true);
    assert.equal(inside(cap, -180, 90), true);
    assert.equal(inside(cap, 120, 89.9), false);
    assert.equal(inside(cap, 5, 85), true);
  });

  it('agrees with turf.booleanPointInPolygon away from the edges', () => {
    // Star-shaped polygons (concave ones included): vertices sorted by angle around a
    // centre, no angular gap of 180° or more, so the ring is simple.
    const star = fc
      .record({
        cx: fc.double({ min: -170, max: 170, noNaN: true }),
        cy: fc.double({ min: -75, max: 75, noNaN: true }),
        size: fc.double({ min: Math.log(1e-4), max: Math.log(10), noNaN: true }).map(Math.exp),
        vertices: fc.array(
          fc.tuple(fc.double({ min: 0, max: 0.4, noNaN: true }), fc.double({ min: 0.05, max: 1, noNaN: true })),
          { minLength: 3, maxLength: 40 },
        ),
      })
      .map(({ cx, cy, size, vertices }): PolygonShape => {
        const k = vertices.length;
        return {
          points: vertices.map(([jitter, radius], i): [number, number] => {
            const angle = ((i + jitter) * 2 * Math.PI) / k;
            return [cx + size * radius * Math.cos(angle), cy + size * radius * Math.sin(angle)];
          }),
        };
      });
    let insideCount = 0;
    let outsideCount = 0;
    fc.assert(
      fc.property(
        star,
        fc.array(fc.tuple(fc.double({ min: -1.2, max: 1.2, noNaN: true }), fc.double({ min: -1.2, max: 1.2, noNaN: true })), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.array(fc.tuple(fc.nat(), fc.double({ min: -1, max: 1, noNaN: true })), { maxLength: 10 }),
        (shape, relative, onVertexLatitude) => {
          const xs = shape.points.map(([x]) => x);
          const ys = shape.points.map(([, y]) => y);
          const cx = (Math.min(...xs) + Math.max(...xs)) / 2;
          const cy = (Math.min(...ys) + Math.max(...ys)) / 2;
          const size = Math.max(Math.max(...xs) - Math.min(...xs), Math.max(...ys) - Math.min(...ys)) / 2;
          const probes: [number, number][] = relative.map(([u, v]) => [cx + u * size, cy + v * size]);
          // Points at exactly a vertex's latitude: the crossing test's degenerate case.
          for (const [i, u] of onVertexLatitude) {
            const [, vy] = shape.points[i % shape.points.length]!;
            probes.push([cx + u * size * 1.2, vy]);
          }
          const turfPolygon = polygon([[...shape.points, shape.points[0]!]]);
          for (const [lon, lat] of probes) {
            if (edgeDistance(shape, lon, lat) <= 1e-7) continue;
            const expected = booleanPointInPolygon(point([lon, lat]), turfPolygon);
            assert.equal(containsPoint(shape, lon, lat), expected, `(${lon}, ${lat}) in ${JSON.stringify(shape.points)}`);
            if (expected) insideCount++;
            else outsideCount++;
          }
        },
      ),
      { numRuns: 1000 },
    );
    assert.ok(insideCount > 1000 && outsideCount > 1000, `${insideCount} inside, ${outsideCount} outside`);
  });

  it('tests large polygons quickly', () => {
    const n = 10_000;
    const big: PolygonShape = {
      points: Array.from({ length: n }, (_, i): [number, number] => {
        const a = (2 * Math.PI * i) / n;
        const r = 1 + 0.2 * Math.sin(7 * a);
        return [10 + r * Math.cos(a), 50 + r * Math.sin(a)];
      }),
    };
    assert.equal(inside(big, 10, 50), true);
    assert.equal(inside(big, 12, 52), false);
    const test = compileShape(big);
    let count = 0;
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) if (test(10 + Math.sin(i) * 1.3, 50 + Math.cos(i * 1.7) * 1.3)) count++;
    const perPoint = (performance.now() - started) / 20_000;
    assert.ok(count > 0);
    // ~0.3 µs on a slow CI machine; a linear scan of 10,000 edges takes ~10 µs.
    assert.ok(perPoint < 0.005, `${perPoint * 1000} µs per point`);
  });
});

describe('compileShape', () => {
  it('decides exactly as containsPoint', () => {
    const shapes: Shape[] = [
      { cx: 179.99, cy: 0, r: 5000 },
      { w: 170, n: 10, e: -170, s: -10 },
      { points: [[0, 0], [10, 0], [0, 10]] },
    ];
    for (const shape of shapes) {
      const test = compileShape(shape);
      for (const [lon, lat] of [
        [-179.99, 0],
        [175, 5],
        [5, 5],
        [5, 5 + 1e-6],
        [0, 0],
        [180, 0],
      ] as const) {
        assert.equal(test(lon, lat), containsPoint(shape, lon, lat));
      }
    }
  });
});

describe('shapeBounds', () => {
  it('gives the expected boxes for plain shapes', () => {
    const [box, ...rest] = shapeBounds({ w: 10, n: 40, e: 20, s: 30 });
    assert.equal(rest.length, 0);
    assert.ok(box!.minLon < 10 && box!.minLon >= 10 - 3 * EPS);
    assert.ok(box!.maxLat > 40 && box!.maxLat <= 40 + 3 * EPS);
    const pacific = shapeBounds({ w: 170, n: 10, e: -170, s: -10 });
    assert.equal(pacific.length, 2);
    assert.ok(pacific.some((b) => b.maxLon === 180 && Math.abs(b.minLon - 170) < 3 * EPS));
    assert.ok(pacific.some((b) => b.minLon === -180 && Math.abs(b.maxLon + 170) < 3 * EPS));
    const circle = shapeBounds({ cx: 0, cy: 0, r: 111_195.08 }); // about 1°
    assert.equal(circle.length, 1);
    assert.ok(Math.abs(circle[0]!.maxLat - 1) < 1e-6 && Math.abs(circle[0]!.maxLon - 1) < 1e-6);
    const north = shapeBounds({ cx: 0, cy: 60, r: 111_195.08 });
    assert.ok(Math.abs(north[0]!.maxLon - Math.asin(Math.sin(RAD) / Math.cos(60 * RAD)) / RAD) < 1e-6, 'asin(sin(r/R)/cos(lat))');
    const polar = shapeBounds({ cx: 30, cy: 89.5, r: 100_000 });
    assert.deepEqual(
      polar.map((b) => [b.minLon, b.maxLon, b.maxLat]),
      [[-180, 180, 90]],
      'a circle over the pole takes all longitudes',
    );
  });

  it('splits at the antimeridian and adds the other side of ±180', () => {
    const across = shapeBounds({ cx: 179.99, cy: 0, r: 5000 });
    assert.equal(across.length, 2);
    assert.ok(across.some((b) => inBox(b, -179.99, 0)));
    assert.ok(across.some((b) => inBox(b, 179.99, 0)));
    const east = shapeBounds({ w: 170, n: 10, e: 180, s: 0 });
    assert.ok(east.some((b) => inBox(b, -180, 5)), 'a sliver at -180');
    const west = shapeBounds({ points: [[-180, -10], [-170, 0], [-180, 10]] });
    assert.ok(west.some((b) => inBox(b, 180, 5)), 'a sliver at 180');
    assert.ok(!west.some((b) => inBox(b, 179.99, 5)));
    const arctic = shapeBounds({ w: 0, n: 90, e: 10, s: 80 });
    assert.ok(arctic.some((b) => inBox(b, -150, 90)), 'the pole at every longitude');
    assert.ok(!arctic.some((b) => inBox(b, -150, 89.99)));
  });

  it('covers every point containsPoint accepts, boundary, ±180 and poles included', () => {
    const lon = fc.oneof(fc.double({ min: -180, max: 180, noNaN: true }), fc.constantFrom(-180, 180, 0, 179.9999999995, -179.9999999995));
    const lat = fc.oneof(fc.double({ min: -90, max: 90, noNaN: true }), fc.constantFrom(-90, 90, 0, 89.9999999995, -89.9999999995));
    const circle = fc.record({
      cx: lon,
      cy: lat,
      r: fc.double({ min: Math.log(0.5), max: Math.log(MAX_RADIUS_M), noNaN: true }).map((x) => Math.min(MAX_RADIUS_M, Math.exp(x))),
    });
    const rectangle = fc.tuple(lon, lon, lat, lat).map(([w, e, a, b]): RectangleShape => ({ w, e, s: Math.min(a, b), n: Math.max(a, b) }));
    const poly = fc
      .record({
        cx: lon,
        cy: fc.double({ min: -90, max: 90, noNaN: true }),
        size: fc.double({ min: Math.log(1e-6), max: Math.log(30), noNaN: true }).map(Math.exp),
        vertices: fc.array(fc.tuple(fc.double({ min: 0, max: 0.4, noNaN: true }), fc.double({ min: 0.05, max: 1, noNaN: true })), {
          minLength: 3,
          maxLength: 12,
        }),
      })
      .map(({ cx, cy, size, vertices }): PolygonShape => ({
        points: vertices.map(([jitter, radius], i): [number, number] => {
          const angle = ((i + jitter) * 2 * Math.PI) / vertices.length;
          const clamp = (v: number, limit: number): number => Math.max(-limit, Math.min(limit, v));
          return [clamp(cx + size * radius * Math.cos(angle), 180), clamp(cy + size * radius * Math.sin(angle), 90)];
        }),
      }));
    const shape: fc.Arbitrary<Shape> = fc.oneof(circle, rectangle, poly);
    const deltas = [0, 5e-10, -5e-10, 9.99e-10, -9.99e-10, 1e-9, -1e-9, 1.5e-9, -1.5e-9, 1e-6, -1e-6];
    let accepted = 0;
    let nearBoundaryAccepted = 0;

    fc.assert(
      fc.property(shape, fc.array(fc.tuple(lon, lat), { maxLength: 20 }), fc.double({ min: 0, max: 360, noNaN: true }), (s, randomPoints, bearing) => {
        const boxes = shapeBounds(s);
        for (const b of boxes) {
          assert.ok(b.minLon <= b.maxLon && b.minLat <= b.maxLat, JSON.stringify(b));
          assert.ok(b.minLon >= -180 && b.maxLon <= 180 && b.minLat >= -90 && b.maxLat <= 90, JSON.stringify(b));
        }
        const anchors: [number, number][] = [];
        if ('r' in s) {
          for (const b of [bearing, 0, 90, 180, 270, bearing + 45]) {
            for (const m of [-1, 0, 0.5, 0.99, 0.999999, 1, 1.000001]) {
              anchors.push(destination(s.cx, s.cy, b, s.r + m * boundaryEpsilonMeters));
            }
          }
          anchors.push([s.cx, s.cy]);
        } else if ('points' in s) {
          const pts = s.points;
          pts.forEach(([x, y], i) => {
            const [nx, ny] = pts[(i + 1) % pts.length]!;
            anchors.push([x, y], [(x + nx) / 2, (y + ny) / 2], [x + (nx - x) * (bearing / 360), y + (ny - y) * (bearing / 360)]);
          });
        } else {
          for (const x of [s.w, s.e, (s.w + s.e) / 2]) for (const y of [s.s, s.n, (s.s + s.n) / 2]) anchors.push([x, y]);
        }
        for (const [x, y] of randomPoints) if (assertCovered(s, boxes, x, y)) accepted++;
        const candidates: [number, number][] = [];
        for (const [x, y] of anchors) {
          for (const dx of deltas) for (const dy of deltas) candidates.push([x + dx, y + dy]);
          candidates.push([x + 360, y], [x - 360, y]);
          for (const pole of [90, -90]) candidates.push([x, pole], [x, pole - Math.sign(pole) * 0.5e-9]);
        }
        for (const y of [...anchors.map(([, ay]) => ay), 0, 45, -45]) {
          for (const x of [180, -180, 180 - 0.5e-9, -180 + 0.5e-9, 180 - 1.5e-9, -180 + 1.5e-9]) candidates.push([x, y]);
        }
        for (const [x, y] of candidates) {
          if (!(x >= -180 && x <= 180 && y >= -90 && y <= 90)) continue;
          if (assertCovered(s, boxes, x, y)) nearBoundaryAccepted++;
        }
      }),
      { numRuns: 1500 },
    );
    assert.ok(accepted > 1000 && nearBoundaryAccepted > 10_000, `${accepted} random and ${nearBoundaryAccepted} anchored points accepted`);
  });

  it('agrees at lon -180 and 180, and at every longitude of a pole', () => {
    const shapes: Shape[] = [
      { cx: 179.99, cy: 0, r: 5000 },
      { cx: 0, cy: 89, r: 200_000 },
      { w: 170, n: 10, e: -170, s: -10 },
      { w: -180, n: 10, e: -170, s: -10 },
      { w: 0, n: 90, e: 10, s: 80 },
      { points: [[170, 0], [180, 0], [180, 10], [170, 10]] },
      { points: [[0, -80], [10, -80], [5, -90]] },
    ];
    for (const shape of shapes) {
      for (const lat of [-90, -89.5, -10, -0.5e-9, 0, 5, 10, 10 + 0.5e-9, 10 + 1e-6, 89.5, 90]) {
        assert.equal(inside(shape, 180, lat), inside(shape, -180, lat), `${JSON.stringify(shape)} at lat ${lat}`);
      }
      for (const pole of [90, -90]) {
        const first = inside(shape, 0, pole);
        for (const lon of [-180, -90, 45, 179, 180]) assert.equal(inside(shape, lon, pole), first, `${JSON.stringify(shape)} at ${pole}`);
      }
    }
  });
});
