/**
 * Property tests of the query engine: random objects, filters, shapes and search words;
 * the store's answer (every page, followed through its cursors) must equal a brute-force
 * oracle over the same objects, built from the one implementation of each rule
 * (matchesFilter, containsPoint, matchesSearch): the same ids in the same order (search:
 * the same set). Both shape plans of the SQLite store (spatial-index-driven and id-ordered) are
 * checked.
 *
 * The generators aim at the edges: points on a grid that shape vertices and edges also
 * use, the poles, longitudes ±180 and rectangles across the antimeridian, circles from a
 * millimetre to the whole Earth, concave polygons, data of mixed types (5 and "5"),
 * nested objects and arrays (never equal or ordered, their string leaves searched), missing fields, ids that JavaScript and code point order sort differently.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { compareCodePoints, matchesFilter } from '../../internal/domain/filter.js';
import { matchesSearch, searchWords } from '../../internal/domain/search.js';
import { parseShape } from '../../internal/domain/shape.js';
import type { Data, FilterCondition, Location, ObjectPatch, Shape, TrackedObject } from '../../internal/domain/types.js';
import { containsPoint } from '../../internal/geo/contains.js';
import type { Store } from '../../internal/store/port.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { PAST_BUFFER_FIXES } from '../../internal/store/sqlite/history-rows.js';
import { assertHistoryPages, historyStoreName, openHistoryStore } from '../support/history-stores.js';
import { freshMongoStore, testMongoUri } from '../support/mongodb.js';

const NOW = '2024-05-01T12:00:00.000Z';
const TIME = '2024-05-01T10:00:00.000Z';

// Each SQLite store runs two worker threads, and each thread's stdout and stderr are piped
// into the process's: stores opened all at once at import time left 16 pipes on stdout
// before the test runner added its reporter's, which then warned of a listener leak
// (MaxListenersExceededWarning). So every store opens only for the tests that use it.
// The default store serves most tests; the others are opened by their own describe/it.
const open = {
  auto: (): Store => openSqliteStore(':memory:'),
  ordered: (): Store => openSqliteStore(':memory:', { spatialCap: () => 1 }),
  spatial: (): Store => openSqliteStore(':memory:', { spatialCap: () => 1e9 }),
};
let defaultStore: Store | undefined;
const mainStore = (): Store => (defaultStore ??= open.auto());
after(async () => {
  await defaultStore?.close();
});

/** Opens `make()` before the tests of the enclosing describe and closes it after them. */
function scopedStore(make: () => Store | Promise<Store>, shared = false): () => Store {
  let store: Store | undefined;
  before(async () => {
    store = shared ? mainStore() : await make();
  });
  after(async () => {
    if (!shared) await store?.close();
  });
  return () => {
    if (store === undefined) throw new Error('store not open');
    return store;
  };
}

// MongoDB where a server is configured (LOCUS_TEST_MONGODB_URI): the same oracles decide.
const mongoPlans: { name: string; make: () => Promise<Store>; shared: boolean }[] =
  testMongoUri === null ? [] : [{ name: 'mongodb', make: () => freshMongoStore(testMongoUri as string), shared: false }];

// Three plans: the default choice, one whose shape queries always take the id-ordered
// plan, and one that always takes the spatial plan.
const plans: { name: string; make: () => Store | Promise<Store>; shared: boolean }[] = [
  { name: 'auto plan', make: open.auto, shared: true },
  { name: 'ordered plan', make: open.ordered, shared: false },
  { name: 'spatial plan', make: open.spatial, shared: false },
  ...mongoPlans,
];
// History: the default store, and stores whose object rows hold fewer past fixes before
// these move to the history table (1: each at once), so that every run moves some.
const historyPlans: { name: string; make: () => Store | Promise<Store>; shared: boolean }[] = [
  ...mongoPlans,
  { name: `${PAST_BUFFER_FIXES} held`, make: open.auto, shared: true },
  ...[1, 2, 3].map((held) => ({ name: `${held} held`, make: (): Store => openSqliteStore(':memory:', { pastBuffer: held }), shared: false })),
  // Small chunks of `history` (history-chunks.ts): the times below are 1 ms, 1 s and 1 h apart.
  ...[
    { held: 1, span: 1000, fixes: 2 },
    { held: 2, span: 0, fixes: 3 },
  ].map((limits) => ({
    name: historyStoreName(limits),
    make: (): Store => openHistoryStore(limits),
    shared: false,
  })),
];

