/**
 * The store contract, part two: the query engine (filters, shapes, both combined with
 * paging, full-text search, location history and its retention). Run by storeContract
 * (store-contract.ts) against every adapter; expected answers are written out by hand. The
 * randomised comparison with brute-force oracles is test/integration/query-properties.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import { parseFilter } from '../../internal/domain/filter.js';
import type { Location, ObjectPatch, Shape, TrackedObject } from '../../internal/domain/types.js';
import type { HistoryEntry, ObjectListQuery, Page, Store } from '../../internal/store/port.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T = (minute: number): string => `2024-05-01T10:${String(minute).padStart(2, '0')}:00.000Z`;

type WithStore = (body: (store: Store) => Promise<void>) => Promise<void>;

function at(longitude: number, latitude: number, time = T(0)): Location {
  return { longitude, latitude, time };
}

function ids(items: readonly { id: string }[]): string[] {
  return items.map((item) => item.id);
}

/** Every page of a list query, followed through its cursors. */
async function listAll(store: Store, realm: string, query: Omit<ObjectListQuery, 'cursor'>): Promise<{ ids: string[]; pages: number }> {
  const out: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page: Page<TrackedObject> = await store.objects.list(realm, cursor === undefined ? query : { ...query, cursor });
    pages++;
    assert.ok(page.items.length <= query.limit, 'a page holds at most limit items');
    if (page.next !== null) assert.equal(page.items.length, query.limit, 'a page that is not the last is full');
    out.push(...ids(page.items));
    if (page.next === null) return { ids: out, pages };
    cursor = page.next;
    assert.ok(pages < 1000, 'paging does not end');
  }
}

const filter = (text: string): ObjectListQuery['filter'] => parseFilter(text, 100);

