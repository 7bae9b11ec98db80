/**
 * Object data is stored as JSONB (schema.ts version 5) and read back with json(): every
 * read must give exactly what JSON.parse made of the JSON text before, on every path
 * that turns a row into an object (get, lists with and without a projection, search,
 * the old object of a write and of a delete) and after every kind of update (new data,
 * a location or label only, where the stored JSONB is kept as it is).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Data, ObjectPatch, TrackedObject } from '../../internal/domain/types.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:00:01.000Z';

const stores: SqliteStore[] = [];
const dirs: string[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function open(path = ':memory:'): SqliteStore {
  const store = openSqliteStore(path);
  stores.push(store);
  return store;
}

function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'locus-data-'));
  dirs.push(dir);
  return join(dir, 'locus.db');
}

/** The stored bytes of an object's data, read through a second connection. */
function storedData(path: string, id: string): unknown {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[string], unknown>('SELECT data FROM objects WHERE id = ?').pluck().get(id);
  } finally {
    db.close();
  }
}

/** What the store gave back before data was JSONB: JSON.parse of the JSON text written. */
const viaText = (data: Data): Data => JSON.parse(JSON.stringify(data)) as Data;

/** deepStrictEqual (numbers by SameValue: -0 is not 0) and the same key order. */
function assertSameData(actual: Data | undefined, expected: Data, what: string): void {
  assert.ok(actual !== undefined, what);
  assert.deepStrictEqual(actual, expected, what);
  assert.deepEqual(Object.keys(actual), Object.keys(expected), `${what}: key order`);
  assert.equal(Object.getPrototypeOf(actual), Object.prototype, `${what}: prototype`);
}

/** Data with an own `__proto__` key, built as JSON.parse and mergeData build it. */
const withProto = (entries: [string, Data[string]][]): Data => Object.fromEntries<Data[string]>(entries);

const EDGE: Record<string, Data> = {
  numbers: { a: 1e21, b: 2 ** 60 + 256, c: -0, d: 0.1, e: 5e-324, f: -1.7976931348623157e308, g: 1e-7, h: 2 ** 53 + 1, i: -1, j: 123.456e-10 },
  keys: withProto([['z', 1], ['__proto__', 'p'], ['a', 2], ['10', 3], ['2', 4], ['', 5], ['k"e\\y', 6], ['ключ', 7], ['a.b', 8]]),
  strings: {
    lone: '\ud800',
    loneLow: 'a\udc00b',
    pair: '😀 Zoë',
    separators: '\u2028\u2029',
    controls: '"\\\n\t\u0000\u001f\u007f',
    quote: "'/",
    json: '{"a":1}',
    empty: '',
    big: 'x'.repeat(10_000),
  },
  values: { t: true, f: false, s: '1', x: 0, y: '0', z: 'null' },
  empty: {},
};

function readsOf(store: SqliteStore, realm: string, id: string): Promise<[string, TrackedObject | undefined][]> {
  return Promise.all([
    store.objects.get(realm, id).then((o): [string, TrackedObject | undefined] => ['get', o ?? undefined]),
    store.objects.list(realm, { limit: 10_000 }).then((p): [string, TrackedObject | undefined] => ['list', p.items.find((o) => o.id === id)]),
    store.objects
      .list(realm, { limit: 10_000, shape: { cx: 1, cy: 1, r: 1000 } })
      .then((p): [string, TrackedObject | undefined] => ['list in shape', p.items.find((o) => o.id === id)]),
  ]);
}

