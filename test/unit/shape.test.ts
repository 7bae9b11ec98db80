import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError, type ErrorCode } from '../../internal/errors.js';
import { MAX_RADIUS_M, parseShape, parseShapeParam } from '../../internal/domain/shape.js';
import { expectLocusError } from '../support/locus-error.js';

const MAX = 10_000;

function rejects(fn: () => unknown, message?: RegExp | string, code: ErrorCode = 'invalid_shape'): LocusError {
  const caught = expectLocusError(fn, code, message);
  assert.equal(caught.status, 400);
  return caught;
}

describe('parseShape: kinds', () => {
  it('tells the kind by its keys', () => {
    assert.deepEqual(parseShape({ cx: 13.4, cy: 52.5, r: 100 }, MAX), { cx: 13.4, cy: 52.5, r: 100 });
    assert.deepEqual(parseShape({ w: 1, n: 2, e: 3, s: 0 }, MAX), { w: 1, n: 2, e: 3, s: 0 });
    assert.deepEqual(
      parseShape(
        {
          points: [
            [0, 0],
            [1, 0],
            [0, 1],
          ],
        },
        MAX,
      ),
      {
        points: [
          [0, 0],
          [1, 0],
          [0, 1],
        ],
      },
    );
  });

  it('returns only the canonical keys, in canonical order', () => {
    const circle = parseShape({ r: 5, cy: 1, cx: 2 }, MAX);
    assert.deepEqual(Object.keys(circle), ['cx', 'cy', 'r']);
    const rectangle = parseShape({ s: 0, e: 3, n: 2, w: 1 }, MAX);
    assert.deepEqual(Object.keys(rectangle), ['w', 'n', 'e', 's']);
    const withUndefined = parseShape({ cx: 0, cy: 0, r: 1, w: undefined }, MAX);
    assert.deepEqual(Object.keys(withUndefined), ['cx', 'cy', 'r']);
  });

  it('rejects mixed kinds', () => {
    rejects(
      () => parseShape({ cx: 0, cy: 0, r: 1, w: 0 }, MAX),
      /^shape mixes the keys of a circle \(cx, cy, r\) and a rectangle \(w\); a shape is exactly one of/,
    );
    rejects(() => parseShape({ points: [], r: 1 }, MAX), /mixes the keys of a polygon \(points\) and a circle \(r\)|mixes the keys of a circle \(r\) and a polygon \(points\)/);
  });

  it('rejects unknown keys, naming them', () => {
    rejects(
      () => parseShape({ cx: 0, cy: 0, r: 1, type: 'circle' }, MAX),
      /^unknown key "type" in shape; a shape is a circle \{cx, cy, r\}, a rectangle \{w, n, e, s\} or a polygon \{points\}$/,
    );
    rejects(() => parseShape({ radius: 1 }, MAX), /^unknown key "radius" in shape/);
  });

  it('rejects missing keys, saying which', () => {
    rejects(() => parseShape({ cx: 0, cy: 0 }, MAX), 'shape looks like a circle but lacks r; a circle is {cx, cy, r}');
    rejects(() => parseShape({ w: 0, n: 1 }, MAX), 'shape looks like a rectangle but lacks e, s; a rectangle is {w, n, e, s}');
    rejects(() => parseShape({}, MAX), /^shape must be a circle \{cx, cy, r\}, a rectangle/);
  });

  it('rejects what is not an object', () => {
    rejects(() => parseShape(null, MAX), 'shape must be a JSON object (got null)');
    rejects(() => parseShape([[0, 0]], MAX), /an array/);
    rejects(() => parseShape('circle', MAX), /the string "circle"/);
  });
});

