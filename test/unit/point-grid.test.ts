import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CELLS_PER_DEGREE, PointGrid } from '../../internal/geo/point-grid.js';
import type { BBox } from '../../internal/domain/types.js';

const inBox = (box: BBox, lon: number, lat: number): boolean =>
  box.minLon <= lon && lon <= box.maxLon && box.minLat <= lat && lat <= box.maxLat;

/** Every visited id, checking that none is visited twice. */
function visited(grid: PointGrid, boxes: readonly BBox[]): Map<number, [number, number]> {
  const out = new Map<number, [number, number]>();
  grid.visit(boxes, (id, lon, lat) => {
    assert.ok(!out.has(id), `id ${id} visited twice`);
    out.set(id, [lon, lat]);
  });
  return out;
}

const coordinate = (max: number): fc.Arbitrary<number> =>
  fc.oneof(
    fc.double({ min: -max, max, noNaN: true }),
    fc.constantFrom(-max, max, 0, 1 / CELLS_PER_DEGREE, -1 / CELLS_PER_DEGREE),
    // Near a few cells, so that boxes and points share them.
    fc.integer({ min: -40, max: 40 }).map((k) => k / (4 * CELLS_PER_DEGREE)),
  );
const box = fc
  .tuple(coordinate(180), coordinate(180), coordinate(90), coordinate(90))
  .map(([a, b, c, d]): BBox => ({ minLon: Math.min(a, b), maxLon: Math.max(a, b), minLat: Math.min(c, d), maxLat: Math.max(c, d) }));

type Op = { kind: 'set'; id: number; lon: number; lat: number } | { kind: 'delete'; id: number };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), id: fc.integer({ min: 1, max: 40 }), lon: coordinate(180), lat: coordinate(90) }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 1, max: 40 }) }),
);

void describe('PointGrid', () => {
  void it('visits a superset of the points in the boxes, each once, and only points it holds (random operations)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.array(box, { minLength: 1, maxLength: 3 }), (ops, boxes) => {
        const grid = new PointGrid();
        const oracle = new Map<number, [number, number]>();
        for (const o of ops) {
          if (o.kind === 'set') {
            grid.set(o.id, o.lon, o.lat);
            oracle.set(o.id, [o.lon, o.lat]);
          } else {
            assert.equal(grid.delete(o.id), oracle.delete(o.id));
          }
        }
        assert.equal(grid.size, oracle.size);
        const seen = visited(grid, boxes);
        for (const [id, where] of seen) assert.deepEqual(where, oracle.get(id), `id ${id} is held where it was last set`);
        for (const [id, [lon, lat]] of oracle) {
          if (boxes.some((b) => inBox(b, lon, lat))) assert.ok(seen.has(id), `id ${id} at ${lon},${lat} is visited`);
        }
        assert.deepEqual(visited(grid, [{ minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 }]), oracle);
      }),
      { numRuns: 400 },
    );
  });

  void it('reads a small box cell by cell and a continent-sized box by its occupied cells, alike', () => {
    const grid = new PointGrid();
    for (let i = 0; i < 1000; i++) grid.set(i, -10 + (i % 40) * 0.5, -10 + Math.floor(i / 40) * 0.8);
    const small: BBox = { minLon: -1, maxLon: 1.2, minLat: -2, maxLat: 0.5 };
    const expected = [...visited(grid, [{ minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 }])].filter(([, [lon, lat]]) =>
      inBox(small, lon, lat),
    );
    assert.deepEqual([...visited(grid, [small])].sort(([a], [b]) => a - b), expected);
    assert.equal(visited(grid, [{ minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 }]).size, 1000);
  });

  void it('keeps ±180 and ±90 in the edge cells, and stops when the visitor says so', () => {
    const grid = new PointGrid();
    grid.set(1, 180, 90);
    grid.set(2, -180, -90);
    grid.set(3, 0, 0);
    assert.deepEqual([...visited(grid, [{ minLon: 179.9, maxLon: 180, minLat: 89.9, maxLat: 90 }]).keys()], [1]);
    assert.deepEqual([...visited(grid, [{ minLon: -180, maxLon: -179.9, minLat: -90, maxLat: -89.9 }]).keys()], [2]);
    let calls = 0;
    grid.visit([{ minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 }], () => ++calls === 2);
    assert.equal(calls, 2);
  });

  void it('moves a point within its cell and across cells, and reuses freed slots', () => {
    const grid = new PointGrid();
    grid.set(7, 10, 10);
    grid.set(7, 10 + 0.1 / CELLS_PER_DEGREE, 10);
    assert.deepEqual([...visited(grid, [{ minLon: 9, maxLon: 11, minLat: 9, maxLat: 11 }])], [[7, [10 + 0.1 / CELLS_PER_DEGREE, 10]]]);
    grid.set(7, -20, -20);
    assert.equal(visited(grid, [{ minLon: 9, maxLon: 11, minLat: 9, maxLat: 11 }]).size, 0);
    assert.equal(grid.delete(7), true);
    assert.equal(grid.delete(7), false);
    for (let i = 0; i < 3000; i++) grid.set(i, i / 1000, 0);
    for (let i = 0; i < 3000; i += 2) grid.delete(i);
    for (let i = 0; i < 3000; i += 2) grid.set(i + 10_000, 0, i / 1000);
    assert.equal(grid.size, 3000);
    assert.equal(visited(grid, [{ minLon: -1, maxLon: 4, minLat: -1, maxLat: 4 }]).size, 3000);
  });
});