// The warning above is emitted on a later tick: collect warnings from import time on.
const warnings: Error[] = [];
process.on('warning', (warning) => warnings.push(warning));

let realmCounter = 0;
const freshRealm = (): string => `realm-${++realmCounter}`;

// --- generators -----------------------------------------------------------------------

const GRID_LON = [-180, -179.5, -179, -4, -3, -2.5, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 179, 179.5, 180];
const GRID_LAT = [-90, -89.5, -89, -4, -3, -2, -1, -0.5, 0, 0.5, 1, 2, 3, 4, 88, 89, 89.5, 90];

const double = (min: number, max: number): fc.Arbitrary<number> => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });

const longitude = fc.oneof(fc.constantFrom(...GRID_LON), double(-5, 5), double(178, 180), double(-180, -178), double(-180, 180));
const latitude = fc.oneof(fc.constantFrom(...GRID_LAT), double(-5, 5), double(85, 90), double(-90, -85), double(-90, 90));

/** Points: on the grid, near the origin, the antimeridian or the poles, or anywhere. */
const point: fc.Arbitrary<[number, number]> = fc.oneof(
  fc.tuple(fc.constantFrom(...GRID_LON), fc.constantFrom(...GRID_LAT)),
  fc.tuple(double(-5, 5), double(-5, 5)),
  fc.tuple(fc.oneof(double(178, 180), double(-180, -178)), double(-5, 5)),
  fc.tuple(double(-180, 180), fc.oneof(double(85, 90), double(-90, -85))),
  fc.tuple(double(-180, 180), double(-90, 90)),
);

const STRINGS = ['0', '1', '2', '5', 'a', 'b', 'A', 'é', 'e\u0301', '😀', '\uFFFF', '\uE000', ''];
const dataValue = fc.oneof(
  fc.integer({ min: -3, max: 5 }),
  fc.constantFrom(1.5, -0.5, 2 ** 60, 1e21, 0.1),
  fc.constantFrom(...STRINGS),
  fc.boolean(),
);
/**
 * Nested values (objects and arrays), which filters compare false (`!=` true): among them
 * arrays holding the very values a filter asks for, and objects whose JSON text a filter's
 * string could spell.
 */
