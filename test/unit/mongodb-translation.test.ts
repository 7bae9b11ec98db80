/**
 * The MongoDB adapter's translation, checked without a server: the documents it sends for
 * filters, shapes, search, paging, database names and writes, written out by hand. The
 * adapter against a real server: test/integration/mongodb-store.test.ts (the store contract).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'node:test';
import { matchesFilter, parseFilter } from '../../internal/domain/filter.js';
import { foldPatches } from '../../internal/domain/object.js';
import type { Data, Shape, TrackedObject } from '../../internal/domain/types.js';
import { compileShape, haversineMeters, shapeBounds } from '../../internal/geo/contains.js';
import { ConfigError } from '../../internal/config/config.js';
import { LocusError } from '../../internal/errors.js';
import { areaGeometry, dataToPairs, objectFromDoc, pairsToData, projectPairs } from '../../internal/store/mongodb/documents.js';
import { historyTtlIndex } from '../../internal/store/mongodb/indexes.js';
import { KeyedQueue } from '../../internal/store/mongodb/keyed-queue.js';
import { insertNew, translateMongoError } from '../../internal/store/mongodb/mongo-errors.js';
import { clientOptions, CONNECTION_DEFAULTS, redactUrl } from '../../internal/store/mongodb/mongo-store.js';
import { controlDatabaseName, realmDatabaseName } from '../../internal/store/mongodb/names.js';
import { batchOperations } from '../../internal/store/mongodb/object-store.js';
import { dataMergeExpression, historyWrites, objectWrite } from '../../internal/store/mongodb/object-writes.js';
import { historyCursorTime } from '../../internal/store/mongodb/paging.js';
import { boxCap, coverBox, filterQuery, historyQuery, listQuery, MAX_CAP, searchPipeline, shapeCaps, shapeQuery, SPHEROID_MARGIN } from '../../internal/store/mongodb/queries.js';
import type { Cap } from '../../internal/store/mongodb/queries.js';
import { encodeCursor } from '../../internal/store/cursor.js';
import { storeUrlProblem } from '../../internal/store/store-url.js';
import { MongoServerError, type Collection } from 'mongodb';

const f = (text: string): ReturnType<typeof parseFilter> => parseFilter(text, 100);
const NOTHING = { _id: { $in: [] } };

void describe('mongodb: database names', () => {
  void it('control database from the URL path, `locus` when none; unsafe names are a ConfigError', () => {
    assert.equal(controlDatabaseName('mongodb://localhost:27017'), 'locus');
    assert.equal(controlDatabaseName('mongodb://localhost:27017/'), 'locus');
    assert.equal(controlDatabaseName('mongodb://u:p@a,b,c/tracking?replicaSet=rs0'), 'tracking');
    assert.equal(controlDatabaseName('mongodb+srv://cluster.example.net/prod?retryWrites=true'), 'prod');
    assert.equal(controlDatabaseName('mongodb://localhost/?w=majority'), 'locus');
    for (const bad of ['mongodb://h/a.b', 'mongodb://h/a%20b', 'mongodb://h/a$b', `mongodb://h/${'x'.repeat(33)}`, 'mongodb://h/%E0%A4%A']) {
      assert.throws(() => controlDatabaseName(bad), ConfigError, bad);
    }
  });

  void it('realm databases: readable prefix, hash of the whole key, safe characters, at most 63 bytes', () => {
    assert.equal(realmDatabaseName('locus', 'fleet'), 'locus_fleet_5eb2ce291c7d');
    // The tenant separator (U+001F) and other unsafe characters become `_`.
    assert.equal(realmDatabaseName('locus', 'acme\u001ffleet'), 'locus_acme_fleet_bedb16af2ea4');
    // Keys differing only in case get names that differ in more than case.
    assert.equal(realmDatabaseName('locus', 'Zulu'), 'locus_Zulu_5cd8645e8311');
    assert.equal(realmDatabaseName('locus', 'zulu'), 'locus_zulu_f71a59e61939');
    const long = realmDatabaseName('locus', 'x'.repeat(100));
    assert.equal(long, `locus_${'x'.repeat(44)}_09ecb6ebc8bc`);
    assert.equal(Buffer.byteLength(long), 63);
    for (const key of ['a/b\\c.d e"f$g*h<i>j:k|l?m\u0000n', 'Ölfeld 車両 😀', 'tenant\u001f'.repeat(20)]) {
      const name = realmDatabaseName('lt0123abcd_17', key);
      assert.ok(Buffer.byteLength(name) <= 63, name);
      assert.match(name, /^lt0123abcd_17_[A-Za-z0-9_-]*_[0-9a-f]{12}$/);
    }
  });
});

void describe('mongodb: filters', () => {
  void it('columns: id and label', () => {
    assert.equal(filterQuery(undefined), null);
    assert.equal(filterQuery([]), null);
    assert.deepEqual(filterQuery(f('id="f04"')), { _id: 'f04' });
    assert.deepEqual(filterQuery(f('id!=f04')), { _id: { $ne: 'f04' } });
    assert.deepEqual(filterQuery(f('id>f02,id<f05')), { $and: [{ _id: { $gt: 'f02' } }, { _id: { $lt: 'f05' } }] });
    assert.deepEqual(filterQuery(f('id=5')), NOTHING);
    assert.deepEqual(filterQuery(f('id=null')), NOTHING);
    assert.equal(filterQuery(f('id!=null')), null);
    assert.equal(filterQuery(f('id!=5')), null);
    assert.deepEqual(filterQuery(f('id>5')), NOTHING);
    assert.deepEqual(filterQuery(f('label=null')), { l: null });
    assert.deepEqual(filterQuery(f('label!=null')), { l: { $ne: null } });
    assert.deepEqual(filterQuery(f('label=beta')), { l: 'beta' });
    assert.deepEqual(filterQuery(f('label!=beta')), { l: { $ne: 'beta' } });
    assert.deepEqual(filterQuery(f('label>a')), { l: { $gt: 'a' } });
    assert.deepEqual(filterQuery(f('label=5')), NOTHING);
    assert.equal(filterQuery(f('label!=5')), null);
  });

  void it('data keys: pairs matched with $elemMatch, typed values, null as missing', () => {
    assert.deepEqual(filterQuery(f('a=5')), { d: { $elemMatch: { k: 'a', v: 5 } } });
    assert.deepEqual(filterQuery(f('a="5"')), { d: { $elemMatch: { k: 'a', v: '5' } } });
    assert.deepEqual(filterQuery(f('a=true')), { d: { $elemMatch: { k: 'a', v: true } } });
    assert.deepEqual(filterQuery(f('a!=5')), { d: { $not: { $elemMatch: { k: 'a', v: 5 } } } });
    assert.deepEqual(filterQuery(f('a=null')), { d: { $not: { $elemMatch: { k: 'a' } } } });
    assert.deepEqual(filterQuery(f('a!=null')), { d: { $elemMatch: { k: 'a' } } });
    assert.deepEqual(filterQuery(f('a>5')), { d: { $elemMatch: { k: 'a', v: { $gt: 5 } } } });
    assert.deepEqual(filterQuery(f('a<"5"')), { d: { $elemMatch: { k: 'a', v: { $lt: '5' } } } });
    assert.deepEqual(filterQuery(f('a>true')), NOTHING);
    assert.deepEqual(filterQuery(f('a<null')), NOTHING);
    // Keys with path characters are values of `k`, never paths.
    assert.deepEqual(filterQuery(f('a.b=1')), { d: { $elemMatch: { k: 'a.b', v: 1 } } });
    assert.deepEqual(filterQuery(f('$=3')), { d: { $elemMatch: { k: '$', v: 3 } } });
    assert.deepEqual(filterQuery(f('__proto__=p')), { d: { $elemMatch: { k: '__proto__', v: 'p' } } });
    // Hivekit's data target: `id` is a data key then.
    assert.deepEqual(filterQuery([{ field: 'id', op: '=', value: 'x', target: 'data' }]), { d: { $elemMatch: { k: 'id', v: 'x' } } });
    assert.deepEqual(filterQuery(f('a!=null,label!=null,a>"0"')), {
      $and: [{ d: { $elemMatch: { k: 'a' } } }, { l: { $ne: null } }, { d: { $elemMatch: { k: 'a', v: { $gt: '0' } } } }],
    });
  });
});

/**
 * What MongoDB decides for the data-key conditions filterQuery sends, over the pairs `d`
 * that dataToPairs stores: `$elemMatch` (some pair meets every field), `$not`, `$and`,
 * equality and `$gt`/`$lt`/`$gte`/`$lte` on `v`. Per MongoDB's query semantics: a field a
 * pair lacks equals nothing but null (never asked here) and orders against nothing; the
 * orders compare numbers with numbers and strings with strings only; and an array in `v`
 * would match when any element does, which is why nested values never go there.
 */