export function queryContract(withStore: WithStore): void {
  void describe('filters', () => {
    const objects: ObjectPatch[] = [
      { id: 'f01', label: 'Alpha', data: { a: 5, s: 'x' } },
      { id: 'f02', label: 'beta', data: { a: '5' } },
      { id: 'f03', data: { a: 10 } },
      { id: 'f04', label: 'Gamma', data: { a: '10' } },
      { id: 'f05', label: 'delta', data: {} },
      { id: 'f06', label: 'ε', data: { a: true } },
      { id: 'f07', data: { a: false, 'a.b': 1, 'a"b': 2, $: 3, ü: 'ü', ['__proto__']: 'p', 'x\\y': 4 } },
      { id: 'f08', data: { a: 5.5 } },
      { id: 'f09', data: { n: 2 ** 60 } },
      { id: 'f10', data: { a: 0 } },
      { id: 'f11', data: { s: '\uFFFF' } },
      { id: 'f12', data: { s: '😀' } },
    ];
    const all = objects.map((o) => o.id);
    const except = (...out: string[]): string[] => all.filter((id) => !out.includes(id));
    const cases: [string, string[]][] = [
      // Type-strict equality: 5 never equals "5".
      ['a=5', ['f01']],
      ['a="5"', ['f02']],
      ['a=5.5', ['f08']],
      ['a=0', ['f10']],
      ['a=-0', ['f10']],
      ['a=5e0', ['f01']],
      ['a!=5', except('f01')],
      ['a!="5"', except('f02')],
      // = null: missing (or null); != null: present.
      ['a=null', ['f05', 'f09', 'f11', 'f12']],
      ['a!=null', ['f01', 'f02', 'f03', 'f04', 'f06', 'f07', 'f08', 'f10']],
      ['missing!=1', all],
      ['missing=null', all],
      ['missing>1', []],
      // > and < compare numbers with numbers, strings with strings (code points), nothing else.
      ['a>5', ['f03', 'f08']],
      ['a<5', ['f10']],
      ['a>-1', ['f01', 'f03', 'f08', 'f10']],
      ['a>"10"', ['f02']],
      ['a<"5"', ['f04']],
      ['a>true', []],
      ['a<null', []],
      ['a=true', ['f06']],
      ['a=false', ['f07']],
      ['a!=true', except('f06')],
      ['s>"\\uffff"', ['f12']],
      ['s<"😀"', ['f01', 'f11']],
      ['s>x', ['f11', 'f12']],
      // Keys with path characters are ordinary keys.
      ['a.b=1', ['f07']],
      ['a"b=2', ['f07']],
      ['$=3', ['f07']],
      ['ü=ü', ['f07']],
      ['__proto__=p', ['f07']],
      ['x\\y=4', ['f07']],
      // A double beyond 2^53: equal to the stored value as JavaScript reads it back.
      ['n=1152921504606846976', ['f09']],
      ['n>1152921504606846975', []],
      ['n>1152921504606846000', ['f09']],
      // label: a column, null when unset.
      ['label=null', ['f03', 'f07', 'f08', 'f09', 'f10', 'f11', 'f12']],
      ['label!=null', ['f01', 'f02', 'f04', 'f05', 'f06']],
      ['label=beta', ['f02']],
      ['label!=beta', except('f02')],
      ['label>a', ['f02', 'f05', 'f06']],
      ['label<a', ['f01', 'f04']],
      ['label=5', []],
      ['label!=5', all],
      // id: a column, never null.
      ['id>f10', ['f11', 'f12']],
      ['id<f03', ['f01', 'f02']],
      ['id>f02,id<f05', ['f03', 'f04']],
      ['id>f05,id<f05', []],
      ['id="f04"', ['f04']],
      ['id!=f04', except('f04')],
      ['id=5', []],
      ['id>5', []],
      ['id!=5', all],
      ['id=null', []],
      ['id!=null', all],
      // All conditions must hold.
      ['a!=null,label!=null,a>"0"', ['f02', 'f04']],
      ['id>f01,id<f12,a=null', ['f05', 'f09', 'f11']],
      ['a=5,a="5"', []],
    ];

    void it('every operator, type and field kind, matching exactly the filter semantics', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('q', objects, N0);
        await store.objects.upsertMany('other', [{ id: 'f01', data: { a: 5 } }, { id: 'g', data: { a: 5 } }], N0);
        for (const [text, expected] of cases) {
          const page = await store.objects.list('q', { limit: 100, filter: filter(text) });
          assert.deepEqual(ids(page.items), expected, text);
          assert.equal(page.next, null, text);
        }
      }));

    void it('pages of a filtered list hold only matches and cover them once, in id order', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('q', objects, N0);
        for (const [text, expected] of cases.slice(0, 20)) {
          for (const limit of [1, 2, 3]) {
            const { ids: got } = await listAll(store, 'q', { limit, filter: filter(text) });
            assert.deepEqual(got, expected, `${text} limit ${limit}`);
          }
        }
      }));

    void it('a filtered list returns whole objects', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('q', [{ id: 'x', label: 'X', location: at(1, 2), data: { a: 1, b: 'two' } }], N0);
        assert.deepEqual(await store.objects.list('q', { limit: 10, filter: filter('a=1') }), {
          items: [{ id: 'x', label: 'X', location: at(1, 2), data: { a: 1, b: 'two' }, seen: N0 }],
          next: null,
        });
      }));

    void it('a projection reads only id, label, seen and the named data fields', () =>
      withStore(async (store) => {
        await store.objects.upsertMany(
          'q',
          [
            { id: 'x', label: 'X', location: at(1, 2), data: { a: 1, b: 'two', c: true } },
            { id: 'y', data: { b: 'three' } },
          ],
          N0,
        );
        const strip = (items: TrackedObject[]): Omit<TrackedObject, 'location'>[] =>
          items.map((o) => {
            assert.equal(o.location, null);
            return { id: o.id, label: o.label, data: o.data, seen: o.seen };
          });
        for (const shape of [undefined, { cx: 1, cy: 2, r: 10 } as Shape]) {
          const base = { limit: 10, ...(shape === undefined ? {} : { shape }) };
          const some = await store.objects.list('q', { ...base, fields: ['b', 'c', 'missing'] });
          const expected = [
            { id: 'x', label: 'X', data: { b: 'two', c: true }, seen: N0 },
            { id: 'y', label: null, data: { b: 'three' }, seen: null },
          ];
          assert.deepEqual(strip(some.items), shape === undefined ? expected : expected.slice(0, 1));
          const none = await store.objects.list('q', { ...base, fields: null });
          assert.deepEqual(strip(none.items), (shape === undefined ? expected : expected.slice(0, 1)).map((o) => ({ ...o, data: {} })));
        }
      }));

    void it('a key holding a nested value: =, >, <, >=, <= and =null are false, != and !=null true; fields return it whole', () =>
      withStore(async (store) => {
        await store.objects.upsertMany(
          'q',
          [
            { id: 'arr', data: { a: [5, '5', 'x', true, null, 10], b: 1 } },
            { id: 'obj', data: { a: { a: 5, $gt: 1, '': 'x' }, b: 1 } },
            { id: 'empty', data: { a: [], b: 1 } },
            { id: 'deep', data: { a: [[5]], b: 1 } },
            { id: 'five', data: { a: 5, b: 1 } },
            { id: 'text', data: { a: '[5]', b: 1 } },
          ],
          N0,
        );
        const nested = ['arr', 'deep', 'empty', 'obj'];
        const cases: [string, string[]][] = [];
        for (const value of ['5', '"5"', 'x', 'true', '10', '"[5]"', '"[]"', '"{}"', '""', '0', '-1']) {
          for (const op of ['=', '>', '<', '>=', '<=']) cases.push([`a${op}${value}`, []]);
          cases.push([`a!=${value}`, nested]);
        }
        cases.push(['a=null', []], ['a!=null', nested], ['a=null,b=1', []], ['a!=5,b=1', nested]);
        for (const [text, expected] of cases) {
          const got = ids((await store.objects.list('q', { limit: 100, filter: filter(text) })).items).filter((id) => nested.includes(id));
          assert.deepEqual(got, expected, text);
        }
        // The scalars beside them still compare as before.
        assert.deepEqual(ids((await store.objects.list('q', { limit: 100, filter: filter('a=5') })).items), ['five']);
        assert.deepEqual(ids((await store.objects.list('q', { limit: 100, filter: filter('a="[5]"') })).items), ['text']);
        assert.deepEqual(ids((await store.objects.list('q', { limit: 100, filter: filter('a<"a"') })).items), ['text']);
        const projected = await store.objects.list('q', { limit: 100, fields: ['a'], filter: filter('id<e') });
        assert.deepEqual(
          projected.items.map((o) => o.data),
          [{ a: [5, '5', 'x', true, null, 10] }, { a: [[5]] }],
        );
      }));

    void it('filters see updates and removed keys', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('q', [{ id: 'x', data: { a: 1 } }], N0);
        await store.objects.upsertMany('q', [{ id: 'x', data: { a: '1' } }], N1);
        assert.deepEqual(ids((await store.objects.list('q', { limit: 10, filter: filter('a=1') })).items), []);
        assert.deepEqual(ids((await store.objects.list('q', { limit: 10, filter: filter('a="1"') })).items), ['x']);
        await store.objects.upsertMany('q', [{ id: 'x', data: { a: null } }], N1);
        assert.deepEqual(ids((await store.objects.list('q', { limit: 10, filter: filter('a=null') })).items), ['x']);
      }));
  });

  void describe('shapes', () => {
    const located: ObjectPatch[] = [
      { id: 'berlin', location: at(13.4, 52.5) },
      { id: 'potsdam', location: at(13.06, 52.4) },
      { id: 'pole', location: at(45, 90) },
      { id: 'south-pole', location: at(-120, -90) },
      { id: 'am-east', location: at(179.9, 0) },
      { id: 'am-west', location: at(-179.9, 0) },
      { id: 'e180', location: at(180, 5) },
      { id: 'w180', location: at(-180, -5) },
      { id: 'origin', location: at(0, 0) },
      { id: 'edge', location: at(5, 0) },
      { id: 'vertex', location: at(10, 10) },
      { id: 'notch', location: at(5, 6) },
      { id: 'arm', location: at(1.5, 8) },
      { id: 'just-out', location: at(10.000001, 5) },
    ];
    const everyLocated = located.map((o) => o.id).sort();
    // A "U": concave, with a notch from (3,3) up to y = 10 between x = 3 and x = 7.
    const u: Shape = { points: [[0, 0], [10, 0], [10, 10], [7, 10], [7, 3], [3, 3], [3, 10], [0, 10]] };
    const cases: [string, Shape, string[]][] = [
      ['a 1 km circle', { cx: 13.4, cy: 52.5, r: 1000 }, ['berlin']],
      ['a 30 km circle', { cx: 13.4, cy: 52.5, r: 30_000 }, ['berlin', 'potsdam']],
      ['a tiny circle on a point', { cx: 13.06, cy: 52.4, r: 0.001 }, ['potsdam']],
      ['the largest circle holds the whole Earth', { cx: 0, cy: 0, r: 20_037_509 }, everyLocated],
      ['a circle near the pole', { cx: 0, cy: 89.9, r: 20_000 }, ['pole']],
      ['a circle on the pole', { cx: 0, cy: -90, r: 1 }, ['south-pole']],
      ['a circle across the antimeridian', { cx: 180, cy: 0, r: 20_000 }, ['am-east', 'am-west']],
      ['a rectangle across the antimeridian', { w: 170, n: 10, e: -170, s: -10 }, ['am-east', 'am-west', 'e180', 'w180']],
      ['a rectangle touching -180 holds +180 too', { w: -180, n: 10, e: -179, s: -10 }, ['am-west', 'e180', 'w180']],
      ['a rectangle touching +180 holds -180 too', { w: 179, n: 10, e: 180, s: -10 }, ['am-east', 'e180', 'w180']],
      ['the whole world', { w: -180, n: 90, e: 180, s: -90 }, everyLocated],
      ['edges and corners are inside', { w: 0, n: 0, e: 10, s: -10 }, ['edge', 'origin']],
      ['a rectangle reaching the pole', { w: 0, n: 90, e: 1, s: 89 }, ['pole']],
      ['a concave polygon: vertices and edges in, the notch out', u, ['arm', 'edge', 'origin', 'vertex']],
      ['a polygon reaching the pole', { points: [[-10, 80], [10, 80], [10, 90], [-10, 90]] }, ['pole']],
      ['a polygon far from everything', { points: [[100, 10], [101, 10], [100, 11]] }, []],
    ];

    void it('circles, rectangles and polygons at the poles, the antimeridian, edges and vertices', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('geo', [...located, { id: 'nowhere', label: 'no location' }], N0);
        await store.objects.upsertMany('other', [{ id: 'berlin2', location: at(13.4, 52.5) }], N0);
        for (const [name, shape, expected] of cases) {
          const page = await store.objects.list('geo', { limit: 100, shape });
          assert.deepEqual(ids(page.items), expected, name);
          assert.equal(page.next, null, name);
        }
      }));

    void it('pages of a shape query cover every match once, in id order', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('geo', located, N0);
        for (const [name, shape, expected] of cases) {
          for (const limit of [1, 2, 5]) {
            const { ids: got } = await listAll(store, 'geo', { limit, shape });
            assert.deepEqual(got, expected, `${name}, limit ${limit}`);
          }
        }
      }));

    void it('an object that moves leaves the old place and enters the new one', () =>
      withStore(async (store) => {
        const here: Shape = { cx: 13.4, cy: 52.5, r: 1000 };
        const there: Shape = { w: -1, n: 1, e: 1, s: -1 };
        await store.objects.upsertMany('geo', [{ id: 'car', location: at(13.4, 52.5, T(0)) }], N0);
        assert.deepEqual(ids((await store.objects.list('geo', { limit: 10, shape: here })).items), ['car']);
        await store.objects.upsertMany('geo', [{ id: 'car', location: at(0, 0, T(1)) }], N1);
        assert.deepEqual(ids((await store.objects.list('geo', { limit: 10, shape: here })).items), []);
        assert.deepEqual(ids((await store.objects.list('geo', { limit: 10, shape: there })).items), ['car']);
        // An older fix is history only: the object stays where it is.
        await store.objects.upsertMany('geo', [{ id: 'car', location: at(13.4, 52.5, T(0)) }], N1);
        assert.deepEqual(ids((await store.objects.list('geo', { limit: 10, shape: there })).items), ['car']);
        await store.objects.delete('geo', 'car', N1);
        assert.deepEqual(ids((await store.objects.list('geo', { limit: 10, shape: there })).items), []);
      }));

    void it('many objects: shape pages are exact whatever plan serves them', () =>
      withStore(async (store) => {
        // A 40 × 40 grid, 0.1° apart, and shapes holding a few or most of it.
        const grid: ObjectPatch[] = [];
        for (let i = 0; i < 40; i++) {
          for (let j = 0; j < 40; j++) {
            grid.push({ id: `g${String(i).padStart(2, '0')}-${String(j).padStart(2, '0')}`, location: at(i / 10, j / 10), data: { i, j } });
          }
        }
        await store.objects.upsertMany('grid', grid, N0);
        const expectIn = (test: (i: number, j: number) => boolean): string[] =>
          grid.filter((o) => test(o.data?.i as number, o.data?.j as number)).map((o) => o.id);
        const small: Shape = { w: 0.95, n: 1.25, e: 1.25, s: 0.95 };
        const big: Shape = { w: -1, n: 3.05, e: 3.05, s: -1 };
        const smallIds = expectIn((i, j) => i >= 10 && i <= 12 && j >= 10 && j <= 12);
        const bigIds = expectIn((i, j) => i <= 30 && j <= 30);
        for (const limit of [1, 7, 100, 1000]) {
          assert.deepEqual((await listAll(store, 'grid', { limit, shape: small })).ids, smallIds);
          assert.deepEqual((await listAll(store, 'grid', { limit, shape: big })).ids, bigIds);
          assert.deepEqual(
            (await listAll(store, 'grid', { limit, shape: big, filter: filter('i>20,j<3') })).ids,
            expectIn((i, j) => i > 20 && i <= 30 && j < 3),
          );
        }
      }));
  });

  void describe('combined queries', () => {
    void it('filter, shape, limit and cursor together', () =>
      withStore(async (store) => {
        const objects: ObjectPatch[] = [];
        for (let k = 0; k < 30; k++) {
          objects.push({
            id: `c${String(k).padStart(2, '0')}`,
            label: k % 3 === 0 ? 'bus' : 'car',
            location: at(k % 2 === 0 ? 179.5 : -179.5, k - 15),
            data: { k, parity: k % 2 === 0 ? 'even' : 'odd', ...(k % 5 === 0 ? { flagged: true } : {}) },
          });
        }
        objects.push({ id: 'c99', label: 'bus', data: { k: 99, parity: 'odd' } }); // no location
        await store.objects.upsertMany('mix', objects, N0);
        // Across the antimeridian, latitudes −10..10: k = 5..25.
        const shape: Shape = { w: 179, n: 10, e: -179, s: -10 };
        const query = { shape, filter: filter('label=bus,k>6,flagged!=true') };
        // k in 7..25 with k % 3 = 0 and k % 5 ≠ 0: 9, 12, 18, 21, 24.
        for (const limit of [1, 2, 4, 10]) {
          const all = await listAll(store, 'mix', { ...query, limit });
          assert.deepEqual(all.ids, ['c09', 'c12', 'c18', 'c21', 'c24'], `limit ${limit}`);
        }
        const first = await store.objects.list('mix', { ...query, limit: 2 });
        assert.deepEqual(ids(first.items), ['c09', 'c12']);
        assert.ok(first.next !== null);
        const second = await store.objects.list('mix', { ...query, limit: 2, cursor: first.next });
        assert.deepEqual(ids(second.items), ['c18', 'c21']);
        // A cursor from one query continues any query after its id.
        const plain = await store.objects.list('mix', { limit: 2, cursor: first.next });
        assert.deepEqual(ids(plain.items), ['c13', 'c14']);
      }));

    void it('an empty or unknown realm answers every query with nothing', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('full', [{ id: 'a', label: 'Anna', location: at(0, 0), data: { x: 1 } }], N0);
        assert.deepEqual(await store.objects.list('none', { limit: 5, shape: { cx: 0, cy: 0, r: 10 } }), { items: [], next: null });
        assert.deepEqual(await store.objects.list('none', { limit: 5, filter: filter('x=1') }), { items: [], next: null });
        assert.deepEqual(await store.objects.search('none', { words: ['anna'], limit: 5 }), []);
        assert.deepEqual(await store.objects.history('none', 'a', { limit: 5, order: 'asc' }), { items: [], next: null });
      }));
  });

  void describe('search', () => {
    const objects: ObjectPatch[] = [
      { id: 's1', label: 'Tractor Zürich', data: { driver: 'Anna Müller', plate: 'ZH 1234', n: 12.5, flag: true } },
      { id: 's2', label: 'Bus', data: { note: 'tractor parts' } },
      { id: 'Traktor/3', label: null },
      { id: 's4', label: 'ÉCOLE' },
      { id: 's5', label: 'Ελληνικά ΣΟΦΟΣ', data: { city: '東京' } },
    ];
    const search = async (store: Store, words: string[], limit = 100): Promise<string[]> =>
      ids((await store.objects.search('s', { words, limit })).map((hit) => hit.object));
    const sorted = (list: string[]): string[] => [...list].sort();

    void it('every word must prefix a word of the id, label or string and number data values', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('s', objects, N0);
        await store.objects.upsertMany('s-other', [{ id: 'o1', label: 'Tractor' }], N0);
        const cases: [string[], string[]][] = [
          [['trac'], ['s1', 's2']],
          [['tractor', 'bus'], ['s2']],
          [['tractor', 'zur'], ['s1']],
          [['muller'], ['s1']],
          [['zh', '12'], ['s1']],
          [['5'], ['s1']],
          [['traktor', '3'], ['Traktor/3']],
          [['s'], ['s1', 's2', 's4', 's5']],
          [['ecole'], ['s4']],
          [['σοφοσ'], ['s5']],
          [['ελλ'], ['s5']],
          [['東京'], ['s5']],
          // Keys and booleans are not searched; a word must start the object's word.
          [['driver'], []],
          [['true'], []],
          [['ractor'], []],
          [['tractors'], []],
          [['o1'], []],
        ];
        for (const [words, expected] of cases) {
          assert.deepEqual(sorted(await search(store, words)), expected, words.join(' '));
        }
      }));

    void it('finds the words of the string leaves of nested data values, not their keys, numbers or booleans', () =>
      withStore(async (store) => {
        await store.objects.upsertMany(
          's',
          [
            { id: 'n1', data: { $hkt_icon: { color: 'Crimson', category: 'truck', filename: 'lorry.png' } } },
            { id: 'n2', data: { stops: [{ name: 'Hauptbahnhof Zürich' }, ['Flughafen'], 42, true] } },
            { id: 'n3', data: { deep: [[[[[['Tiefgarage']]]]]] } },
          ],
          N0,
        );
        const cases: [string[], string[]][] = [
          [['crim'], ['n1']],
          [['lorry', 'png'], ['n1']],
          [['zurich'], ['n2']],
          [['flugh'], ['n2']],
          [['tiefgar'], ['n3']],
          [['color'], []],
          [['hkt'], []],
          [['name'], []],
          [['42'], []],
          [['true'], []],
        ];
        for (const [words, expected] of cases) assert.deepEqual(sorted(await search(store, words)), expected, words.join(' '));
        // Replaced values are no longer found; the new ones are.
        await store.objects.upsertMany('s', [{ id: 'n1', data: { $hkt_icon: { color: 'Teal' } } }], N1);
        assert.deepEqual(await search(store, ['crim']), []);
        assert.deepEqual(await search(store, ['teal']), ['n1']);
        const [hit] = await store.objects.search('s', { words: ['teal'], limit: 10, fields: ['$hkt_icon'] });
        assert.deepEqual(hit?.object.data, { $hkt_icon: { color: 'Teal' } });
      }));

    void it('ranks better matches first, with a score that is higher for them; limit cuts', () =>
      withStore(async (store) => {
        await store.objects.upsertMany(
          's',
          [
            { id: 'r1', label: 'Tractor' },
            { id: 'r2', label: 'Harvester', data: { note: 'pulled by a tractor, not a tractor itself' } },
            { id: 'r3', label: 'Tractor tractor' },
          ],
          N0,
        );
        const hits = await store.objects.search('s', { words: ['tractor'], limit: 10 });
        assert.equal(hits.length, 3);
        for (const hit of hits) assert.ok(Number.isFinite(hit.score), `score ${hit.score}`);
        for (let i = 1; i < hits.length; i++) assert.ok((hits[i - 1]?.score ?? 0) >= (hits[i]?.score ?? 0), 'best first');
        // A label match outranks the same word in data.
        assert.equal(hits[hits.length - 1]?.object.id, 'r2');
        assert.deepEqual(await search(store, ['tractor'], 1), [hits[0]?.object.id]);
        assert.deepEqual(hits[0]?.object.data, {});
        // A projection, as for lists.
        const projected = await store.objects.search('s', { words: ['harv'], limit: 10, fields: ['note', 'x'] });
        assert.deepEqual(
          projected.map((h) => h.object),
          [{ id: 'r2', label: 'Harvester', location: null, data: { note: 'pulled by a tractor, not a tractor itself' }, seen: null }],
        );
      }));

    void it('follows updates and deletes', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('s', objects, N0);
        await store.objects.upsertMany('s', [{ id: 's4', label: 'Lycée' }], N1);
        assert.deepEqual(await search(store, ['ecole']), []);
        assert.deepEqual(await search(store, ['lycee']), ['s4']);
        await store.objects.upsertMany('s', [{ id: 's1', data: { driver: null } }], N1);
        assert.deepEqual(await search(store, ['anna']), []);
        assert.deepEqual(await search(store, ['zurich']), ['s1']);
        // A location update leaves the words as they were.
        await store.objects.upsertMany('s', [{ id: 's1', location: at(1, 1) }], N1);
        assert.deepEqual(await search(store, ['zurich']), ['s1']);
        await store.objects.delete('s', 's1', N1);
        assert.deepEqual(await search(store, ['zurich']), []);
        assert.deepEqual(await search(store, ['trac']), ['s2']);
      }));

    void it('a deleted realm is not found any more, and a new realm of that id starts empty', () =>
      withStore(async (store) => {
        await store.realms.put('s', { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N0);
        await store.objects.upsertMany('s', objects, N0);
        await store.objects.upsertMany('kept', [{ id: 'k', label: 'Tractor', location: at(0, 0) }], N0);
        assert.equal(await store.realms.delete('s'), true);
        assert.deepEqual(await search(store, ['trac']), []);
        // A write for the deleted realm (one that waited through the delete) is refused, and
        // leaves nothing; the realm created again takes writes.
        await assert.rejects(store.objects.upsertMany('s', [{ id: 'late', label: 'Tractor', location: at(0, 0) }], N1), (err: unknown) => err instanceof LocusError && err.code === 'not_found');
        await store.realms.put('s', { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N1);
        await store.objects.upsertMany('s', [{ id: 'new', label: 'Tractor', location: at(0, 0) }], N1);
        assert.deepEqual(await search(store, ['trac']), ['new']);
        assert.deepEqual(ids((await store.objects.list('s', { limit: 10, shape: { cx: 0, cy: 0, r: 10 } })).items), ['new']);
        assert.deepEqual(ids((await store.objects.list('kept', { limit: 10, shape: { cx: 0, cy: 0, r: 10 } })).items), ['k']);
        assert.deepEqual(ids((await store.objects.search('kept', { words: ['trac'], limit: 10 })).map((h) => h.object)), ['k']);
      }));
  });

  void describe('history', () => {
    async function seed(store: Store): Promise<void> {
      // Fixes out of order, over two writes; one at an equal time replaces the earlier one.
      await store.objects.upsertMany(
        'h',
        [
          { id: 'car', location: at(2, 2, T(2)) },
          { id: 'car', location: at(0, 0, T(0)) },
          { id: 'bus', location: at(9, 9, T(1)) },
          { id: 'car', location: at(4, 4, T(4)) },
        ],
        N0,
      );
      await store.objects.upsertMany(
        'h',
        [
          { id: 'car', location: at(1, 1, T(1)) },
          { id: 'car', location: at(3, 3, T(3)) },
          { id: 'car', location: { longitude: 4.5, latitude: 4.5, time: T(4), speed: 3 } },
        ],
        N1,
      );
      await store.objects.upsertMany('h2', [{ id: 'car', location: at(7, 7, T(0)) }], N0);
    }
    const times = (page: Page<HistoryEntry>): string[] => page.items.map((entry) => entry.location.time);
    const minutes = (...m: number[]): string[] => m.map(T);

    void it('returns the fixes oldest first, or newest first, within from and to (inclusive)', () =>
      withStore(async (store) => {
        await seed(store);
        const asc = await store.objects.history('h', 'car', { limit: 100, order: 'asc' });
        assert.deepEqual({ items: asc.items.map((entry) => entry.location), next: asc.next }, {
          items: [at(0, 0, T(0)), at(1, 1, T(1)), at(2, 2, T(2)), at(3, 3, T(3)), { longitude: 4.5, latitude: 4.5, time: T(4), speed: 3 }],
          next: null,
        });
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 100, order: 'desc' })), minutes(4, 3, 2, 1, 0));
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 100, order: 'asc', from: T(1), to: T(3) })), minutes(1, 2, 3));
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 100, order: 'desc', from: T(3) })), minutes(4, 3));
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 100, order: 'asc', to: '2024-05-01T10:01:59.999Z' })), minutes(0, 1));
        assert.deepEqual(times(await store.objects.history('h', 'bus', { limit: 100, order: 'asc' })), minutes(1));
        assert.deepEqual(times(await store.objects.history('h2', 'car', { limit: 100, order: 'asc' })), minutes(0));
        assert.deepEqual(await store.objects.history('h', 'nothing', { limit: 100, order: 'asc' }), { items: [], next: null });
      }));

    void it('pages with limit and cursor, in both orders and within a range', () =>
      withStore(async (store) => {
        await seed(store);
        for (const [order, range, expected] of [
          ['asc', {}, minutes(0, 1, 2, 3, 4)],
          ['desc', {}, minutes(4, 3, 2, 1, 0)],
          ['asc', { from: T(1), to: T(3) }, minutes(1, 2, 3)],
          ['desc', { from: T(1), to: T(3) }, minutes(3, 2, 1)],
        ] as const) {
          for (const limit of [1, 2, 3, 5]) {
            const got: string[] = [];
            let cursor: string | undefined;
            for (let n = 0; ; n++) {
              const page = await store.objects.history('h', 'car', { limit, order, ...range, ...(cursor === undefined ? {} : { cursor }) });
              got.push(...times(page));
              if (page.next === null) break;
              assert.equal(page.items.length, limit);
              cursor = page.next;
              assert.ok(n < 10);
            }
            assert.deepEqual(got, expected, `${order} ${JSON.stringify(range)} limit ${limit}`);
          }
        }
      }));

    void it('a malformed cursor or limit is a 400', () =>
      withStore(async (store) => {
        await seed(store);
        await assert.rejects(
          store.objects.history('h', 'car', { limit: 2, order: 'asc', cursor: 'nope' }),
          (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor',
        );
        // A list cursor is not a history cursor.
        const listCursor = (await store.objects.list('h', { limit: 1 })).next;
        assert.ok(listCursor !== null);
        await assert.rejects(
          store.objects.history('h', 'car', { limit: 2, order: 'asc', cursor: listCursor }),
          (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor',
        );
        await assert.rejects(
          store.objects.history('h', 'car', { limit: 0, order: 'asc' }),
          (err: unknown) => err instanceof LocusError && err.code === 'invalid_query',
        );
      }));

    void it('pruneHistory deletes the realm fixes older than the cut, and only those', () =>
      withStore(async (store) => {
        await seed(store);
        assert.equal(await store.objects.pruneHistory('h', T(2)), 3); // car T0, T1; bus T1
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 100, order: 'asc' })), minutes(2, 3, 4));
        assert.deepEqual(times(await store.objects.history('h', 'bus', { limit: 100, order: 'asc' })), []);
        assert.deepEqual(times(await store.objects.history('h2', 'car', { limit: 100, order: 'asc' })), minutes(0));
        // The objects themselves and their current locations stay.
        assert.deepEqual((await store.objects.get('h', 'bus'))?.location, at(9, 9, T(1)));
        assert.equal(await store.objects.pruneHistory('h', T(2)), 0);
        // A pruned current location does not come back when a newer fix replaces it; an
        // older fix written after the prune is kept (until the next one).
        await store.objects.upsertMany('h', [{ id: 'bus', location: at(8, 8, T(5)) }, { id: 'bus', location: at(7, 7, T(0)) }], N1);
        assert.deepEqual(times(await store.objects.history('h', 'bus', { limit: 100, order: 'asc' })), minutes(0, 5));
        assert.equal(await store.objects.pruneHistory('h', T(2)), 1);
        assert.deepEqual(times(await store.objects.history('h', 'bus', { limit: 100, order: 'asc' })), minutes(5));
        assert.equal(await store.objects.pruneHistory('empty', T(2)), 0);
        // An aborted prune stops before it starts.
        const aborted = new AbortController();
        aborted.abort();
        assert.equal(await store.objects.pruneHistory('h', T(9), { signal: aborted.signal }), 0);
        assert.equal(await store.objects.pruneHistory('h', T(9)), 4); // car T2, T3, T4; bus T5
      }));

    void it('pruning many objects works through all of them', () =>
      withStore(async (store) => {
        const patches: ObjectPatch[] = [];
        for (let k = 0; k < 1200; k++) {
          patches.push({ id: `o${k}`, location: at(0, 0, T(0)) }, { id: `o${k}`, location: at(1, 1, T(5)) });
        }
        await store.objects.upsertMany('many', patches, N0);
        assert.equal(await store.objects.pruneHistory('many', T(1)), 1200);
        assert.deepEqual(times(await store.objects.history('many', 'o1199', { limit: 10, order: 'asc' })), minutes(5));
      }));

    void it('deleting an object deletes its history: a new object of that id starts without', () =>
      withStore(async (store) => {
        await seed(store);
        await store.objects.delete('h', 'car', N1);
        assert.deepEqual(await store.objects.history('h', 'car', { limit: 10, order: 'asc' }), { items: [], next: null });
        await store.objects.upsertMany('h', [{ id: 'car', location: at(5, 5, T(9)) }], N1);
        assert.deepEqual(times(await store.objects.history('h', 'car', { limit: 10, order: 'asc' })), minutes(9));
      }));

    /** The label and data of each entry, oldest first. */
    const snapshots = async (store: Store, realm: string, id: string, query: { from?: string; to?: string } = {}): Promise<[string, string | null, unknown][]> =>
      (await store.objects.history(realm, id, { limit: 1000, order: 'asc', ...query })).items.map((entry) => [entry.location.time, entry.label, entry.data]);

    void it('each entry carries the label and data after the write that stored its fix (hivekit-compat 7.1)', () =>
      withStore(async (store) => {
        // compat 7.1's example: three writes, the third with only valueB; data is merged.
        await store.objects.upsertMany('s', [{ id: 'a', label: 'A', location: at(13, 52, T(0)), data: { valueA: 1 } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(14, 53, T(1)), data: { valueA: 2, valueB: 1 } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(15, 54, T(2)), data: { valueB: 2 } }], N0);
        const page = await store.objects.history('s', 'a', { limit: 10, order: 'asc' });
        assert.deepEqual(page.items, [
          { location: at(13, 52, T(0)), label: 'A', data: { valueA: 1 } },
          { location: at(14, 53, T(1)), label: 'A', data: { valueA: 2, valueB: 1 } },
          { location: at(15, 54, T(2)), label: 'A', data: { valueA: 2, valueB: 2 } },
        ]);
        // Newest first, and within a range, the same snapshots.
        const desc = await store.objects.history('s', 'a', { limit: 2, order: 'desc' });
        assert.deepEqual(desc.items.map((entry) => entry.data), [{ valueA: 2, valueB: 2 }, { valueA: 2, valueB: 1 }]);
        assert.deepEqual(await snapshots(store, 's', 'a', { from: T(1), to: T(1) }), [[T(1), 'A', { valueA: 2, valueB: 1 }]]);
      }));

    void it('a write without a location adds no entry; the next fix carries its changes', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(0)), data: { n: 1 } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', label: 'L', data: { n: 2 } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', data: { n: 3, k: 'x' } }], N0);
        assert.deepEqual(await snapshots(store, 's', 'a'), [[T(0), null, { n: 1 }]]);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(1, 1, T(1)) }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', data: { k: null } }], N0);
        assert.deepEqual(await snapshots(store, 's', 'a'), [
          [T(0), null, { n: 1 }],
          [T(1), 'L', { n: 3, k: 'x' }],
        ]);
        // Clearing the label shows in the entries after it.
        await store.objects.upsertMany('s', [{ id: 'a', label: null, location: at(2, 2, T(2)) }], N0);
        assert.deepEqual((await snapshots(store, 's', 'a')).map(([, label, data]) => [label, data]), [
          [null, { n: 1 }],
          ['L', { n: 3, k: 'x' }],
          [null, { n: 3 }],
        ]);
      }));

    void it('an older fix written later carries the data after its own write; an equal time replaces fix and data', () =>
      withStore(async (store) => {
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(5)), data: { v: 'five' } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(1)), data: { v: 'late' } }], N0);
        assert.deepEqual(await snapshots(store, 's', 'a'), [
          [T(1), null, { v: 'late' }],
          [T(5), null, { v: 'five' }],
        ]);
        // The current location (T5) stays; its entry keeps the data of its write.
        assert.deepEqual((await store.objects.get('s', 'a'))?.data, { v: 'late' });
        await store.objects.upsertMany('s', [{ id: 'a', location: at(9, 9, T(5)), data: { v: 'again' } }], N0);
        assert.deepEqual(await snapshots(store, 's', 'a'), [
          [T(1), null, { v: 'late' }],
          [T(5), null, { v: 'again' }],
        ]);
      }));

    void it('the fixes of one batch carry the data after the whole batch', () =>
      withStore(async (store) => {
        await store.objects.upsertMany(
          's',
          [
            { id: 'a', location: at(0, 0, T(0)), data: { x: 1 } },
            { id: 'a', location: at(1, 1, T(1)), data: { y: 2 } },
            { id: 'b', location: at(1, 1, T(1)) },
          ],
          N0,
        );
        assert.deepEqual(await snapshots(store, 's', 'a'), [
          [T(0), null, { x: 1, y: 2 }],
          [T(1), null, { x: 1, y: 2 }],
        ]);
        assert.deepEqual(await snapshots(store, 's', 'b'), [[T(1), null, {}]]);
      }));

    void it('many writes, data changing or not: every entry keeps its own snapshot', () =>
      withStore(async (store) => {
        const expected: [string, string | null, unknown][] = [];
        for (let m = 0; m < 40; m++) {
          // Data changes at every third write only; the label at the tenth.
          const data = m % 3 === 0 ? { step: m, kind: 'van' } : undefined;
          const label = m === 10 ? 'ten' : undefined;
          await store.objects.upsertMany('s', [{ id: 'a', location: at(m / 10, 0, T(m)), ...(data === undefined ? {} : { data }), ...(label === undefined ? {} : { label }) }], N0);
          expected.push([T(m), m >= 10 ? 'ten' : null, { step: m - (m % 3), kind: 'van' }]);
        }
        assert.deepEqual(await snapshots(store, 's', 'a'), expected);
        // Pages through cursors see the same.
        const got: unknown[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await store.objects.history('s', 'a', { limit: 7, order: 'desc', ...(cursor === undefined ? {} : { cursor }) });
          got.push(...page.items.map((entry) => [entry.location.time, entry.label, entry.data]));
          if (page.next === null) break;
          cursor = page.next;
        }
        assert.deepEqual(got, [...expected].reverse());
      }));

    void it('large data changing with every fix: every entry keeps its own', () =>
      withStore(async (store) => {
        const note = (m: number): string => `${'n'.repeat(700)}${m}`;
        for (let m = 0; m < 30; m++) await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(m)), data: { note: note(m), m } }], N0);
        assert.deepEqual(await snapshots(store, 's', 'a'), Array.from({ length: 30 }, (_, m) => [T(m), null, { note: note(m), m }]));
        assert.equal(await store.objects.pruneHistory('s', T(25)), 25);
        assert.deepEqual(await snapshots(store, 's', 'a'), Array.from({ length: 5 }, (_, i) => [T(25 + i), null, { note: note(25 + i), m: 25 + i }]));
      }));

    void it('retention keeps the snapshots of the fixes it keeps', () =>
      withStore(async (store) => {
        for (let m = 0; m < 20; m++) {
          await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(m)), data: { m } }, { id: 'b', location: at(0, 0, T(m)), data: { same: true } }], N0);
        }
        assert.equal(await store.objects.pruneHistory('s', T(12)), 24);
        const kept = await snapshots(store, 's', 'a');
        assert.deepEqual(kept, Array.from({ length: 8 }, (_, i) => [T(12 + i), null, { m: 12 + i }]));
        assert.deepEqual((await snapshots(store, 's', 'b')).map(([, , data]) => data), Array.from({ length: 8 }, () => ({ same: true })));
        // Writes after a prune still snapshot as before.
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(30)), data: { m: 30 } }], N0);
        await store.objects.upsertMany('s', [{ id: 'a', data: { m: 31 } }], N0);
        assert.deepEqual((await snapshots(store, 's', 'a', { from: T(19) })).map(([, , data]) => data), [{ m: 19 }, { m: 30 }]);
      }));

    void it('an object deleted and written again, or a realm deleted, starts without old snapshots', () =>
      withStore(async (store) => {
        await store.realms.put('s', { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N0);
        for (let m = 0; m < 12; m++) await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(m)), data: { m } }], N0);
        await store.objects.delete('s', 'a', N1);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(0)), data: { fresh: 1 } }], N1);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(1)), data: { fresh: 2 } }], N1);
        assert.deepEqual(await snapshots(store, 's', 'a'), [
          [T(0), null, { fresh: 1 }],
          [T(1), null, { fresh: 2 }],
        ]);
        assert.equal(await store.realms.delete('s'), true);
        await store.realms.put('s', { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N1);
        await store.objects.upsertMany('s', [{ id: 'a', location: at(0, 0, T(3)) }], N1);
        assert.deepEqual(await snapshots(store, 's', 'a'), [[T(3), null, {}]]);
      }));
  });
}
