import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  findSelfIntersection,
  isSelfIntersecting,
  orientation,
  polygonArea2,
  ringWithoutRepeats,
  segmentsIntersect,
  type Point,
} from '../../internal/geo/polygon.js';

const square: Point[] = [
  [0, 0],
  [1, 0],
  [1, 1],
  [0, 1],
];

describe('orientation', () => {
  it('gives the exact turn direction', () => {
    assert.equal(orientation([0, 0], [1, 0], [0, 1]), 1);
    assert.equal(orientation([0, 0], [0, 1], [1, 0]), -1);
    assert.equal(orientation([0, 0], [1, 1], [2, 2]), 0);
    assert.equal(orientation([0, 0], [0, 1], [0, 5]), 0);
  });

  it('is exact where floating point is not', () => {
    // 0.1 + 0.2 style cancellation: the points are not collinear in exact arithmetic.
    // As doubles 3 × 0.1 = 0.30000000000000001665 > 0.3 = 0.29999999999999998890: c lies
    // just below the line through a and b, a clockwise turn.
    assert.equal(orientation([0, 0], [1, 0.1], [3, 0.3]), -1);
    // A classic near-degenerate case: c lies a hair above the line through a and b.
    const a: Point = [0.5, 0.5];
    const b: Point = [12, 12];
    const c: Point = [24, 24 + 2 ** -48];
    assert.equal(orientation(a, b, c), 1);
    assert.equal(orientation(a, b, [24, 24]), 0);
    assert.equal(orientation(a, b, [24, 24 - 2 ** -48]), -1);
  });

  it('survives tiny coordinate differences (underflowing products)', () => {
    const t = 1e-200;
    assert.equal(orientation([0, 0], [t, 0], [0, t]), 1);
    assert.equal(orientation([0, 0], [t, t], [2 * t, 2 * t]), 0);
  });
});

describe('segmentsIntersect', () => {
  it('detects crossing, touching and collinear overlap', () => {
    assert.equal(segmentsIntersect([0, 0], [2, 2], [0, 2], [2, 0]), true);
    assert.equal(segmentsIntersect([0, 0], [2, 0], [1, 0], [1, 5]), true); // T-touch
    assert.equal(segmentsIntersect([0, 0], [2, 0], [2, 0], [3, 1]), true); // shared end point
    assert.equal(segmentsIntersect([0, 0], [2, 0], [1, 0], [3, 0]), true); // collinear overlap
    assert.equal(segmentsIntersect([0, 0], [1, 0], [2, 0], [3, 0]), false); // collinear, apart
    assert.equal(segmentsIntersect([0, 0], [1, 1], [0, 1], [0.4, 0.6]), false);
    assert.equal(segmentsIntersect([0, 0], [1, 0], [0, 1], [1, 1]), false); // parallel
  });
});

describe('polygonArea2', () => {
  it('is the signed doubled area', () => {
    assert.equal(polygonArea2(square), 2);
    assert.equal(polygonArea2([...square].reverse()), -2);
    assert.equal(polygonArea2([...square, [0, 0]]), 2); // closing vertex adds nothing
    assert.equal(
      polygonArea2([
        [0, 0],
        [4, 0],
        [0, 3],
      ]),
      12,
    );
    assert.equal(
      polygonArea2([
        [0, 0],
        [1, 1],
        [2, 2],
      ]),
      0,
    );
    assert.equal(polygonArea2([]), 0);
  });

  it('is zero for a symmetric bow-tie (the lobes cancel)', () => {
    assert.equal(
      polygonArea2([
        [0, 0],
        [1, 1],
        [1, 0],
        [0, 1],
      ]),
      0,
    );
  });
});

describe('ringWithoutRepeats', () => {
  it('drops consecutive repeats and a closing vertex, keeping indices', () => {
    const { ring, index } = ringWithoutRepeats([
      [0, 0],
      [1, 0],
      [1, 0],
      [1, 1],
      [0, 0],
      [0, 0],
    ]);
    assert.deepEqual(ring, [
      [0, 0],
      [1, 0],
      [1, 1],
    ]);
    assert.deepEqual(index, [0, 1, 3]);
  });
});