function mongoMatches(pairs: readonly Record<string, unknown>[], query: Record<string, unknown>): boolean {
  const fieldMeets = (actual: unknown, wanted: unknown): boolean => {
    if (Array.isArray(actual)) return actual.some((item) => fieldMeets(item, wanted)) || JSON.stringify(actual) === JSON.stringify(wanted);
    if (typeof wanted !== 'object' || wanted === null) return actual !== undefined && actual === wanted;
    const [[op, bound]] = Object.entries(wanted) as [[string, number | string]];
    if (typeof actual !== typeof bound || (typeof actual !== 'number' && typeof actual !== 'string')) return false;
    const a = actual;
    return op === '$gt' ? a > bound : op === '$lt' ? a < bound : op === '$gte' ? a >= bound : a <= bound;
  };
  const elemMatch = (cond: Record<string, unknown>): boolean =>
    pairs.some((pair) => Object.entries(cond).every(([field, wanted]) => fieldMeets(pair[field], wanted)));
  const [[key, value]] = Object.entries(query) as [[string, Record<string, unknown>]];
  if (key === '$and') return (value as unknown as Record<string, unknown>[]).every((part) => mongoMatches(pairs, part));
  if (key === '_id') return false; // NOTHING
  assert.equal(key, 'd');
  if ('$not' in value) return !elemMatch((value.$not as { $elemMatch: Record<string, unknown> }).$elemMatch);
  return elemMatch(value.$elemMatch as Record<string, unknown>);
}