describe('parseShape: circle', () => {
  it('checks the centre', () => {
    rejects(() => parseShape({ cx: 180.1, cy: 0, r: 1 }, MAX), 'shape.cx must be a longitude: a number between -180 and 180 (got 180.1)');
    rejects(() => parseShape({ cx: 0, cy: -90.5, r: 1 }, MAX), /^shape\.cy must be a latitude: a number between -90 and 90/);
    rejects(() => parseShape({ cx: '0', cy: 0, r: 1 }, MAX), /^shape\.cx .*\(got the string "0"\)/);
    rejects(() => parseShape({ cx: Number.NaN, cy: 0, r: 1 }, MAX), /^shape\.cx/);
    assert.deepEqual(parseShape({ cx: -180, cy: 90, r: 1 }, MAX), { cx: -180, cy: 90, r: 1 });
  });

  it('needs 0 < r ≤ half the Earth’s circumference', () => {
    rejects(() => parseShape({ cx: 0, cy: 0, r: 0 }, MAX), /^shape\.r must be a radius in metres: a number greater than 0 and at most 20037509/);
    rejects(() => parseShape({ cx: 0, cy: 0, r: -5 }, MAX), /^shape\.r/);
    rejects(() => parseShape({ cx: 0, cy: 0, r: MAX_RADIUS_M + 1 }, MAX), /^shape\.r/);
    rejects(() => parseShape({ cx: 0, cy: 0, r: null }, MAX), /^shape\.r .*\(got null\)/);
    rejects(() => parseShape({ cx: 0, cy: 0, r: Infinity }, MAX), /^shape\.r/);
    assert.equal(MAX_RADIUS_M, 20_037_509);
    assert.deepEqual(parseShape({ cx: 0, cy: 0, r: MAX_RADIUS_M }, MAX), { cx: 0, cy: 0, r: MAX_RADIUS_M });
    assert.deepEqual(parseShape({ cx: 0, cy: 0, r: 0.001 }, MAX), { cx: 0, cy: 0, r: 0.001 });
  });
});

describe('parseShape: rectangle', () => {
  it('accepts a rectangle crossing the antimeridian (w > e)', () => {
    assert.deepEqual(parseShape({ w: 170, n: 10, e: -170, s: -10 }, MAX), { w: 170, n: 10, e: -170, s: -10 });
  });

  it('accepts the whole world and thin rectangles of non-zero area', () => {
    assert.deepEqual(parseShape({ w: -180, n: 90, e: 180, s: -90 }, MAX), { w: -180, n: 90, e: 180, s: -90 });
    assert.deepEqual(parseShape({ w: 0, n: 5 + 1e-9, e: 1e-9, s: 5 }, MAX), { w: 0, n: 5 + 1e-9, e: 1e-9, s: 5 });
  });

  it('rejects zero-area rectangles (s = n, w = e, or w = 180 and e = -180), as it rejects zero-area polygons', () => {
    rejects(() => parseShape({ w: 0, n: 5, e: 1, s: 5 }, MAX), 'shape encloses zero area: its south and north edges are equal (s = n = 5); s must be < n');
    rejects(() => parseShape({ w: 3, n: 5, e: 3, s: 1 }, MAX), 'shape encloses zero area: its west and east edges are the same meridian (w = 3, e = 3)');
    rejects(() => parseShape({ w: 180, n: 5, e: -180, s: 1 }, MAX), /^shape encloses zero area: its west and east edges are the same meridian/);
    rejects(() => parseShape({ w: 0, n: 0, e: 0, s: 0 }, MAX), /^shape encloses zero area/);
    rejects(() => parseShapeParam('{"w":1,"n":2,"e":1,"s":0}', MAX), /^shape encloses zero area/);
  });

  it('rejects s > n', () => {
    rejects(() => parseShape({ w: 0, n: 1, e: 1, s: 2 }, MAX), 'shape has its south edge (s = 2) north of its north edge (n = 1); s must be < n');
  });

  it('rejects out-of-range coordinates, naming them', () => {
    rejects(() => parseShape({ w: -181, n: 1, e: 1, s: 0 }, MAX), /^shape\.w must be a longitude/);
    rejects(() => parseShape({ w: 0, n: 91, e: 1, s: 0 }, MAX), /^shape\.n must be a latitude/);
    rejects(() => parseShape({ w: 0, n: 1, e: 200, s: 0 }, MAX), /^shape\.e must be a longitude/);
    rejects(() => parseShape({ w: 0, n: 1, e: 1, s: true }, MAX), /^shape\.s must be a latitude.*\(got true\)/);
  });
});