describe('isSelfIntersecting', () => {
  it('accepts simple polygons', () => {
    assert.equal(isSelfIntersecting(square), false);
    assert.equal(isSelfIntersecting([...square].reverse()), false);
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [4, 0],
        [4, 4],
        [2, 1], // concave
        [0, 4],
      ]),
      false,
    );
    // Collinear consecutive edges in the same direction are fine.
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [1, 0],
        [2, 0],
        [2, 2],
      ]),
      false,
    );
  });

  it('accepts a repeated closing vertex and repeated consecutive vertices', () => {
    assert.equal(isSelfIntersecting([...square, [0, 0]]), false);
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [1, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ]),
      false,
    );
  });

  it('finds a bow-tie', () => {
    const bowTie: Point[] = [
      [0, 0],
      [1, 1],
      [1, 0],
      [0, 1],
    ];
    assert.equal(isSelfIntersecting(bowTie), true);
    assert.deepEqual(findSelfIntersection(bowTie), [0, 2]);
  });

  it('finds a collinear overlap of edges that are not consecutive', () => {
    // Edge [3,0]→[1,0] lies on edge [0,0]→[4,0].
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [4, 0],
        [4, 1],
        [3, 0],
        [1, 0],
        [0, 1],
      ]),
      true,
    );
  });

  it('finds consecutive edges folding back over each other (a spike)', () => {
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [2, 0],
        [2, 2],
        [2, 1],
        [0, 2],
      ]),
      true,
    );
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [1, 0],
        [2, 0],
      ]),
      true, // all collinear: the ring runs back over itself
    );
  });

  it('finds two edges touching at a vertex that they do not share by position in the ring', () => {
    // Figure eight: the vertex [1,1] is visited twice.
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [2, 0],
        [1, 1],
        [2, 2],
        [0, 2],
        [1, 1],
      ]),
      true,
    );
    // A vertex touching the middle of another edge.
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [4, 0],
        [4, 4],
        [2, 0],
        [0, 4],
      ]),
      true,
    );
  });

  it('handles vertical edges', () => {
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [0, 3],
        [2, 3],
        [2, 2],
        [-1, 2],
        [-1, 0],
      ]),
      true,
    );
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [0, 3],
        [1, 3],
        [1, 0],
      ]),
      false,
    );
  });

  it('reports degenerate rings of two vertices and ignores shorter ones', () => {
    assert.equal(
      isSelfIntersecting([
        [0, 0],
        [1, 1],
      ]),
      true,
    );
    assert.equal(isSelfIntersecting([[0, 0]]), false);
    assert.equal(isSelfIntersecting([]), false);
  });
});

// ---------------------------------------------------------------------------
// Oracle: every pair of edges, with exact integer arithmetic (coordinates are small
// integers or multiples of 1/8, so every product below is exact in doubles).
// ---------------------------------------------------------------------------

function orientInt(a: Point, b: Point, c: Point): number {
  return Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

function onSegmentInt(a: Point, b: Point, c: Point): boolean {
  return (
    Math.min(a[0], b[0]) <= c[0] &&
    c[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= c[1] &&
    c[1] <= Math.max(a[1], b[1])
  );
}

function meetInt(a: Point, b: Point, c: Point, d: Point): boolean {
  const o1 = orientInt(a, b, c);
  const o2 = orientInt(a, b, d);
  const o3 = orientInt(c, d, a);
  const o4 = orientInt(c, d, b);
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  return (
    (o1 === 0 && onSegmentInt(a, b, c)) ||
    (o2 === 0 && onSegmentInt(a, b, d)) ||
    (o3 === 0 && onSegmentInt(c, d, a)) ||
    (o4 === 0 && onSegmentInt(c, d, b))
  );
}

/** All forbidden pairs, as [index of edge i's first vertex, same for j] in the input. */
function bruteForce(points: readonly Point[]): Set<string> {
  // Drop consecutive repeats (and closing repeats) independently of the code under test.
  const ring: Point[] = [];
  const index: number[] = [];
  points.forEach((p, i) => {
    const last = ring.at(-1);
    if (last === undefined || last[0] !== p[0] || last[1] !== p[1]) {
      ring.push(p);
      index.push(i);
    }
  });
  while (ring.length > 1 && ring[0]![0] === ring.at(-1)![0] && ring[0]![1] === ring.at(-1)![1]) {
    ring.pop();
    index.pop();
  }
  const n = ring.length;
  const found = new Set<string>();
  if (n < 3) {
    if (n === 2) found.add(`${index[0]},${index[1]}`);
    return found;
  }
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let bad: boolean;
      const adjacentAt = j === i + 1 ? j : i === 0 && j === n - 1 ? 0 : -1;
      if (adjacentAt >= 0) {
        const p = ring[(adjacentAt + n - 1) % n]!;
        const s = ring[adjacentAt]!;
        const q = ring[(adjacentAt + 1) % n]!;
        // Folded back: q lies on p–s beyond s, or p lies on s–q.
        bad = orientInt(p, s, q) === 0 && (onSegmentInt(p, s, q) || onSegmentInt(s, q, p));
      } else {
        bad = meetInt(ring[i]!, ring[(i + 1) % n]!, ring[j]!, ring[(j + 1) % n]!);
      }
      if (bad) found.add(`${index[i]},${index[j]}`);
    }
  }
  return found;
}

const pointIn = (max: number, scale = 1): fc.Arbitrary<Point> =>
  fc.tuple(fc.integer({ min: -max, max }), fc.integer({ min: -max, max })).map(([x, y]) => [x / scale, y / scale] as Point);