void describe('mongodb: nested data values', () => {
  void it('are stored as JSON text in `j`, never in `v`, with the words of their string leaves', () => {
    const data = JSON.parse('{"icon":{"color":"Red","n":[1,"Zoë"],"__proto__":{"$x":null}},"list":[],"s":"plain"}') as Data;
    const pairs = dataToPairs(data, true);
    assert.deepEqual(pairs, [
      { k: 'icon', j: '{"color":"Red","n":[1,"Zoë"],"__proto__":{"$x":null}}', w: ['red', 'zoe'] },
      { k: 'list', j: '[]' },
      { k: 's', v: 'plain', w: ['plain'] },
    ]);
    assert.deepEqual(dataToPairs(data, false), pairs.map(({ w: _w, ...pair }) => pair));
    const back = pairsToData(pairs);
    assert.equal(JSON.stringify(back), JSON.stringify(data));
    assert.ok(Object.hasOwn(back.icon as object, '__proto__'));
    assert.equal(JSON.stringify(projectPairs(pairs, ['list', 'icon'])), '{"list":[],"icon":{"color":"Red","n":[1,"Zoë"],"__proto__":{"$x":null}}}');
    const merge = JSON.stringify(dataMergeExpression({ icon: { color: 'Blue' }, s: null }));
    assert.ok(merge.includes('{"$literal":[{"k":"icon","j":"{\\"color\\":\\"Blue\\"}","w":["blue"]}]}'), merge);
  });

  void it('property: the filter documents select over the stored pairs exactly what matchesFilter selects', () => {
    const scalar = fc.oneof(fc.constantFrom(0, 1, 5, -1, 'a', 'b', '5', '[5]', '{}', '', true, false));
    const nested = fc.oneof(fc.array(fc.oneof(scalar, fc.constant(null), fc.array(scalar, { maxLength: 2 })), { maxLength: 3 }), fc.dictionary(fc.constantFrom('a', 'v', 'k'), scalar, { maxKeys: 2 }));
    const data = fc.dictionary(fc.constantFrom('a', 'b'), fc.oneof(scalar, nested), { maxKeys: 2 }) as fc.Arbitrary<Data>;
    const condition = fc.tuple(fc.constantFrom('a', 'b'), fc.constantFrom('=', '!=', '>', '<', '>=', '<='), fc.constantFrom('5', '"5"', '1', 'a', '"[5]"', '"{}"', 'true', 'null', '""', '-1'));
    fc.assert(
      fc.property(data, fc.array(condition, { minLength: 1, maxLength: 2 }), (d, conditions) => {
        const conds = f(conditions.map(([field, op, value]) => `${field}${op}${value}`).join(','));
        const obj: TrackedObject = { id: 'x', label: null, location: null, data: d, seen: null };
        const query = filterQuery(conds);
        const selected = query === null || mongoMatches(dataToPairs(d, true) as unknown as Record<string, unknown>[], query);
        assert.equal(selected, matchesFilter(obj, conds), `${JSON.stringify(d)} ${JSON.stringify(query)}`);
      }),
      { numRuns: 3000 },
    );
  });
});