const nestedValue: fc.Arbitrary<Data[string]> = fc.oneof(
  fc.array(fc.oneof(dataValue, fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('a', 'v', ''), fc.oneof(dataValue, fc.array(dataValue, { maxLength: 2 })), { maxKeys: 2 }),
);
const DATA_KEYS = ['a', 'b', 'c', 'a.b', 'x"y'];
const data: fc.Arbitrary<Data> = fc.dictionary(fc.constantFrom(...DATA_KEYS), fc.oneof({ weight: 4, arbitrary: dataValue }, { weight: 1, arbitrary: nestedValue }), { maxKeys: 4 });

/** Ids from units that JavaScript's sort and code point order disagree on. */
const idArb = fc.string({ unit: fc.constantFrom('a', 'b', 'Z', 'é', '\uFFFF', '\uE000', '😀', '/', '1'), minLength: 1, maxLength: 4 });

const objectsArb: fc.Arbitrary<ObjectPatch[]> = fc
  .uniqueArray(idArb, { minLength: 0, maxLength: 60, size: 'large' })
  .chain((ids) =>
    fc.tuple(
      ...ids.map((id) =>
        fc.record({
          label: fc.option(fc.constantFrom(...STRINGS, 'Truck 1'), { nil: null }),
          location: fc.option(point, { nil: null }),
          data,
        }).map(({ label, location, data: d }): ObjectPatch => {
          const patch: ObjectPatch = { id, label, data: d };
          if (location !== null) patch.location = { longitude: location[0], latitude: location[1], time: TIME };
          return patch;
        }),
      ),
    ),
  );

const condition: fc.Arbitrary<FilterCondition> = fc.record({
  field: fc.constantFrom(...DATA_KEYS, 'id', 'label', 'missing'),
  op: fc.constantFrom('=', '!=', '>', '<', '>=', '<='),
  value: fc.oneof(dataValue, fc.constant(null), fc.constantFrom('Z', 'a/', '😀', 'Truck 1', '[]', '{}', '[1]', '[true]')),
});
const filterArb = fc.array(condition, { maxLength: 3 });

const EIGHT = [
  [1, 0],
  [1, 1],
  [0, 1],
  [-1, 1],
  [-1, 0],
  [-1, -1],
  [0, -1],
  [1, -1],
] as const;

function valid(shape: Shape): boolean {
  try {
    parseShape(shape, 10_000);
    return true;
  } catch {
    return false;
  }
}

/** Star-shaped polygons (so never self-intersecting), often concave: on the grid, or anywhere. */
const gridPolygon: fc.Arbitrary<Shape> = fc
  .record({
    centre: fc.tuple(fc.constantFrom(-2, 0, 1, 178, -178, 0), fc.constantFrom(-1, 0, 1, 88, -88)),
    arms: fc.subarray([0, 1, 2, 3, 4, 5, 6, 7], { minLength: 3 }),
    radii: fc.array(fc.constantFrom(0.5, 1, 2, 3), { minLength: 8, maxLength: 8 }),
  })
  .map(({ centre, arms, radii }): Shape => ({
    points: arms.map((k) => {
      const [dx, dy] = EIGHT[k] as readonly [number, number];
      const r = radii[k] ?? 1;
      return [centre[0] + dx * r, centre[1] + dy * r] as [number, number];
    }),
  }));

const freePolygon: fc.Arbitrary<Shape> = fc
  .record({
    centre: point,
    angles: fc.uniqueArray(double(0, 2 * Math.PI - 1e-6), { minLength: 3, maxLength: 12 }),
    radii: fc.array(double(0.001, 30), { minLength: 12, maxLength: 12 }),
  })
  .map(({ centre, angles, radii }): Shape => ({
    points: [...angles]
      .sort((a, b) => a - b)
      .map((angle, k) => {
        const r = radii[k] ?? 1;
        return [centre[0] + r * Math.cos(angle), centre[1] + r * Math.sin(angle)] as [number, number];
      }),
  }));

const shapeArb: fc.Arbitrary<Shape> = fc
  .oneof(
    fc.record({
      cx: longitude,
      cy: latitude,
      r: fc.oneof(double(0.001, 10), double(10, 100_000), double(100_000, 20_000_000), fc.constant(20_037_509)),
    }),
    fc.record({ w: longitude, e: longitude, lat: fc.tuple(latitude, latitude) }).map(({ w, e, lat }) => ({
      w,
      e,
      s: Math.min(...lat),
      n: Math.max(...lat),
    })),
    gridPolygon,
    freePolygon,
  )
  .filter(valid);

// --- oracle ----------------------------------------------------------------------------

function stored(patch: ObjectPatch): TrackedObject {
  return {
    id: patch.id,
    label: patch.label ?? null,
    location: patch.location ?? null,
    data: patch.data === undefined ? {} : (Object.fromEntries(Object.entries(patch.data).filter(([, v]) => v !== null)) as Data),
    seen: patch.location === undefined ? null : NOW,
  };
}

function inside(shape: Shape, location: Location | null): boolean {
  return location !== null && containsPoint(shape, location.longitude, location.latitude);
}

function oracle(objects: readonly TrackedObject[], filter: readonly FilterCondition[], shape: Shape | undefined): string[] {
  return objects
    .filter((o) => matchesFilter(o, filter) && (shape === undefined || inside(shape, o.location)))
    .map((o) => o.id)
    .sort(compareCodePoints);
}

async function listAll(store: Store, realm: string, limit: number, filter: FilterCondition[], shape: Shape | undefined): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; ; pages++) {
    const page = await store.objects.list(realm, {
      limit,
      ...(filter.length > 0 ? { filter } : {}),
      ...(shape === undefined ? {} : { shape }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    out.push(...page.items.map((o) => o.id));
    if (page.next === null) return out;
    assert.equal(page.items.length, limit, 'only the last page may be short');
    cursor = page.next;
    assert.ok(pages < 500, 'paging does not end');
  }
}

const show = (value: unknown): string => JSON.stringify(value);

// --- properties ------------------------------------------------------------------------

void describe('query engine against brute-force oracles', () => {
  for (const { name, make, shared } of plans) {
    void describe(name, () => {
      const storeOf = scopedStore(make, shared);
      void it('filters, shapes and both combined, over every page: the oracle ids in code point order', async () => {
        await fc.assert(
          fc.asyncProperty(
            objectsArb,
            fc.array(fc.tuple(filterArb, fc.option(shapeArb, { nil: undefined }), fc.integer({ min: 1, max: 7 })), {
              minLength: 1,
              maxLength: 6,
            }),
            async (patches, queries) => {
              const store = storeOf();
              const realm = freshRealm();
              if (patches.length > 0) await store.objects.upsertMany(realm, patches, NOW);
              const objects = patches.map(stored);
              for (const [filter, shape, limit] of queries) {
                const expected = oracle(objects, filter, shape);
                const got = await listAll(store, realm, limit, filter, shape);
                assert.deepEqual(got, expected, `filter ${show(filter)} shape ${show(shape)} limit ${limit}`);
              }
            },
          ),
          { numRuns: name === 'auto plan' ? 300 : 100 },
        );
      });

      void it('shapes only, many per data set: the oracle ids', async () => {
        await fc.assert(
          fc.asyncProperty(objectsArb, fc.array(shapeArb, { minLength: 1, maxLength: 12 }), async (patches, shapes) => {
            const store = storeOf();
            const realm = freshRealm();
            if (patches.length > 0) await store.objects.upsertMany(realm, patches, NOW);
            const objects = patches.map(stored);
            for (const shape of shapes) {
              const expected = oracle(objects, [], shape);
              const page = await store.objects.list(realm, { limit: 10_000, shape });
              assert.deepEqual(page.items.map((o) => o.id), expected, `shape ${show(shape)}`);
            }
          }),
          { numRuns: name === 'auto plan' ? 200 : 80 },
        );
      });
    });
  }

  void it('projections (fields): each object with the named fields of its data, in their order, and nothing else', async () => {
    const store = mainStore();
    // Keys that need quoting in a JSON path, JSON escapes, `__proto__`, and any text.
    const key = fc.oneof(fc.constantFrom(...DATA_KEYS, '__proto__', 'a\\b', '$', '[0]', 'é', ''), fc.string({ maxLength: 4 }));
    const value = fc.oneof(dataValue, fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom(1e21, 2 ** 60 + 256, 0.1, -0), nestedValue);
    const objectData = fc.dictionary(key, value, { maxKeys: 5 }).map((d) => JSON.parse(JSON.stringify(d)) as Data);
    await fc.assert(
      fc.asyncProperty(fc.array(objectData, { minLength: 1, maxLength: 5 }), fc.array(key, { minLength: 1, maxLength: 4 }), async (datas, fields) => {
        const realm = freshRealm();
        const patches: ObjectPatch[] = datas.map((d, i) => ({ id: `o${i}`, label: 'L', location: { longitude: 1, latitude: 2, time: TIME }, data: d }));
        await store.objects.upsertMany(realm, patches, NOW);
        const stored = (await store.objects.list(realm, { limit: 100 })).items;
        for (const shape of [undefined, { cx: 1, cy: 2, r: 10 } as Shape]) {
          const page = await store.objects.list(realm, { limit: 100, fields, ...(shape === undefined ? {} : { shape }) });
          const expected = stored.map((o) => ({
            id: o.id,
            label: o.label,
            location: null,
            data: Object.fromEntries(fields.filter((f) => Object.hasOwn(o.data, f)).map((f) => [f, o.data[f]])),
            seen: o.seen,
          }));
          // JSON text: key order and values (-0 as 0) as a response shows them.
          assert.equal(JSON.stringify(page.items), JSON.stringify(expected), `fields ${show(fields)}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  void it('objects on shape vertices, on edges, at the poles and at ±180 are inside', async () => {
    // Deterministic companions of the random runs: every vertex of a grid polygon and every
    // corner of a rectangle (also across the antimeridian) is stored as a point and found.
    const store = mainStore();
    await fc.assert(
      fc.asyncProperty(fc.oneof(gridPolygon.filter(valid), shapeArb.filter((s) => 'w' in s)), async (shape) => {
        const realm = freshRealm();
        const corners: [number, number][] =
          'points' in shape
            ? shape.points
            : 'w' in shape
              ? [
                  [shape.w, shape.s],
                  [shape.w, shape.n],
                  [shape.e, shape.s],
                  [shape.e, shape.n],
                ]
              : [];
        const patches: ObjectPatch[] = corners.map(([lon, lat], k) => ({ id: `v${k}`, location: { longitude: lon, latitude: lat, time: TIME } }));
        await store.objects.upsertMany(realm, patches, NOW);
        const page = await store.objects.list(realm, { limit: 100, shape });
        assert.deepEqual(page.items.map((o) => o.id), oracle(patches.map(stored), [], shape));
        assert.equal(page.items.length, patches.length, `every vertex is inside ${show(shape)}`);
      }),
      { numRuns: 100 },
    );
  });

  void it('search: the set of objects matchesSearch accepts', async () => {
    const store = mainStore();
    const vocabulary = [
      'Tractor',
      'tractor',
      'Traktor',
      'Zürich',
      'zurich',
      'ÉCOLE',
      'école',
      'Straße',
      '東京',
      'Ελληνικά',
      'ΣΟΦΟΣ',
      '½',
      'ﬁsh',
      'İstanbul',
      'Anna-Lena',
      'Müller',
      'x1',
      '12.5',
      'Ⅻ',
      'ｆｕｌｌ',
    ];
    const text = fc.array(fc.constantFrom(...vocabulary), { minLength: 0, maxLength: 3 }).map((words) => words.join(' '));
    const searchable = fc
      .uniqueArray(fc.string({ unit: fc.constantFrom('a', 't', 'Z', 'é', '1', '/', '😀'), minLength: 1, maxLength: 4 }), { maxLength: 30 })
      .chain((ids) =>
        fc.tuple(
          ...ids.map((id) =>
            fc.record({
              label: fc.option(text, { nil: null }),
              data: fc.dictionary(
                fc.constantFrom('a', 'b', 'c'),
                fc.oneof(
                  text,
                  fc.constantFrom(12.5, 1e21, -3, 7),
                  fc.boolean(),
                  // Nested values: only their string leaves are text.
                  fc.array(fc.oneof(text, fc.constantFrom(12.5, 7)), { maxLength: 2 }),
                  fc.dictionary(fc.constantFrom('Müller', 'x1'), fc.oneof(text, fc.array(text, { maxLength: 2 })), { maxKeys: 2 }),
                ),
                { maxKeys: 3 },
              ),
            }).map(({ label, data: d }): ObjectPatch => ({ id, label, data: d })),
          ),
        ),
      );
    const allWords = [...new Set(vocabulary.flatMap((w) => searchWords(w)).concat(['a', 't', 'z', 'e', '1', '12', '5', '21', '1e']))];
    const queryWord = fc
      .tuple(fc.constantFrom(...allWords), fc.integer({ min: 1, max: 12 }))
      .map(([word, n]) => [...word].slice(0, n).join(''));
    await fc.assert(
      fc.asyncProperty(searchable, fc.array(fc.uniqueArray(queryWord, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 8 }), async (patches, queries) => {
        const realm = freshRealm();
        if (patches.length > 0) await store.objects.upsertMany(realm, patches, NOW);
        const objects = patches.map(stored);
        for (const words of queries) {
          const expected = objects.filter((o) => matchesSearch(o, words)).map((o) => o.id).sort(compareCodePoints);
          const hits = await store.objects.search(realm, { words, limit: 10_000 });
          assert.deepEqual(hits.map((h) => h.object.id).sort(compareCodePoints), expected, `words ${show(words)}`);
          for (let i = 1; i < hits.length; i++) assert.ok((hits[i - 1]?.score ?? 0) >= (hits[i]?.score ?? 0), 'best first');
        }
      }),
      { numRuns: 300 },
    );
  });

  for (const { name, make, shared } of historyPlans) {
  void describe(`history (${name})`, () => {
  const storeOf = scopedStore(make, shared);
  void it(`history (${name}): pages in either order, bounded and paged, give the fixes the write, retention and delete rules leave`, async () => {
    // Oracle: per object, the fixes by time (a later write of an equal time replaces the
    // earlier one); retention removes those before its cut, the current one included (it
    // stays the location, not in history); a delete removes the object and its fixes.
    const TIMES = ['2024-05-01T10:00:00.000Z', '2024-05-01T10:00:00.001Z', '2024-05-01T10:00:01.000Z', '2024-05-01T10:00:02.000Z', '2024-05-01T11:00:00.000Z'];
    const IDS = ['a', 'b', 'é'];
    const fix = fc.record({ id: fc.constantFrom(...IDS), time: fc.integer({ min: 0, max: TIMES.length - 1 }), speed: fc.option(fc.constantFrom(0, 2.5), { nil: undefined }) });
    const op = fc.oneof(
      { weight: 6, arbitrary: fc.array(fix, { minLength: 1, maxLength: 5 }).map((fixes) => ({ kind: 'write' as const, fixes })) },
      { weight: 2, arbitrary: fc.integer({ min: 0, max: TIMES.length }).map((cut) => ({ kind: 'prune' as const, cut })) },
      { weight: 1, arbitrary: fc.constantFrom(...IDS).map((id) => ({ kind: 'delete' as const, id })) },
    );
    const query = fc.record({
      id: fc.constantFrom(...IDS),
      order: fc.constantFrom('asc' as const, 'desc' as const),
      from: fc.option(fc.integer({ min: 0, max: TIMES.length - 1 }), { nil: undefined }),
      to: fc.option(fc.integer({ min: 0, max: TIMES.length - 1 }), { nil: undefined }),
      limit: fc.integer({ min: 1, max: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), fc.array(query, { minLength: 1, maxLength: 6 }), async (ops, queries) => {
        const store = storeOf();
        const realm = freshRealm();
        const oracle = new Map<string, Map<string, Location>>();
        let writes = 0;
        for (const step of ops) {
          if (step.kind === 'write') {
            const patches: ObjectPatch[] = step.fixes.map(({ id, time, speed }) => {
              // Each fix says which write it was: a later write of an equal time is seen to win.
              const location: Location = { longitude: ++writes / 100, latitude: 1, time: TIMES[time] as string };
              if (speed !== undefined) location.speed = speed;
              return { id, location };
            });
            await store.objects.upsertMany(realm, patches, NOW);
            for (const patch of patches) {
              const fixes = oracle.get(patch.id) ?? new Map<string, Location>();
              oracle.set(patch.id, fixes);
              const location = patch.location as Location;
              fixes.set(location.time, location);
            }
          } else if (step.kind === 'prune') {
            const cut = TIMES[step.cut] ?? '2025-01-01T00:00:00.000Z';
            let expected = 0;
            for (const fixes of oracle.values()) {
              for (const time of [...fixes.keys()]) {
                if (time < cut) {
                  fixes.delete(time);
                  expected++;
                }
              }
            }
            assert.equal(await store.objects.pruneHistory(realm, cut), expected, `fixes pruned before ${cut}`);
          } else {
            const deleted = await store.objects.delete(realm, step.id, NOW);
            assert.equal(deleted !== null, oracle.has(step.id), `delete ${step.id}`);
            oracle.delete(step.id);
          }
        }
        for (const q of queries) {
          const from = q.from === undefined ? undefined : TIMES[q.from];
          const to = q.to === undefined ? undefined : TIMES[q.to];
          await assertHistoryPages(store, realm, q.id, oracle.get(q.id)?.values() ?? [], { order: q.order, limit: q.limit, from, to }, `history of ${q.id} ${show(q)}`);
        }
      }),
      { numRuns: shared ? 300 : 150 },
    );
  });
  });
  }

  void it('opening its stores leaves no listener-leak warning (MaxListenersExceededWarning)', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  });
});