void describe('sqlite store: object data as JSONB', () => {
  void it('reads back exactly what JSON.parse of the JSON text gave, on every read path', async () => {
    const store = open();
    const at = { longitude: 1, latitude: 1, time: T0 };
    await store.objects.upsertMany('acme', Object.entries(EDGE).map(([id, data]): ObjectPatch => ({ id, label: 'Edge', location: at, data })), N0);
    for (const [id, data] of Object.entries(EDGE)) {
      const expected = viaText(data);
      for (const [how, obj] of await readsOf(store, 'acme', id)) assertSameData(obj?.data, expected, `${id} by ${how}`);
      // A projection keeps the named fields, in the order asked for.
      const fields = Object.keys(expected).reverse().slice(0, 3).concat('missing');
      const projected = (await store.objects.list('acme', { limit: 10_000, fields })).items.find((o) => o.id === id);
      assertSameData(projected?.data, Object.fromEntries(fields.filter((f) => Object.hasOwn(expected, f)).map((f) => [f, expected[f]])) as Data, `${id} projected`);
      const hits = await store.objects.search('acme', { words: ['edge'], limit: 100 });
      assertSameData(hits.find((h) => h.object.id === id)?.object.data, expected, `${id} by search`);
    }
    assert.equal(Object.is((await store.objects.get('acme', 'numbers'))?.data.c, 0), true, '-0 comes back as JSON.stringify wrote it: 0');
  });

  void it('updates: new data is written, unchanged data keeps the stored JSONB, old objects read right', async () => {
    const path = freshPath();
    const store = open(path);
    const written = withProto([['z', 1], ['__proto__', 'p'], ['a', 2], ['word', 'zebra'], ['s', '\ud800']]);
    const data = viaText(written);
    await store.objects.upsertMany('acme', [{ id: 'o', label: 'Giraffe', data: written }], N0);
    const stored = (): Buffer => {
      const value = storedData(path, 'o');
      assert.ok(Buffer.isBuffer(value), 'data is a JSONB blob');
      return value;
    };
    const before = stored();

    // Location only, then label only: data is not rewritten, the change's old object is right.
    const moved = await store.objects.upsertMany('acme', [{ id: 'o', location: { longitude: 1, latitude: 1, time: T1 } }], N1);
    assertSameData(moved[0]?.old?.data, data, 'old object of a location update');
    assert.ok(stored().equals(before), 'location update keeps the stored JSONB');
    const relabelled = await store.objects.upsertMany('acme', [{ id: 'o', label: 'Okapi' }], N1);
    assertSameData(relabelled[0]?.new?.data, data, 'new object of a label update');
    assert.ok(stored().equals(before), 'label update keeps the stored JSONB');
    // The full-text entry was rewritten from the data text as read (a data word still finds it).
    assert.deepEqual((await store.objects.search('acme', { words: ['okapi', 'zebra'], limit: 10 })).map((h) => h.object.id), ['o']);
    for (const [how, obj] of await readsOf(store, 'acme', 'o')) assertSameData(obj?.data, data, `after updates, by ${how}`);

    // New data: merged, written, read back in the merged order.
    const changed = await store.objects.upsertMany('acme', [{ id: 'o', data: { a: null, y: '\udfff', z: 2 } }], N1);
    const merged = viaText(changed[0]?.new?.data ?? {});
    assert.deepEqual(Object.keys(merged), ['z', '__proto__', 'word', 's', 'y']);
    assertSameData((await store.objects.get('acme', 'o'))?.data, merged, 'merged data');
    assert.ok(!stored().equals(before), 'new data is written as JSONB');
    const deleted = await store.objects.delete('acme', 'o', N1);
    assertSameData(deleted?.old?.data, merged, 'old object of a delete');
  });

  void it('any data written reads back as JSON.parse of its JSON text (property)', async () => {
    const store = open();
    const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n)) }));
    // No null: a null in a write removes the key.
    const value = fc.oneof(text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean());
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.dictionary(text, value, { maxKeys: 6 }), { minLength: 1, maxLength: 20 }), async (datas) => {
        const realm = `r${round++}`;
        const patches = datas.map((data, i): ObjectPatch => ({ id: `o${i}`, data }));
        await store.objects.upsertMany(realm, patches, N0);
        const items = (await store.objects.list(realm, { limit: 10_000 })).items;
        for (const [i, data] of datas.entries()) {
          const expected = viaText(data);
          assertSameData(items.find((o) => o.id === `o${i}`)?.data, expected, `o${i}`);
        }
      }),
      { numRuns: 150 },
    );
  });

  void it('writes JSONB that SQLite reads as the JSON text written', () => {
    // The conversion both ways, alone: json(jsonb(text)) is the text, byte for byte.
    const db = new Database(':memory:');
    try {
      const roundTrip = db.prepare<[string], string>('SELECT json(jsonb(?))').pluck();
      for (const data of Object.values(EDGE)) {
        const json = JSON.stringify(data);
        assert.equal(roundTrip.get(json), json);
      }
    } finally {
      db.close();
    }
  });
});