void describe('mongodb: shapes and paging', () => {
  void it('a circle is one cap, wider than its radius by the spheroid margin (0.5%)', () => {
    const query = shapeQuery({ cx: 13.4, cy: 52.5, r: 1000 });
    const within = (query.g as { $geoWithin: { $centerSphere: [[number, number], number] } }).$geoWithin.$centerSphere;
    assert.deepEqual(within[0], [13.4, 52.5]);
    const r = 1000 / 6_371_008.8;
    assert.equal(SPHEROID_MARGIN, 1.005);
    assert.ok(within[1] >= r * 1.005 && within[1] - r * 1.005 < 3e-9, String(within[1]));
    // The whole Earth: no prefilter but "has a location".
    assert.deepEqual(shapeQuery({ cx: 0, cy: 0, r: 20_037_509 }), { g: { $exists: true } });
    assert.deepEqual(shapeQuery({ w: -180, n: 90, e: 180, s: -90 }), { g: { $exists: true } });
  });

  void it('rectangles and polygons: caps over their boxes, one per side of the antimeridian; polar caps at the poles', () => {
    const across = shapeQuery({ w: 170, n: 10, e: -170, s: -10 });
    const caps = (across.$or as { g: { $geoWithin: { $centerSphere: [[number, number], number] } } }[]).map((c) => c.g.$geoWithin.$centerSphere);
    assert.equal(caps.length, 2);
    assert.deepEqual(caps.map(([center]) => center.map((x) => Math.round(x * 1e6) / 1e6)), [[175, 0], [-175, 0]]);
    assert.deepEqual(boxCap({ minLon: -10, minLat: 80, maxLon: 10, maxLat: 90 })?.[0], [0, 90]);
    assert.deepEqual(boxCap({ minLon: -180, minLat: -90, maxLon: 180, maxLat: -89 })?.[0], [0, -90]);
    assert.equal(boxCap({ minLon: -100, minLat: 0, maxLon: 100, maxLat: 1 }), null);
    // Wider than 90° of longitude: cut in halves until the pieces are not.
    const pieces: Cap[] = [];
    assert.ok(coverBox({ minLon: -100, minLat: 0, maxLon: 100, maxLat: 1 }, pieces));
    assert.deepEqual(pieces.map(([center]) => center.map((x) => Math.round(x * 1e6) / 1e6)), [[-75, 0.5], [-25, 0.5], [25, 0.5], [75, 0.5]]);
  });

  void it('no cap is wider than 80° (DocumentDB answers caps beyond a hemisphere wrongly): wider circles and polar boxes are split', () => {
    assert.ok(MAX_CAP < Math.PI / 2 / SPHEROID_MARGIN);
    const capsOf = (shape: Shape): Cap[] => {
      const caps = shapeCaps(shape);
      assert.ok(caps !== null, `${JSON.stringify(shape)} has a prefilter`);
      for (const [, radius] of caps) assert.ok(radius <= MAX_CAP, `${JSON.stringify(shape)}: a cap of ${radius} rad`);
      return caps;
    };
    // Just under the limit: one cap. Just over it: caps over the circle's bounds, none wider than the limit.
    assert.equal(capsOf({ cx: 100, cy: 45, r: 1.3 * 6_371_008.8 }).length, 1);
    assert.ok(capsOf({ cx: 100, cy: 80, r: 1.4 * 6_371_008.8 }).length > 1);
    // A rectangle reaching the pole from far south: its polar cap alone would be 170° wide.
    const polar = capsOf({ w: -10, n: 90, e: 10, s: -80 });
    assert.ok(polar.length > 1);
    assert.ok(polar.some(([center]) => center[1] === 90));
    // Caps > 90° of the issue (centre (100, 45), 1.6 to 2.0 rad): split, or no prefilter, never one cap.
    for (const rad of [1.6, 1.8, 2.0]) {
      const caps = shapeCaps({ cx: 100, cy: 45, r: rad * 6_371_008.8 });
      for (const [, radius] of caps ?? []) assert.ok(radius <= MAX_CAP);
    }
  });

  /**
   * A cap as a DocumentDB-based service answers it: nothing beyond a hemisphere, and the
   * distance measured on the WGS84 spheroid against radius × 6,378,137 m, which is up to
   * 0.34% longer than the central angle × 6,378,137 m (bounded here by 0.35%).
   */
  const heldBySpheroidBackend = (caps: readonly Cap[], lon: number, lat: number): boolean =>
    caps.some(([[cx, cy], radius]) => radius <= Math.PI / 2 && (haversineMeters(cx, cy, lon, lat) / 6_371_008.8) * 1.0035 <= radius);
  /** The point `meters` from (lon, lat) towards `bearing` (degrees) on the sphere. */
  const destination = (lon: number, lat: number, bearing: number, meters: number): [number, number] => {
    const rad = Math.PI / 180;
    const angle = meters / 6_371_008.8;
    const phi = lat * rad;
    const theta = bearing * rad;
    const phi2 = Math.asin(Math.sin(phi) * Math.cos(angle) + Math.cos(phi) * Math.sin(angle) * Math.cos(theta));
    const lambda = lon * rad + Math.atan2(Math.sin(theta) * Math.sin(angle) * Math.cos(phi), Math.cos(angle) - Math.sin(phi) * Math.sin(phi2));
    const x = ((((lambda / rad + 180) % 360) + 360) % 360) - 180;
    return [x, Math.max(-90, Math.min(90, phi2 / rad))];
  };
  /** The same as MongoDB answers it: exact spherical geometry, any radius. */
  const heldBySphere = (caps: readonly Cap[], lon: number, lat: number): boolean =>
    caps.some(([[cx, cy], radius]) => haversineMeters(cx, cy, lon, lat) / 6_371_008.8 <= radius - 5e-10);

  void it('an object 99.8 km north of (0, 85) is in the caps of a 100 km circle there, on a spheroid backend too', () => {
    const caps = shapeCaps({ cx: 0, cy: 85, r: 100_000 });
    assert.ok(caps !== null);
    const lat = 85 + (99_800 / 6_371_008.8) * (180 / Math.PI);
    assert.ok(heldBySphere(caps, 0, lat));
    assert.ok(heldBySpheroidBackend(caps, 0, lat));
    // Without the margin, the spheroid backend misses it (what the issue saw).
    const bare: Cap[] = [[[0, 85], 100_000 / 6_371_008.8]];
    assert.ok(!heldBySpheroidBackend(bare, 0, lat));
  });

  void it('the caps hold every point the exact test accepts (sampled over each shape), on MongoDB and on a spheroid backend', () => {
    const shapes: Shape[] = [
      { w: 0, n: 0, e: 10, s: -10 },
      { w: 170, n: 10, e: -170, s: -10 },
      { w: -180, n: 10, e: -179, s: -10 },
      { w: 0, n: 90, e: 1, s: 89 },
      { w: -120, n: 70, e: 120, s: 20 },
      { w: -10, n: 90, e: 10, s: -80 },
      { points: [[0, 0], [10, 0], [10, 10], [7, 10], [7, 3], [3, 3], [3, 10], [0, 10]] },
      { points: [[-10, 80], [10, 80], [10, 90], [-10, 90]] },
      { points: [[100, -60], [160, -60], [130, 75]] },
      { cx: 180, cy: 0, r: 20_000 },
      { cx: 0, cy: 89.9, r: 20_000 },
      { cx: 0, cy: 85, r: 100_000 },
      { cx: 100, cy: 45, r: 1.3 * 6_371_008.8 },
      { cx: 100, cy: 80, r: 1.4 * 6_371_008.8 },
      { cx: 100, cy: 45, r: 1.6 * 6_371_008.8 },
      { cx: -30, cy: -10, r: 2.0 * 6_371_008.8 },
    ];
    for (const shape of shapes) {
      const caps = shapeCaps(shape);
      if (caps === null) continue;
      const inside = compileShape(shape);
      for (const box of shapeBounds(shape)) {
        for (let i = 0; i <= 40; i++) {
          for (let j = 0; j <= 40; j++) {
            const lon = box.minLon + ((box.maxLon - box.minLon) * i) / 40;
            const lat = box.minLat + ((box.maxLat - box.minLat) * j) / 40;
            if (!inside(lon, lat)) continue;
            assert.ok(heldBySphere(caps, lon, lat), `${JSON.stringify(shape)}: (${lon}, ${lat}) is in no cap`);
            assert.ok(heldBySpheroidBackend(caps, lon, lat), `${JSON.stringify(shape)}: (${lon}, ${lat}) is in no cap on a spheroid backend`);
          }
        }
      }
    }
  });

  void it('property: every point a random shape holds lies in one of its caps, on MongoDB and on a spheroid backend', () => {
    const double = (min: number, max: number): fc.Arbitrary<number> => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    const lon = fc.oneof(double(-180, 180), double(178, 180), double(-180, -178), fc.constantFrom(-180, 180, 0));
    const lat = fc.oneof(double(-90, 90), double(85, 90), double(-90, -85), fc.constantFrom(-90, 90, 0));
    const shapeArb: fc.Arbitrary<Shape> = fc.oneof(
      fc.record({ cx: lon, cy: lat, r: fc.oneof(double(0.001, 10), double(10, 100_000), double(100_000, 20_037_509)) }),
      fc.record({ w: lon, e: lon, a: lat, b: lat }).map(({ w, e, a, b }) => ({ w, e, s: Math.min(a, b), n: Math.max(a, b) })),
      fc.array(fc.tuple(lon, lat), { minLength: 3, maxLength: 6 }).map((points) => ({ points })),
    );
    fc.assert(
      fc.property(shapeArb, fc.array(fc.tuple(lon, lat), { minLength: 1, maxLength: 40 }), (shape, points) => {
        const caps = shapeCaps(shape);
        if (caps === null) return;
        for (const [, radius] of caps) assert.ok(radius <= MAX_CAP, `${JSON.stringify(shape)}: a cap of ${radius} rad`);
        const inside = compileShape(shape);
        // The shape's own corners and vertices, and random points.
        const probes: [number, number][] = [...points];
        if ('points' in shape) probes.push(...shape.points);
        else if ('r' in shape) for (let bearing = 0; bearing < 360; bearing += 30) probes.push(destination(shape.cx, shape.cy, bearing, shape.r * (1 - 1e-9)));
        else probes.push([shape.w, shape.s], [shape.e, shape.n], [shape.w, shape.n], [shape.e, shape.s]);
        for (const [x, y] of probes) {
          if (!inside(x, y)) continue;
          assert.ok(heldBySphere(caps, x, y), `${JSON.stringify(shape)}: (${x}, ${y}) is in no cap`);
          assert.ok(heldBySpheroidBackend(caps, x, y), `${JSON.stringify(shape)}: (${x}, ${y}) is in no cap on a spheroid backend`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  void it('list pages: after the cursor id, then filter and shape, all required', () => {
    assert.deepEqual(listQuery('', null, null), {});
    assert.deepEqual(listQuery('c09', null, null), { _id: { $gt: 'c09' } });
    assert.deepEqual(listQuery('c09', { l: 'bus' }, { g: { $exists: true } }), { $and: [{ _id: { $gt: 'c09' } }, { l: 'bus' }, { g: { $exists: true } }] });
    assert.deepEqual(listQuery('', { l: 'bus' }, null), { l: 'bus' });
  });

  void it('history: by object and fix time, the cursor past the last fix of the page', () => {
    assert.deepEqual(historyQuery('car', {}, null, true), { o: 'car' });
    assert.deepEqual(historyQuery('car', { from: 'A', to: 'B' }, null, true), { o: 'car', t: { $gte: 'A', $lte: 'B' } });
    assert.deepEqual(historyQuery('car', { from: 'A' }, 'C', true), { o: 'car', t: { $gte: 'A', $gt: 'C' } });
    assert.deepEqual(historyQuery('car', { to: 'B' }, 'C', false), { o: 'car', t: { $lte: 'B', $lt: 'C' } });
    assert.equal(historyCursorTime(encodeCursor('2024-05-01T10:00:00.000Z')), '2024-05-01T10:00:00.000Z');
    assert.throws(() => historyCursorTime(encodeCursor('car')), (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor');
    assert.throws(() => historyCursorTime(encodeCursor('2024-13-01T10:00:00.000Z')), (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor');
  });
});

void describe('mongodb: search', () => {
  void it('every word an anchored prefix of an id, label or data word; scored, best first, then id', () => {
    const pipeline = searchPipeline(['trac', 'zur'], 10, { wi: 0 });
    assert.deepEqual(pipeline[0], {
      $match: {
        $and: [
          { $or: [{ wi: { $regex: '^trac' } }, { wl: { $regex: '^trac' } }, { 'd.w': { $regex: '^trac' } }] },
          { $or: [{ wi: { $regex: '^zur' } }, { wl: { $regex: '^zur' } }, { 'd.w': { $regex: '^zur' } }] },
        ],
      },
    });
    assert.deepEqual(pipeline.slice(2), [{ $sort: { _score: -1, _id: 1 } }, { $limit: 10 }, { $project: { wi: 0 } }]);
    const count = (input: unknown, word: string): unknown => ({
      $size: { $filter: { input, cond: { $eq: [{ $indexOfCP: ['$$this', { $literal: word }] }, 0] } } },
    });
    assert.deepEqual(pipeline[1], {
      $addFields: {
        _score: {
          $let: {
            vars: { dw: { $reduce: { input: { $ifNull: ['$d', []] }, initialValue: [], in: { $concatArrays: ['$$value', { $ifNull: ['$$this.w', []] }] } } } },
            in: {
              $divide: [
                {
                  $add: ['trac', 'zur'].map((w) => ({
                    $add: [{ $multiply: [3, count({ $ifNull: ['$wl', []] }, w)] }, { $multiply: [2, count({ $ifNull: ['$wi', []] }, w)] }, count('$$dw', w)],
                  })),
                },
                { $add: [1, { $multiply: [0.1, { $add: [{ $size: { $ifNull: ['$wi', []] } }, { $size: { $ifNull: ['$wl', []] } }, { $size: '$$dw' }] }] }] },
              ],
            },
          },
        },
      },
    });
  });
});

void describe('mongodb: writes', () => {
  void it('a new fix with label, data and task ids: one $set stage, the fix behind the newer-fix $cond', () => {
    const [folded] = foldPatches([
      { id: 'car/1', label: 'Tractor Zürich', location: { longitude: 1, latitude: 2, time: 'T1', speed: 3 }, data: { a: 1, gone: null, s: '$x' }, tasks: ['t'] },
    ]);
    assert.ok(folded !== undefined);
    const newer = { $lte: [{ $ifNull: ['$t', null] }, { $literal: 'T1' }] };
    assert.deepEqual(objectWrite(folded, 'N'), {
      filter: { _id: 'car/1' },
      upsert: true,
      update: [
        {
          $set: {
            wi: { $literal: ['car', '1'] },
            l: { $literal: 'Tractor Zürich' },
            wl: { $literal: ['tractor', 'zurich'] },
            d: dataMergeExpression({ a: 1, gone: null, s: '$x' }),
            loc: { $cond: [newer, { $literal: { longitude: 1, latitude: 2, speed: 3, time: 'T1' } }, { $ifNull: ['$loc', null] }] },
            g: { $cond: [newer, { $literal: { type: 'Point', coordinates: [1, 2] } }, '$g'] },
            t: { $cond: [newer, { $literal: 'T1' }, { $ifNull: ['$t', null] }] },
            s: { $literal: 'N' },
            tk: { $literal: ['t'] },
          },
        },
      ],
    });
  });

  void it('the data merge: removed keys dropped, replaced ones in place, new ones appended, values literal', () => {
    assert.deepEqual(dataMergeExpression({ a: 1, gone: null, s: '$x' }), {
      $let: {
        vars: { old: { $ifNull: ['$d', []] } },
        in: {
          $concatArrays: [
            {
              $map: {
                input: { $filter: { input: '$$old', as: 'p', cond: { $not: [{ $in: ['$$p.k', { $literal: ['gone'] }] }] } } },
                as: 'p',
                in: {
                  $let: {
                    vars: { i: { $indexOfArray: [{ $literal: ['a', 's'] }, '$$p.k'] } },
                    in: { $cond: [{ $gte: ['$$i', 0] }, { $arrayElemAt: [{ $literal: [{ k: 'a', v: 1, w: ['1'] }, { k: 's', v: '$x', w: ['x'] }] }, '$$i'] }, '$$p'] },
                  },
                },
              },
            },
            { $filter: { input: { $literal: [{ k: 'a', v: 1, w: ['1'] }, { k: 's', v: '$x', w: ['x'] }] }, as: 'n', cond: { $not: [{ $in: ['$$n.k', '$$old.k'] }] } } },
          ],
        },
      },
    });
  });

  void it('without label, data or fix the stored values stay; [] clears task ids; mustExist never creates', () => {
    const [folded] = foldPatches([{ id: 'x', tasks: [], mustExist: true }]);
    assert.ok(folded !== undefined);
    assert.deepEqual(objectWrite(folded, 'N'), {
      filter: { _id: 'x' },
      upsert: false,
      update: [
        {
          $set: {
            wi: { $literal: ['x'] },
            l: { $ifNull: ['$l', null] },
            wl: { $ifNull: ['$wl', []] },
            d: { $ifNull: ['$d', []] },
            loc: { $ifNull: ['$loc', null] },
            t: { $ifNull: ['$t', null] },
            s: { $ifNull: ['$s', null] },
            tk: '$$REMOVE',
          },
        },
      ],
    });
  });

  void it('a batch: unordered updateOne upserts, an update-only patch of an object not read is left out', () => {
    const batch = foldPatches([{ id: 'a', label: 'A' }, { id: 'b', mustExist: true, label: 'B' }, { id: 'c', mustExist: true, label: 'C' }]);
    const olds = new Map<string, TrackedObject>([['c', { id: 'c', label: null, location: null, data: {}, seen: null }]]);
    const { ops, written } = batchOperations(batch, olds, 'N');
    assert.deepEqual(written.map((w) => w.id), ['a', 'c']);
    const [a, c] = batch.filter((w) => w.id !== 'b').map((w) => objectWrite(w, 'N'));
    assert.deepEqual(ops, [
      { updateOne: { filter: { _id: 'a' }, update: a?.update, upsert: true } },
      { updateOne: { filter: { _id: 'c' }, update: c?.update, upsert: false } },
    ]);
  });

  void it('history: one upsert per fix time (the later fix of an equal time), with the object after the batch', () => {
    const data = JSON.parse('{"n":1,"__proto__":"p"}') as TrackedObject['data'];
    const next: TrackedObject = { id: 'van', label: 'L', location: null, data, seen: 'N' };
    const writes = historyWrites(
      [
        { longitude: 6, latitude: 6, time: '2024-05-01T10:00:01.000Z' },
        { longitude: 1, latitude: 1, time: '2024-05-01T10:00:00.000Z' },
        { longitude: 7, latitude: 7, time: '2024-05-01T10:00:01.000Z' },
      ],
      next,
    );
    const d = [{ k: 'n', v: 1 }, { k: '__proto__', v: 'p' }];
    assert.deepEqual(writes, [
      { filter: { o: 'van', t: '2024-05-01T10:00:00.000Z' }, update: { $set: { at: new Date('2024-05-01T10:00:00.000Z'), f: { longitude: 1, latitude: 1, time: '2024-05-01T10:00:00.000Z' }, l: 'L', d } }, upsert: true },
      { filter: { o: 'van', t: '2024-05-01T10:00:01.000Z' }, update: { $set: { at: new Date('2024-05-01T10:00:01.000Z'), f: { longitude: 7, latitude: 7, time: '2024-05-01T10:00:01.000Z' }, l: 'L', d } }, upsert: true },
    ]);
  });
});

void describe('mongodb: documents, connection and errors', () => {
  void it('data pairs keep key order, odd keys and types, and read back as own properties', () => {
    const data = JSON.parse('{"__proto__":"own","a.b":1,"$":true,"z":"Zoë 12"}') as Record<string, string | number | boolean>;
    const pairs = dataToPairs(data, true);
    assert.deepEqual(pairs, [{ k: '__proto__', v: 'own', w: ['own'] }, { k: 'a.b', v: 1, w: ['1'] }, { k: '$', v: true }, { k: 'z', v: 'Zoë 12', w: ['zoe', '12'] }]);
    const back = pairsToData(pairs);
    assert.ok(Object.hasOwn(back, '__proto__'));
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.deepEqual(Object.entries(back), Object.entries(data));
    assert.deepEqual(projectPairs(pairs, ['z', 'missing', '$']), { z: 'Zoë 12', $: true });
    assert.deepEqual(
      objectFromDoc({ _id: 'x', l: null, loc: null, s: null, d: pairs, tk: [], wi: ['x'], wl: [] }),
      { id: 'x', label: null, location: null, data: back, seen: null },
    );
    assert.deepEqual(areaGeometry({ w: 170, n: 10, e: -170, s: -10 }), { type: 'MultiPoint', coordinates: [[170, -10], [-170, -10], [-170, 10], [170, 10]] });
  });

  void it('history TTL from the retention days; none for 0 (keep everything)', () => {
    assert.equal(historyTtlIndex(0), null);
    assert.deepEqual(historyTtlIndex(30), { key: { at: 1 }, name: 'history_ttl', expireAfterSeconds: 2_592_000 });
  });

  void it('connection defaults unless the URL sets them; passwords hidden in messages', () => {
    assert.deepEqual(clientOptions('mongodb://h/locus'), { ignoreUndefined: true, ...CONNECTION_DEFAULTS });
    const given = clientOptions('mongodb://h/locus?maxpoolsize=5&serverSelectionTimeoutMS=100&retryWrites=false');
    assert.equal('maxPoolSize' in given || 'serverSelectionTimeoutMS' in given || 'retryWrites' in given, false);
    assert.equal(redactUrl('mongodb://user:pa:ss@h/x'), 'mongodb://user:***@h/x');
    assert.equal(redactUrl('mongodb+srv://user@h/x'), 'mongodb+srv://user@h/x');
    assert.equal(redactUrl('mongodb://h/x'), 'mongodb://h/x');
  });

  void it('driver errors: a duplicate key is a conflict, others internal without their text', () => {
    const dup = new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' });
    assert.equal(translateMongoError(dup).code, 'conflict');
    const other = translateMongoError(new MongoServerError({ code: 2, errmsg: 'BadValue: secret detail' }));
    assert.equal(other.code, 'internal');
    assert.equal(other.message, 'internal error');
    const own = new LocusError('not_found', 'x');
    assert.equal(translateMongoError(own), own);
  });

  void it('insertNew: a duplicate key is what `exists` makes of it; any other error passes unchanged', async () => {
    const failing = (err: Error) => ({ insertOne: () => Promise.reject(err) }) as unknown as Collection<{ _id: string }>;
    const dup = new MongoServerError({ code: 11000, errmsg: 'E11000 duplicate key error' });
    const exists = (cause: unknown): LocusError => new LocusError('conflict', 'thing x already exists', { cause });
    await assert.rejects(insertNew(failing(dup), { _id: 'x' }, exists), (err: unknown) => err instanceof LocusError && err.code === 'conflict' && err.cause === dup);
    const other = new MongoServerError({ code: 2, errmsg: 'BadValue' });
    await assert.rejects(insertNew(failing(other), { _id: 'x' }, exists), (err: unknown) => err === other);
    const inserted: unknown[] = [];
    const working = { insertOne: (doc: unknown) => Promise.resolve(void inserted.push(doc)) } as unknown as Collection<{ _id: string }>;
    await insertNew(working, { _id: 'y' }, exists);
    assert.deepEqual(inserted, [{ _id: 'y' }]);
  });

  void it('store URLs: every registered scheme, with a clear message otherwise', () => {
    assert.equal(storeUrlProblem('sqlite:./data/locus.db'), null);
    assert.equal(storeUrlProblem('mongodb://localhost:27017/locus'), null);
    assert.equal(storeUrlProblem('mongodb+srv://cluster.example.net/locus'), null);
    assert.match(storeUrlProblem('sqlite:') ?? '', /^LOCUS_STORE must be sqlite:<path>/);
    assert.match(storeUrlProblem('postgres://x') ?? '', /^LOCUS_STORE must be .*mongodb:\/\/.*got "postgres:\/\/x"$/);
    assert.equal(storeUrlProblem('mongodb:///locus'), 'LOCUS_STORE: mongodb:// needs a host, as in mongodb://localhost:27017/locus');
  });

  void it('writes to one key run in call order, writes to other keys do not wait', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = queue.run(['a'], async () => {
      await gate;
      log.push('a1');
    });
    const second = queue.run(['a', 'b'], () => {
      log.push('ab2');
      return Promise.reject(new Error('fails alone'));
    });
    const third = queue.run(['a'], () => {
      log.push('a3');
      return Promise.resolve();
    });
    await queue.run(['c'], () => {
      log.push('c');
      return Promise.resolve();
    });
    assert.deepEqual(log, ['c']);
    release();
    await first;
    await assert.rejects(second, /fails alone/);
    await third;
    assert.deepEqual(log, ['c', 'a1', 'ab2', 'a3']);
  });
});