describe('parseShape: polygon', () => {
  const triangle = [
    [0, 0],
    [2, 0],
    [1, 2],
  ];

  it('drops a repeated closing vertex', () => {
    assert.deepEqual(parseShape({ points: [...triangle, [0, 0]] }, MAX), { points: triangle });
  });

  it('drops repeated consecutive vertices', () => {
    assert.deepEqual(
      parseShape(
        {
          points: [
            [0, 0],
            [2, 0],
            [2, 0],
            [1, 2],
            [0, 0],
            [0, 0],
          ],
        },
        MAX,
      ),
      { points: triangle },
    );
  });

  it('returns fresh pairs', () => {
    const input = { points: triangle.map((p) => [...p]) };
    const shape = parseShape(input, MAX);
    assert.ok('points' in shape);
    assert.notEqual(shape.points[0], input.points[0]);
  });

  it('needs at least 3 distinct vertices', () => {
    rejects(() => parseShape({ points: [] }, MAX), 'shape.points must have at least 3 distinct vertices (got 0)');
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [1, 1],
              [0, 0],
            ],
          },
          MAX,
        ),
      'shape.points must have at least 3 distinct vertices (got 2)',
    );
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [1, 1],
              [0, 0],
              [1, 1],
            ],
          },
          MAX,
        ),
      /at least 3 distinct vertices \(got 2\)/,
    );
  });

  it('rejects a polygon of zero area', () => {
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [1, 1],
              [2, 2],
            ],
          },
          MAX,
        ),
      'shape.points encloses zero area: all vertices lie on one line',
    );
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [3, 0],
              [1, 0],
              [2, 0],
            ],
          },
          MAX,
        ),
      /zero area/,
    );
    // Not exactly collinear as doubles (3 × 0.1 ≠ 0.3), but a sliver far thinner than 1e-9°.
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [1, 0.1],
              [3, 0.3],
            ],
          },
          MAX,
        ),
      /^shape\.points encloses zero area: the polygon is thinner than 1e-9 degrees/,
    );
  });

  it('accepts a small but real polygon', () => {
    const d = 1e-5; // about a metre
    assert.ok(
      'points' in
        parseShape(
          {
            points: [
              [10, 10],
              [10 + d, 10],
              [10 + d, 10 + d],
              [10, 10 + d],
            ],
          },
          MAX,
        ),
    );
  });

  it('rejects a bow-tie, naming the crossing edges', () => {
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [1, 1],
              [1, 0],
              [0, 1],
            ],
          },
          MAX,
        ),
      'shape.points is self-intersecting: the edges shape.points[0]→[1] and shape.points[2]→[3] meet; edges may only share a vertex with the edges next to them',
    );
  });

  it('names edges by the indices given, even after dropping repeats', () => {
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [0, 0],
              [1, 1],
              [1, 0],
              [0, 1],
              [0, 0],
            ],
          },
          MAX,
        ),
      /the edges shape\.points\[0\]→\[2\] and shape\.points\[3\]→\[4\] meet/,
    );
  });

  it('rejects collinear overlap and touching vertices', () => {
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [4, 0],
              [4, 1],
              [3, 0],
              [1, 0],
              [0, 1],
            ],
          },
          MAX,
        ),
      /self-intersecting/,
    );
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [2, 0],
              [1, 1],
              [2, 2],
              [0, 2],
              [1, 1],
            ],
          },
          MAX,
        ),
      /self-intersecting/,
    );
    // spike folding back along the previous edge
    rejects(
      () =>
        parseShape(
          {
            points: [
              [0, 0],
              [2, 0],
              [2, 2],
              [2, 1],
              [0, 2],
            ],
          },
          MAX,
        ),
      /self-intersecting/,
    );
  });

  it('limits the number of vertices (a closing vertex does not count)', () => {
    const square = [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 1],
    ];
    assert.equal((parseShape({ points: square }, 4) as { points: unknown[] }).points.length, 4);
    assert.equal((parseShape({ points: [...square, [0, 0]] }, 4) as { points: unknown[] }).points.length, 4);
    rejects(() => parseShape({ points: [...square, [0.5, -1]] }, 4), 'shape.points has 5 vertices; a polygon may have at most 4');
    rejects(() => parseShape({ points: [...square, [0.5, -1], [0, 0]] }, 4), 'shape.points has 6 vertices; a polygon may have at most 4');
  });

  it('checks every pair', () => {
    rejects(() => parseShape({ points: 'x' }, MAX), /^shape\.points must be an array of \[longitude, latitude\] pairs/);
    rejects(() => parseShape({ points: null }, MAX), /^shape\.points must be an array .*\(got null\)/);
    rejects(() => parseShape({ points: [[0, 0], [1, 0], { x: 1 }] }, MAX), 'shape.points[2] must be a [longitude, latitude] pair of numbers (got an object)');
    rejects(() => parseShape({ points: [[0, 0], [1, 0, 5], [0, 1]] }, MAX), /^shape\.points\[1\] must be a \[longitude, latitude\] pair/);
    rejects(() => parseShape({ points: [[0, 0], [1], [0, 1]] }, MAX), /^shape\.points\[1\] must be/);
    rejects(() => parseShape({ points: [[0, 0], [181, 0], [0, 1]] }, MAX), /^shape\.points\[1\]\[0\] must be a longitude: a number between -180 and 180 \(got 181\)/);
    rejects(() => parseShape({ points: [[0, 0], [1, -90.1], [0, 1]] }, MAX), /^shape\.points\[1\]\[1\] must be a latitude/);
    rejects(() => parseShape({ points: [[0, 0], ['1', 0], [0, 1]] }, MAX), /^shape\.points\[1\]\[0\]/);
  });

  it('accepts a large simple polygon', () => {
    const n = MAX;
    const points = Array.from({ length: n }, (_, i) => {
      const a = (2 * Math.PI * i) / n;
      return [10 * Math.cos(a), 10 * Math.sin(a)];
    });
    const shape = parseShape({ points }, MAX) as { points: unknown[] };
    assert.equal(shape.points.length, n);
  });
});

describe('parseShapeParam', () => {
  it('parses a JSON shape', () => {
    assert.deepEqual(parseShapeParam('{"cx":1,"cy":2,"r":3}', MAX), { cx: 1, cy: 2, r: 3 });
    assert.deepEqual(parseShapeParam('{"w":170,"n":1,"e":-170,"s":0}', MAX), { w: 170, n: 1, e: -170, s: 0 });
  });

  it('rejects text that is not JSON, without echoing much of it', () => {
    rejects(() => parseShapeParam('{cx:1}', MAX), 'the shape parameter is not valid JSON (got "{cx:1}")');
    const err = rejects(() => parseShapeParam(`{${'x'.repeat(100_000)}`, MAX), /^the shape parameter is not valid JSON/);
    assert.ok(err.message.endsWith('…)'));
  });

  it('validates the parsed shape', () => {
    rejects(() => parseShapeParam('null', MAX), 'shape must be a JSON object (got null)');
    rejects(() => parseShapeParam('{"cx":1,"cy":2}', MAX), /lacks r/);
    rejects(() => parseShapeParam('{"w":0,"n":0,"e":1,"s":1}', MAX), /s must be < n/);
  });
});