function agreesWithOracle(points: Point[]): void {
  const expected = bruteForce(points);
  const got = findSelfIntersection(points);
  assert.equal(got !== null, expected.size > 0, `points ${JSON.stringify(points)}`);
  if (got !== null) assert.ok(expected.has(`${got[0]},${got[1]}`), `pair ${got.join(',')} of ${JSON.stringify(points)}`);
  assert.equal(isSelfIntersecting(points), expected.size > 0);
}

describe('isSelfIntersecting against a brute-force oracle', () => {
  it('agrees on small random polygons on a tight grid (many degenerate cases)', () => {
    fc.assert(
      fc.property(fc.array(pointIn(3), { minLength: 3, maxLength: 9 }), (points) => agreesWithOracle(points)),
      { numRuns: 3000 },
    );
  });

  it('agrees on random polygons on a wider grid', () => {
    fc.assert(
      fc.property(fc.array(pointIn(1000), { minLength: 3, maxLength: 14 }), (points) => agreesWithOracle(points)),
      { numRuns: 1500 },
    );
  });

  it('agrees on fractional coordinates', () => {
    fc.assert(
      fc.property(fc.array(pointIn(40, 8), { minLength: 3, maxLength: 12 }), (points) => agreesWithOracle(points)),
      { numRuns: 1500 },
    );
  });

  it('agrees on perturbed simple polygons (mostly simple, sometimes barely not)', () => {
    // A convex-ish ring on a small grid with a few vertices moved: exercises the simple case.
    const ring = fc
      .integer({ min: 3, max: 12 })
      .chain((n) =>
        fc
          .array(fc.tuple(fc.integer({ min: -1, max: 1 }), fc.integer({ min: -1, max: 1 })), { minLength: n, maxLength: n })
          .map((jitter) =>
            jitter.map(([dx, dy], i): Point => {
              const angle = (2 * Math.PI * i) / n;
              return [Math.round(6 * Math.cos(angle)) + dx, Math.round(6 * Math.sin(angle)) + dy];
            }),
          ),
      );
    fc.assert(fc.property(ring, (points) => agreesWithOracle(points)), { numRuns: 2000 });
  });
});

describe('isSelfIntersecting on 10,000 vertices', () => {
  const n = 10_000;
  const timed = (points: Point[]): { result: boolean; ms: number } => {
    const start = performance.now();
    const result = isSelfIntersecting(points);
    return { result, ms: performance.now() - start };
  };
  // Generous bound: the sweep takes tens of milliseconds; the O(n²) pair test takes seconds.
  const LIMIT_MS = 1500;

  it('is fast on a circle', () => {
    const points = Array.from({ length: n }, (_, i): Point => {
      const a = (2 * Math.PI * i) / n;
      return [Math.cos(a), Math.sin(a)];
    });
    const { result, ms } = timed(points);
    assert.equal(result, false);
    assert.ok(ms < LIMIT_MS, `${ms} ms`);
  });

  it('is fast on a star (every edge near the centre)', () => {
    const points = Array.from({ length: n }, (_, i): Point => {
      const a = (2 * Math.PI * i) / n;
      const r = i % 2 === 0 ? 10 : 0.001;
      return [r * Math.cos(a), r * Math.sin(a)];
    });
    const { result, ms } = timed(points);
    assert.equal(result, false);
    assert.ok(ms < LIMIT_MS, `${ms} ms`);
  });

  it('is fast on a comb of long horizontal rows (a boustrophedon)', () => {
    // Rows y = 0 … m-1 from x = 0 to 100, joined alternately at x = 100 and x = 0, closed
    // on the left at x = -1: every edge spans the whole x range.
    const m = n / 2 - 2; // even: the last row ends at x = 0
    const points: Point[] = [];
    for (let y = 0; y < m; y++) {
      if (y % 2 === 0) points.push([0, y], [100, y]);
      else points.push([100, y], [0, y]);
    }
    points.push([-1, m - 1], [-1, 0]);
    assert.equal(points.length, n - 2);
    const { result, ms } = timed(points);
    assert.equal(result, false);
    assert.ok(ms < LIMIT_MS, `${ms} ms`);
  });

  it('finds a single crossing among 10,000 vertices quickly', () => {
    const points = Array.from({ length: n }, (_, i): Point => {
      const a = (2 * Math.PI * i) / n;
      return [Math.cos(a), Math.sin(a)];
    });
    // Swap two neighbouring vertices: their edges now cross.
    const tmp = points[5000]!;
    points[5000] = points[5001]!;
    points[5001] = tmp;
    const { result, ms } = timed(points);
    assert.equal(result, true);
    assert.ok(ms < LIMIT_MS, `${ms} ms`);
  });
});
