import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { configure, SCHEMA_VERSION, WAL_SIZE_LIMIT_BYTES } from '../../internal/store/sqlite/schema.js';
import { LocusError } from '../../internal/errors.js';
import { compareCodePoints, parseFilter } from '../../internal/domain/filter.js';
import type { Data, ObjectPatch, Shape } from '../../internal/domain/types.js';
import { storeContract } from '../contract/store-contract.js';
import { decodeCursor, encodeCursor } from '../../internal/store/cursor.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { decodePast, type StoredFix } from '../../internal/store/sqlite/history-rows.js';
import { chunkPageSql, PRUNE_CHUNKS_SQL } from '../../internal/store/sqlite/history-chunks.js';
import { type ObjectStoreOptions } from '../../internal/store/sqlite/object-store.js';
import { SNAPSHOT_BUFFER_CHARS } from '../../internal/store/sqlite/snapshot-buffer.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:00:01.000Z';
const T2 = '2024-05-01T10:00:02.000Z';
const T3 = '2024-05-01T10:00:03.000Z';
const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A path for a new database file in a fresh temporary directory. */
function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'locus-sqlite-'));
  dirs.push(dir);
  return join(dir, 'locus.db');
}

/** Reads the file through a second, independent connection. */
function inspect<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

interface HistoryRow {
  realm: string | null;
  object_id: string | null;
  time: string;
  location: string;
}

interface RawFix {
  realm: string | null;
  object_id: string | null;
  orow: number;
  time: number;
  lon: number;
  lat: number;
  altitude: number | null;
  speed: number | null;
  heading: number | null;
  accuracy: number | null;
  altitude_accuracy: number | null;
}

/**
 * The stored past fixes as they are, with their object's realm and id (null: no such
 * object): the rows of `history` (schema version 7) and the fixes the object rows hold
 * (`past`, version 8), which replace a row of an equal time. Sorted by realm, id, time.
 */
function rawFixes(path: string): RawFix[] {
  // + 0: JSON text, as the fixes were read before version 10, does not keep a -0 either.
  const plus = (value: number | null): number | null => (value === null ? null : value + 0);
  const raw = (realm: string | null, id: string | null, orow: number, fix: StoredFix): RawFix => {
    const [time, lon, lat, altitude, speed, heading, accuracy, altitudeAccuracy] = fix;
    return {
      realm,
      object_id: id,
      orow,
      time,
      lon: lon + 0,
      lat: lat + 0,
      altitude: plus(altitude),
      speed: plus(speed),
      heading: plus(heading),
      accuracy: plus(accuracy),
      altitude_accuracy: plus(altitudeAccuracy),
    };
  };
  return inspect(path, (db) => {
    const fixes = new Map<string, RawFix>();
    const chunks = db
      .prepare<[], [number, number, number, number, Buffer, string | null, string | null]>(
        'SELECT h.orow, h.last, h.first, h.n, h.fixes, o.realm, o.id FROM history h LEFT JOIN objects o ON o.rowid = h.orow ORDER BY h.orow, h.last',
      )
      .raw(true)
      .all();
    for (const [orow, last, first, n, blob, realm, id] of chunks) {
      const held = decodePast(blob);
      // A chunk (schema version 10): its fixes in time order, its key and columns true.
      assert.equal(held.length, n, 'a chunk counts its fixes');
      assert.deepEqual([held[0]?.[0], held.at(-1)?.[0]], [first, last], 'a chunk knows its first and last times');
      for (let i = 1; i < held.length; i++) assert.ok((held[i]?.[0] ?? 0) > (held[i - 1]?.[0] ?? 0), 'a chunk holds its fixes in time order');
      for (const fix of held) {
        const key = `${orow}@${fix[0]}`;
        assert.ok(!fixes.has(key), 'one stored fix per object and time');
        fixes.set(key, raw(realm, id, orow, fix));
      }
    }
    // The fixes the object rows hold (version 8) replace stored ones of an equal time.
    const rows = db.prepare<[], [number, string, string, Uint8Array]>('SELECT rowid, realm, id, past FROM objects WHERE past IS NOT NULL').raw(true).all();
    for (const [orow, realm, id, past] of rows) for (const fix of decodePast(past)) fixes.set(`${orow}@${fix[0]}`, raw(realm, id, orow, fix));
    const text = (value: string | null): string => value ?? '';
    return [...fixes.values()].sort(
      (a, b) => compareCodePoints(text(a.realm), text(b.realm)) || compareCodePoints(text(a.object_id), text(b.object_id)) || a.time - b.time,
    );
  });
}

/** The stored past fixes, each with its time as text and the fix as JSON (keys in the order of a location). */
function historyRows(path: string): HistoryRow[] {
  return rawFixes(path).map((row) => {
    const time = new Date(row.time).toISOString();
    const fix: Record<string, number | string> = { longitude: row.lon, latitude: row.lat };
    const optional = [['altitude', row.altitude], ['speed', row.speed], ['heading', row.heading], ['accuracy', row.accuracy], ['altitudeAccuracy', row.altitude_accuracy]] as const;
    for (const [key, value] of optional) if (value !== null) fix[key] = value;
    fix.time = time;
    return { realm: row.realm, object_id: row.object_id, time, location: JSON.stringify(fix) };
  });
}

/**
 * A store on a new file, once its full-text indexer has made its first pass (which indexes
 * every row there): the test's writes then reach the index through the queue, as a running
 * server's do, and not through that pass.
 */
async function openIndexed(path: string, options: ObjectStoreOptions = {}): Promise<SqliteStore> {
  const store = openSqliteStore(path, options);
  await store.objects.indexed();
  return store;
}

async function withFile(body: (store: SqliteStore, path: string) => Promise<void>, options: ObjectStoreOptions = {}): Promise<void> {
  const path = freshPath();
  const store = await openIndexed(path, options);
  try {
    await body(store, path);
  } finally {
    await store.close();
  }
}

storeContract('sqlite', () => openIndexed(freshPath()));

void describe('sqlite store', () => {
  void it('keeps its data when the file is closed and opened again', async () => {
    const path = freshPath();
    const first = openSqliteStore(path);
    await first.realms.put('acme', SETTINGS, N0);
    await first.tokens.create({ id: 't1', realm: 'acme', hash: 'h1', scope: 'write', created: N0 });
    await first.objects.upsertMany(
      'acme',
      [{ id: 'vehicle/17', label: 'Truck', location: { longitude: 8.5, latitude: 47.4, time: T1 }, data: { load: 3 } }],
      N0,
    );
    await first.areas.create('acme', { id: 'yard', label: null, shape: { w: 8, n: 48, e: 9, s: 47 }, data: {} });
    await first.close();
    // The WAL was checkpointed into the main file and removed on close.
    assert.equal(existsSync(`${path}-wal`), false);

    const second = openSqliteStore(path);
    try {
      assert.deepEqual(await second.realms.get('acme'), { id: 'acme', tenant: 'default', name: 'acme', label: null, data: {}, settings: SETTINGS, created: N0 });
      assert.deepEqual(await second.tokens.findByHash('h1'), { id: 't1', realm: 'acme', hash: 'h1', scope: 'write', created: N0 });
      assert.deepEqual(await second.objects.get('acme', 'vehicle/17'), {
        id: 'vehicle/17',
        label: 'Truck',
        location: { longitude: 8.5, latitude: 47.4, time: T1 },
        data: { load: 3 },
        seen: N0,
      });
      assert.deepEqual(await second.areas.get('acme', 'yard'), {
        id: 'yard',
        label: null,
        shape: { w: 8, n: 48, e: 9, s: 47 },
        data: {},
      });
      // The older-fix rule holds across a reopen.
      await second.objects.upsertMany('acme', [{ id: 'vehicle/17', location: { longitude: 0, latitude: 0, time: T0 } }], N1);
      assert.deepEqual((await second.objects.get('acme', 'vehicle/17'))?.location, { longitude: 8.5, latitude: 47.4, time: T1 });
    } finally {
      await second.close();
    }
  });

  void it('after an import of new objects, a batch that holds existing ones writes them as updates (their rows read then)', () =>
    withFile(async (store) => {
      const at = (time: string, longitude = 1): { longitude: number; latitude: number; time: string } => ({ longitude, latitude: 2, time });
      const ids = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
      // An import: new objects only, so the next batches are guessed new.
      await store.objects.upsertMany('acme', ids('a', 100).map((id, n): ObjectPatch => ({ id, label: 'A', location: at(T0), data: { n } })), N0);
      // Half of this batch exists (and is not held in memory: new objects are not).
      const batch: ObjectPatch[] = [
        ...ids('a', 50).map((id): ObjectPatch => ({ id, location: at(T1, 3), data: { m: 1 } })),
        ...ids('b', 50).map((id): ObjectPatch => ({ id, label: 'B', location: at(T1) })),
      ];
      for (const round of [1, 2]) {
        const changes = await store.objects.upsertMany('acme', round === 1 ? batch : batch.map((p) => ({ ...p, location: at(T2, 4) })), N1);
        const a7 = changes.find((c) => c.id === 'a7');
        assert.deepEqual(a7?.old?.data, round === 1 ? { n: 7 } : { n: 7, m: 1 }, `round ${round}: the old state is the stored one`);
        assert.deepEqual(changes.find((c) => c.id === 'b7')?.old?.label, round === 1 ? undefined : 'B');
        assert.equal(changes.length, 100);
      }
      assert.deepEqual(await store.objects.get('acme', 'a7'), { id: 'a7', label: 'A', location: at(T2, 4), data: { n: 7, m: 1 }, seen: N1 });
      assert.deepEqual((await store.objects.history('acme', 'a7', { limit: 10, order: 'asc' })).items.map((e) => e.location), [at(T0), at(T1, 3), at(T2, 4)]);
      assert.deepEqual((await store.objects.history('acme', 'b7', { limit: 10, order: 'asc' })).items.map((e) => e.location), [at(T1), at(T2, 4)]);
      assert.equal((await store.objects.list('acme', { limit: 1000 })).items.length, 150);
      // After another import, a small batch of existing objects (not held) is written right too.
      await store.objects.upsertMany('acme', ids('c', 100).map((id): ObjectPatch => ({ id, data: { n: 1 } })), N1);
      const small = await store.objects.upsertMany('acme', ids('c', 3).map((id): ObjectPatch => ({ id, data: { m: 2 } })), N1);
      assert.deepEqual(small.map((c) => c.old?.data), [{ n: 1 }, { n: 1 }, { n: 1 }]);
      assert.deepEqual((await store.objects.get('acme', 'c2'))?.data, { n: 1, m: 2 });
    }));

  void it('refuses a write for a realm it deleted (one that waited through the delete) until the realm exists again', () =>
    withFile(async (store, path) => {
      const at = { longitude: 1, latitude: 2, time: T0 };
      await store.realms.put('gone', SETTINGS, N0);
      await store.objects.upsertMany('gone', [{ id: 'a', location: at }], N0);
      assert.equal(await store.realms.delete('gone'), true);
      await assert.rejects(store.objects.upsertMany('gone', [{ id: 'late', location: at }], N1), (err: unknown) => err instanceof LocusError && err.code === 'not_found');
      const rows = (): number => inspect(path, (db) => db.prepare<[], number>("SELECT count(*) FROM objects WHERE realm = 'gone'").pluck().get() ?? 0);
      const keys = (): number => inspect(path, (db) => db.prepare<[], number>("SELECT count(*) FROM realm_keys WHERE realm = 'gone'").pluck().get() ?? 0);
      assert.equal(rows(), 0);
      assert.equal(keys(), 0);
      // Created again, it takes writes.
      await store.realms.put('gone', SETTINGS, N1);
      await store.objects.upsertMany('gone', [{ id: 'b', location: at }], N1);
      assert.deepEqual((await store.objects.list('gone', { limit: 10 })).items.map((o) => o.id), ['b']);
    }));

  void it('runs in WAL mode with the schema version set', () =>
    withFile(async (store, path) => {
      await store.ping();
      assert.equal(inspect(path, (db) => db.pragma('journal_mode', { simple: true })), 'wal');
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      // A connection configured as the store's cuts its WAL back to 128 MiB when rewound.
      const raw = new Database(path);
      configure(raw);
      assert.equal(raw.pragma('journal_size_limit', { simple: true }), WAL_SIZE_LIMIT_BYTES);
      raw.close();
      const tables = (file: string): string[] =>
        inspect(file, (db) =>
          db
            .prepare<[], { name: string }>(
              "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'object\\_%\\_%' ESCAPE '\\' ORDER BY name",
            )
            .all(),
        ).map((row) => row.name);
      assert.deepEqual(tables(path), [
        'areas',
        'history',
        'instruction_members',
        'instruction_pending',
        'instructions',
        'objects',
        'realm_keys',
        'realms',
        'search_queue',
        'search_source',
        'signing_keys',
        'snapshots',
        'sqlite_sequence',
        'tenants',
        'tokens',
      ]);
      // The full-text index lives in a file of its own, made by the indexer's thread.
      await store.objects.indexed();
      assert.deepEqual(tables(`${path}-search`), ['object_fts', 'search_state']);
      assert.equal(inspect(`${path}-search`, (db) => db.pragma('journal_mode', { simple: true })), 'wal');
    }));

  void it('the checkpointer keeps the WAL rewinding while a writer commits every 10 ms', () =>
    withFile(async (store, path) => {
      // The WAL header's checkpoint sequence number (bytes 12–15) goes up each time the WAL
      // is rewound, which SQLite does only when a write begins with every frame copied.
      const rewinds = (): number => readFileSync(`${path}-wal`).readUInt32BE(12);
      await store.objects.upsertMany('acme', [{ id: 'x', location: { longitude: 1, latitude: 1, time: T0 } }], N0);
      const before = rewinds();
      // Pauses of 10 ms: a pass (which syncs the file) can end in one.
      for (let i = 0; i < 100; i++) {
        await store.objects.upsertMany('acme', [{ id: `o${i % 20}`, location: { longitude: i / 100, latitude: 1, time: T1 } }], N1);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(rewinds() > before, `the WAL was rewound (sequence ${before} → ${rewinds()})`);
    }));

  void it('opens an existing database again without touching its schema version', async () => {
    const path = freshPath();
    await openSqliteStore(path).close();
    const again = openSqliteStore(path);
    await again.ping();
    await again.close();
    assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
  });

  void it('migrates a version 13 file (version 14: objects.tasks added, NULL): existing objects read without task ids and take them', async () => {
    const path = freshPath();
    const first = openSqliteStore(path);
    await first.realms.put('acme', SETTINGS, N0);
    await first.objects.upsertMany('acme', [{ id: 'car', label: 'Car', location: { longitude: 1, latitude: 2, time: T0 }, data: { fuel: 1 } }], N0);
    await first.close();
    // Back to version 13 as released: no tasks column.
    const raw = new Database(path);
    raw.exec('ALTER TABLE objects DROP COLUMN tasks; PRAGMA user_version = 13;');
    raw.close();
    const store = openSqliteStore(path);
    try {
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      assert.deepEqual(
        inspect(path, (db) => db.prepare<[], { name: string; type: string }>("SELECT name, type FROM pragma_table_info('objects') WHERE name = 'tasks'").all()),
        [{ name: 'tasks', type: 'TEXT' }],
      );
      const car = { id: 'car', label: 'Car', location: { longitude: 1, latitude: 2, time: T0 }, data: { fuel: 1 }, seen: N0 };
      assert.deepEqual(await store.objects.get('acme', 'car'), car);
      assert.deepEqual((await store.objects.list('acme', { limit: 10 })).items, [car]);
      await store.objects.upsertMany('acme', [{ id: 'car', tasks: ['t1'] }], N1);
      assert.deepEqual(await store.objects.get('acme', 'car'), { ...car, tasks: ['t1'] });
      assert.deepEqual(inspect(path, (db) => db.prepare<[], string | null>('SELECT tasks FROM objects').pluck().all()), ['["t1"]']);
    } finally {
      await store.close();
    }
  });

  void it('migrates a version 14 file (version 15: history chunks appended, found by an index): every stored fix reads the same', async () => {
    const path = freshPath();
    const fix = (i: number): { longitude: number; latitude: number; time: string } => ({
      longitude: i / 10,
      latitude: 1,
      time: new Date(Date.parse(T0) + i * 1000).toISOString(),
    });
    const first = openSqliteStore(path, { pastBuffer: 2, chunks: { span: 5_000, fixes: 3 } });
    await first.realms.put('acme', SETTINGS, N0);
    for (let i = 0; i < 30; i++) await first.objects.upsertMany('acme', [{ id: 'car', location: fix(i) }, { id: `o${i % 3}`, location: fix(i) }], N0);
    const before = await first.objects.history('acme', 'car', { limit: 100, order: 'asc' });
    const chunks = inspect(path, (db) => db.prepare<[], number>('SELECT count(*) FROM history').pluck().get());
    const stored = historyRows(path);
    await first.close();
    assert.ok((chunks ?? 0) > 10, `the history holds chunks (${String(chunks)})`);
    // Back to version 14 as released: chunks clustered by (orow, last).
    const raw = new Database(path);
    raw.exec(`
      CREATE TABLE history_v14 (orow INTEGER NOT NULL, last INTEGER NOT NULL, first INTEGER NOT NULL, n INTEGER NOT NULL, fixes BLOB NOT NULL, PRIMARY KEY (orow, last)) WITHOUT ROWID;
      INSERT INTO history_v14 SELECT orow, last, first, n, fixes FROM history;
      DROP TABLE history;
      ALTER TABLE history_v14 RENAME TO history;
      PRAGMA user_version = 14;
    `);
    raw.close();
    const store = openSqliteStore(path, { pastBuffer: 2, chunks: { span: 5_000, fixes: 3 } });
    try {
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      const indexes = inspect(path, (db) => db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'history'").pluck().all());
      assert.deepEqual(indexes, ['history_by_object']);
      // A rowid table now: appended in the order of the chunks' last times.
      const order = inspect(path, (db) => db.prepare<[], number>('SELECT last FROM history ORDER BY rowid').pluck().all());
      assert.deepEqual(order, [...order].sort((a, b) => a - b));
      assert.equal(inspect(path, (db) => db.prepare<[], number>('SELECT count(*) FROM history').pluck().get()), chunks);
      assert.deepEqual(historyRows(path), stored);
      assert.deepEqual(await store.objects.history('acme', 'car', { limit: 100, order: 'asc' }), before);
      // Writes go on: a late fix rewrites the chunk holding its time.
      await store.objects.upsertMany('acme', [{ id: 'car', location: { ...fix(3), longitude: 9 } }, { id: 'car', location: fix(31) }], N1);
      const after = await store.objects.history('acme', 'car', { limit: 100, order: 'asc' });
      assert.equal(after.items.find((entry) => entry.location.time === fix(3).time)?.location.longitude, 9);
      assert.equal(after.items.length, before.items.length + 1);
    } finally {
      await store.close();
    }
  });

  void it('a tracker writes no task ids: the column stays NULL; [] stores NULL, never an empty array', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'a', location: { longitude: 1, latitude: 1, time: T0 } }, { id: 'b', tasks: ['t'] }], N0);
      await store.objects.upsertMany('acme', [{ id: 'a', location: { longitude: 2, latitude: 1, time: T1 } }, { id: 'b', tasks: [] }], N1);
      await store.objects.upsertMany('acme', [{ id: 'c', tasks: [] }], N1);
      assert.deepEqual(inspect(path, (db) => db.prepare<[], [string, string | null]>('SELECT id, tasks FROM objects ORDER BY id').raw(true).all()), [
        ['a', null],
        ['b', null],
        ['c', null],
      ]);
    }));

  void it('refuses a database written by a newer schema version', () => {
    const path = freshPath();
    const db = new Database(path);
    db.pragma('user_version = 99');
    db.close();
    assert.throws(() => openSqliteStore(path), /schema version 99/);
  });

  void it('ping fails with unavailable once closed; closing twice is harmless', async () => {
    const store = openSqliteStore(':memory:');
    await store.ping();
    await store.close();
    await store.close();
    await assert.rejects(store.ping(), (err: unknown) => err instanceof LocusError && err.code === 'unavailable');
  });

  void it('rejects a page limit outside 1..10000', () =>
    withFile(async (store) => {
      const isInvalidQuery = (err: unknown) => err instanceof LocusError && err.code === 'invalid_query';
      for (const limit of [0, -1, 1.5, 10_001, Number.NaN]) {
        await assert.rejects(store.objects.list('acme', { limit }), isInvalidQuery, String(limit));
        await assert.rejects(store.areas.list('acme', { limit }), isInvalidQuery, String(limit));
      }
      assert.deepEqual(await store.objects.list('acme', { limit: 10_000 }), { items: [], next: null });
    }));

  void it('an error in the middle of upsertMany leaves the database unchanged', () =>
    withFile(async (store, path) => {
      // A past fix (T0, in history) and the current one (T1, in the row).
      await store.objects.upsertMany(
        'acme',
        [
          { id: 'a', location: { longitude: 0, latitude: 0, time: T0 } },
          { id: 'a', label: 'A', location: { longitude: 1, latitude: 1, time: T1 }, data: { n: 1 } },
        ],
        N0,
      );
      const before = historyRows(path);

      // The third object's data cannot be serialised: the first two were already written
      // in the transaction (and a's T1 fix moved to history).
      const unserialisable = { big: 10n } as unknown as Data;
      const patches: ObjectPatch[] = [
        { id: 'a', label: 'A2', location: { longitude: 2, latitude: 2, time: T2 }, data: { n: 2 } },
        { id: 'b', label: 'B', location: { longitude: 3, latitude: 3, time: T1 } },
        { id: 'c', data: unserialisable },
      ];
      await assert.rejects(store.objects.upsertMany('acme', patches, N1), (err: unknown) => err instanceof LocusError && err.code === 'internal');

      assert.deepEqual(await store.objects.get('acme', 'a'), {
        id: 'a',
        label: 'A',
        location: { longitude: 1, latitude: 1, time: T1 },
        data: { n: 1 },
        seen: N0,
      });
      assert.equal(await store.objects.get('acme', 'b'), null);
      assert.equal(await store.objects.get('acme', 'c'), null);
      assert.deepEqual(historyRows(path), before);
      assert.equal(before.length, 1);
      assert.deepEqual((await store.objects.history('acme', 'a', { limit: 10, order: 'asc' })).items.map((e) => e.location.time), [T0, T1]);
      // And the store still works.
      await store.objects.upsertMany('acme', [{ id: 'b', label: 'B' }], N1);
      assert.equal((await store.objects.get('acme', 'b'))?.label, 'B');
    }));

  void it('history holds every past fix of a bulk, the current one is the row; equal times keep the later one', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany(
        'acme',
        [
          { id: 'x', location: { longitude: 1, latitude: 1, time: T1 } },
          { id: 'x', location: { longitude: 2, latitude: 2, time: T0 } },
          { id: 'x', location: { longitude: 3, latitude: 3, time: T1, speed: 4 } },
          { id: 'y', location: { longitude: 9, latitude: 9, time: T2 } },
        ],
        N0,
      );
      await store.objects.upsertMany('other', [{ id: 'x', location: { longitude: 5, latitude: 5, time: T0 } }], N0);
      assert.deepEqual(
        historyRows(path).map((row) => [row.realm, row.object_id, row.time, JSON.parse(row.location) as unknown]),
        [['acme', 'x', T0, { longitude: 2, latitude: 2, time: T0 }]],
      );
      const history = async (realm: string, id: string): Promise<unknown[]> => (await store.objects.history(realm, id, { limit: 10, order: 'asc' })).items.map((e) => e.location);
      assert.deepEqual(await history('acme', 'x'), [
        { longitude: 2, latitude: 2, time: T0 },
        { longitude: 3, latitude: 3, time: T1, speed: 4 },
      ]);
      assert.deepEqual(await history('acme', 'y'), [{ longitude: 9, latitude: 9, time: T2 }]);
      assert.deepEqual(await history('other', 'x'), [{ longitude: 5, latitude: 5, time: T0 }]);
      // A newer fix moves the current one to history; an equal time replaces it there.
      await store.objects.upsertMany('acme', [{ id: 'y', location: { longitude: 8, latitude: 8, time: '2024-05-01T10:00:03.000Z' } }], N1);
      await store.objects.upsertMany('acme', [{ id: 'x', location: { longitude: 4, latitude: 4, time: T2 } }, { id: 'x', location: { longitude: 6, latitude: 6, time: T1 } }], N1);
      assert.deepEqual(
        historyRows(path).map((row) => `${row.realm}/${row.object_id}@${row.time}:${(JSON.parse(row.location) as { longitude: number }).longitude}`),
        [`acme/x@${T0}:2`, `acme/x@${T1}:6`, `acme/y@${T2}:9`],
      );
      assert.deepEqual(await history('acme', 'x'), [
        { longitude: 2, latitude: 2, time: T0 },
        { longitude: 6, latitude: 6, time: T1 },
        { longitude: 4, latitude: 4, time: T2 },
      ]);
    }));

  void it('stores past fixes compactly: the object rowid, the time in ms, one column per number', () =>
    withFile(async (store, path) => {
      const full = { longitude: -0, latitude: -33.5, altitude: -12.25, speed: 0, heading: 359.5, accuracy: 1e-7, altitudeAccuracy: 1e21, time: '0000-01-01T00:00:00.000Z' };
      const last = { longitude: 179.999999, latitude: 89.5, speed: 3, time: '9999-12-31T23:59:59.999Z' };
      await store.objects.upsertMany(
        'acme',
        [
          { id: 'x', location: full },
          { id: 'x', location: { longitude: 1, latitude: 2, time: '1969-12-31T23:59:59.999Z' } },
          { id: 'x', location: last },
        ],
        N0,
      );
      const rowid = inspect(path, (db) => db.prepare<[], number>("SELECT rowid FROM objects WHERE id = 'x'").pluck().get());
      assert.deepEqual(
        rawFixes(path).map((row) => ({ ...row })),
        [
          { realm: 'acme', object_id: 'x', orow: rowid, time: -62167219200000, lon: 0, lat: -33.5, altitude: -12.25, speed: 0, heading: 359.5, accuracy: 1e-7, altitude_accuracy: 1e21 },
          { realm: 'acme', object_id: 'x', orow: rowid, time: -1, lon: 1, lat: 2, altitude: null, speed: null, heading: null, accuracy: null, altitude_accuracy: null },
        ],
      );
      // Read back as written: the same keys in the same order (the JSON text is equal), -0 as 0.
      const page = await store.objects.history('acme', 'x', { limit: 10, order: 'asc' });
      assert.equal(
        JSON.stringify(page.items.map((e) => e.location)),
        JSON.stringify([{ ...full, longitude: 0 }, { longitude: 1, latitude: 2, time: '1969-12-31T23:59:59.999Z' }, last]),
      );
      assert.ok(Object.is(page.items[0]?.location.longitude, 0));
      // Bounds and cursors compare the same instants as text and as milliseconds.
      const desc = await store.objects.history('acme', 'x', { limit: 1, order: 'desc', to: '9999-12-31T23:59:59.998Z' });
      assert.deepEqual(desc.items.map((e) => e.location.time), ['1969-12-31T23:59:59.999Z']);
      assert.ok(desc.next !== null);
      assert.deepEqual((await store.objects.history('acme', 'x', { limit: 5, order: 'desc', cursor: desc.next })).items.map((e) => e.location.time), [full.time]);
      // A cursor naming no real instant is refused, not read as an empty page.
      for (const time of ['2024-13-01T00:00:00.000Z', '2023-02-29T00:00:00.000Z']) {
        await assert.rejects(
          store.objects.history('acme', 'x', { limit: 5, order: 'asc', cursor: encodeCursor(time) }),
          (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor',
        );
      }
    }));

  void it('stores lon, lat and the fix time in columns and keeps the rowid across updates', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'x', label: 'x' }], N0);
      const read = () =>
        inspect(path, (db) =>
          db
            .prepare<[], { rowid: number; lon: number | null; lat: number | null; loc_time: string | null }>(
              "SELECT rowid, lon, lat, loc_time FROM objects WHERE realm = 'acme' AND id = 'x'",
            )
            .get(),
        );
      const created = read();
      assert.ok(created !== undefined);
      assert.deepEqual({ ...created, rowid: 0 }, { rowid: 0, lon: null, lat: null, loc_time: null });
      await store.objects.upsertMany('acme', [{ id: 'x', location: { longitude: -122.4, latitude: 37.8, time: T2 } }], N1);
      assert.deepEqual(read(), { rowid: created.rowid, lon: -122.4, lat: 37.8, loc_time: T2 });
    }));

  void it('deleting an object removes its history; deleting a realm removes all of the realm history', () =>
    withFile(async (store, path) => {
      for (const realm of ['doomed', 'kept']) {
        await store.objects.upsertMany(
          realm,
          [
            { id: 'a', location: { longitude: 1, latitude: 1, time: T0 } },
            { id: 'a', location: { longitude: 1, latitude: 1, time: T1 } },
            { id: 'b', location: { longitude: 2, latitude: 2, time: T0 } },
            { id: 'b', location: { longitude: 2, latitude: 2, time: T1 } },
          ],
          N0,
        );
      }
      await store.objects.delete('kept', 'a', N1);
      await store.realms.delete('doomed');
      assert.deepEqual(
        historyRows(path).map((row) => `${row.realm}/${row.object_id}@${row.time}`),
        [`kept/b@${T0}`],
      );
    }));
});

/** The version 1 schema as released, to test the migration of existing files. */
const SCHEMA_V1 = `
  CREATE TABLE realms (id TEXT PRIMARY KEY NOT NULL, settings TEXT NOT NULL, created TEXT NOT NULL);
  CREATE TABLE tokens (id TEXT PRIMARY KEY NOT NULL, realm TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, scope TEXT NOT NULL, created TEXT NOT NULL);
  CREATE INDEX tokens_by_realm ON tokens (realm, created, id);
  CREATE TABLE objects (
    rowid INTEGER PRIMARY KEY, realm TEXT NOT NULL, id TEXT NOT NULL, label TEXT, lon REAL, lat REAL,
    location TEXT, loc_time TEXT, seen TEXT, data TEXT NOT NULL, UNIQUE (realm, id)
  );
  CREATE TABLE areas (realm TEXT NOT NULL, id TEXT NOT NULL, label TEXT, shape TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (realm, id));
  CREATE TABLE history (
    realm TEXT NOT NULL, object_id TEXT NOT NULL, time TEXT NOT NULL, location TEXT NOT NULL,
    PRIMARY KEY (realm, object_id, time)
  ) WITHOUT ROWID;
  PRAGMA user_version = 1;
`;

interface IndexState {
  located: { rowid: number; realm: string; lon: number; lat: number }[];
  keys: Map<string, number>;
  /** Rowids of the objects, and of the full-text index's entries. */
  objects: number[];
  entries: number[];
}

/** Reads through a second connection that may write (FTS5's integrity-check is an INSERT command). */
function inspectWritable<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function indexState(path: string): IndexState {
  const entries = inspectWritable(`${path}-search`, (db) => {
    // FTS5 checks its own structure.
    db.prepare("INSERT INTO object_fts (object_fts) VALUES ('integrity-check')").run();
    return db.prepare<[], number>('SELECT id FROM object_fts_docsize ORDER BY id').pluck().all();
  });
  return inspect(path, (db) => {
    return {
      located: db
        .prepare<[], { rowid: number; realm: string; lon: number; lat: number }>(
          'SELECT rowid, realm, lon, lat FROM objects WHERE lon IS NOT NULL ORDER BY rowid',
        )
        .all(),
      keys: new Map(db.prepare<[], { realm: string; key: number }>('SELECT realm, key FROM realm_keys').all().map((r) => [r.realm, r.key])),
      objects: db.prepare<[], number>('SELECT rowid FROM objects ORDER BY rowid').pluck().all(),
      entries,
    };
  });
}

const WORLD = [{ minLon: -180, maxLon: 180, minLat: -90, maxLat: 90 }];

/**
 * The store's spatial index of each realm holds exactly its located objects at their
 * exact positions (the grids of `realms` are those the store keeps current, when it holds
 * them), and the FTS5 index one row per object.
 */
async function assertIndexesInSync(store: SqliteStore, path: string, realms: readonly string[]): Promise<void> {
  await store.objects.indexed();
  const state = indexState(path);
  for (const realm of realms) {
    const held = new Map<number, [number, number]>();
    store.objects.locations.grid(realm).visit(WORLD, (rowid, lon, lat) => void held.set(rowid, [lon, lat]));
    const rows = new Map(state.located.filter((row) => row.realm === realm).map((row) => [row.rowid, [row.lon, row.lat]]));
    assert.deepEqual(held, rows, `spatial index of realm ${realm}`);
  }
  assert.deepEqual(state.entries, state.objects, 'one full-text entry per object');
}

void describe('sqlite query engine', () => {
  const N = '2024-05-01T12:00:00.000Z';
  const at = (longitude: number, latitude: number, time = T0) => ({ longitude, latitude, time });

  /** A new file at schema version 1, open for writing, with its objects insert. */
  const versionOneFile = () => {
    const path = freshPath();
    const raw = new Database(path);
    raw.exec(SCHEMA_V1);
    const insert = raw.prepare(
      'INSERT INTO objects (realm, id, label, lon, lat, location, loc_time, seen, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    return { path, raw, insert };
  };

  void it('migrates a version 1 file: indexes are built for the objects it holds, data becomes JSONB', async () => {
    const { path, raw, insert } = versionOneFile();
    // Data text as earlier versions wrote it (JSON.stringify), with what JSONB must keep.
    const trickyJson = '{"z":1,"__proto__":"p","a":1e+21,"big":1152921504606847200,"d":0.1,"s":"\\ud800 \\"x\\" \\u0000 😀","t":true}';
    insert.run('acme', 'truck', 'Red Tractor', 13.4, 52.5, JSON.stringify(at(13.4, 52.5)), T0, N0, '{"driver":"Zoë"}');
    insert.run('acme', 'bike', null, null, null, null, null, null, '{}');
    insert.run('acme', 'tricky', null, null, null, null, null, null, trickyJson);
    insert.run('other', 'truck', 'Tractor', 13.4, 52.5, JSON.stringify(at(13.4, 52.5)), T0, N0, '{}');
    // Current locations with every optional number (one a -0, stored as 0 by its text) and
    // with some of them: they read back as the text that was stored.
    const fullText = '{"longitude":-0.5,"latitude":0,"altitude":34.5,"speed":0,"heading":359.99,"accuracy":5,"altitudeAccuracy":1e-7,"time":"0001-02-03T04:05:06.007Z"}';
    const someText = '{"longitude":179.999999,"latitude":-89.5,"speed":12.25,"accuracy":3,"time":"2024-05-01T10:00:00.000Z"}';
    insert.run('other', 'full', null, -0.5, -0, fullText, '0001-02-03T04:05:06.007Z', N0, '{}');
    insert.run('other', 'some', null, 179.999999, -89.5, someText, '2024-05-01T10:00:00.000Z', N0, '{}');
    const pastFix = raw.prepare('INSERT INTO history (realm, object_id, time, location) VALUES (?, ?, ?, ?)');
    pastFix.run('acme', 'truck', T0, JSON.stringify(at(13.4, 52.5)));
    pastFix.run('other', 'full', '0001-02-03T04:05:06.007Z', fullText);
    raw.close();

    const store = openSqliteStore(path);
    try {
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      assert.deepEqual(
        inspect(path, (db) => db.prepare<[], string>('SELECT DISTINCT typeof(data) FROM objects').pluck().all()),
        ['blob'],
      );
      // The current location moved out of its JSON text (version 9).
      assert.deepEqual(
        inspect(path, (db) => db.prepare<[], string>("SELECT name FROM pragma_table_info('objects') WHERE name IN ('location', 'loc_extra')").pluck().all()),
        ['loc_extra'],
      );
      assert.equal(JSON.stringify((await store.objects.get('other', 'full'))?.location), fullText);
      assert.equal(JSON.stringify((await store.objects.get('other', 'some'))?.location), someText);
      assert.equal(JSON.stringify((await store.objects.get('other', 'truck'))?.location), JSON.stringify(at(13.4, 52.5)));
      assert.equal((await store.objects.get('acme', 'bike'))?.location, null);
      assert.equal(JSON.stringify((await store.objects.history('other', 'full', { limit: 10, order: 'asc' })).items.map((e) => e.location)), `[${fullText}]`);
      // The data reads back as the text it was: the same values, keys in the same order.
      const migrated = await store.objects.get('acme', 'tricky');
      assert.deepEqual(migrated?.data, JSON.parse(trickyJson));
      assert.equal(JSON.stringify(migrated?.data), trickyJson);
      assert.deepEqual((await store.objects.get('acme', 'truck'))?.data, { driver: 'Zoë' });
      assert.deepEqual(
        (await store.objects.list('acme', { limit: 10 })).items.map((o) => [o.id, o.data]),
        [['bike', {}], ['tricky', JSON.parse(trickyJson)], ['truck', { driver: 'Zoë' }]],
      );
      assert.equal(migrated?.data.s, '\ud800 "x" \u0000 😀');
      assert.ok(Object.hasOwn(migrated?.data ?? {}, '__proto__'));
      // Filters read the JSONB.
      for (const [filter, ids] of [['driver=Zoë', ['truck']], ['a>1e20', ['tricky']], [`big=${2 ** 60 + 256}`, ['tricky']], ['t=true', ['tricky']]] as const) {
        assert.deepEqual((await store.objects.list('acme', { limit: 10, filter: parseFilter(filter, 10) })).items.map((o) => o.id), ids, filter);
      }
      const circle: Shape = { cx: 13.4, cy: 52.5, r: 100 };
      assert.deepEqual((await store.objects.list('acme', { limit: 10, shape: circle })).items.map((o) => o.id), ['truck']);
      assert.deepEqual((await store.objects.list('other', { limit: 10, shape: circle })).items.map((o) => o.id), ['truck']);
      const hits = await store.objects.search('acme', { words: ['zoe', 'trac'], limit: 10 });
      assert.deepEqual(hits.map((h) => h.object.id), ['truck']);
      // History: the row that duplicated truck's current fix is gone, the fix still reads
      // back; other/truck's current fix had no row (pruned before): it stays out.
      assert.deepEqual(historyRows(path), []);
      assert.deepEqual((await store.objects.history('acme', 'truck', { limit: 10, order: 'asc' })).items.map((e) => e.location), [at(13.4, 52.5)]);
      assert.deepEqual((await store.objects.history('other', 'truck', { limit: 10, order: 'asc' })).items.map((e) => e.location), []);
      // New writes in a migrated realm are indexed too.
      await store.objects.upsertMany('acme', [{ id: 'bike', label: 'Tractor bike', location: at(13.4, 52.5, T1) }], N1);
      assert.deepEqual((await store.objects.list('acme', { limit: 10, shape: circle })).items.map((o) => o.id), ['bike', 'truck']);
      await assertIndexesInSync(store, path, ['acme', 'other']);
    } finally {
      await store.close();
    }
  });

  void it('migrates realms of an older file: they keep their settings, read as label null, data {}, and become the default tenant\'s under their own name', async () => {
    const { path, raw } = versionOneFile();
    raw.prepare('INSERT INTO realms (id, settings, created) VALUES (?, ?, ?)').run('acme', JSON.stringify(SETTINGS), N0);
    raw.close();
    const store = openSqliteStore(path);
    try {
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      const acme = { id: 'acme', tenant: 'default', name: 'acme', label: null, data: {}, settings: SETTINGS, created: N0 };
      assert.deepEqual(await store.realms.get('acme'), acme);
      assert.deepEqual(await store.realms.list(), [acme]);
      assert.deepEqual(await store.realms.list('default'), [acme]);
      assert.deepEqual(await store.realms.list('other'), []);
      assert.deepEqual((await store.tenants.list()).map((t) => t.id), ['default']);
      assert.deepEqual(await store.realms.update('acme', { label: 'Acme', data: { a: { b: 1 } } }), { ...acme, label: 'Acme', data: { a: { b: 1 } } });
    } finally {
      await store.close();
    }
  });

  void it('migrates the past fixes of a version 1 file to compact rows, dropping those of objects that are gone', async () => {
    const { path, raw, insert } = versionOneFile();
    const full = { longitude: 13.4, latitude: 52.5, altitude: 34.5, speed: 12.25, heading: 90, accuracy: 5, altitudeAccuracy: 2.5, time: '0001-02-03T04:05:06.007Z' };
    const current = at(13.6, 52.7, T2);
    // Ids whose rowids are not in id order, over more than one chunk of the migration.
    for (let i = 0; i < 300; i++) insert.run('acme', `filler-${i}`, null, null, null, null, null, null, '{}');
    insert.run('acme', 'truck', 'Truck', 13.6, 52.7, JSON.stringify(current), T2, N0, '{"k":"old"}');
    insert.run('acme', 'a-first', null, 1, 1, JSON.stringify(at(1, 1, T1)), T1, N0, '{}');
    const fix = raw.prepare('INSERT INTO history (realm, object_id, time, location) VALUES (?, ?, ?, ?)');
    for (const [realm, id, location] of [
      ['acme', 'truck', full],
      ['acme', 'truck', at(13.5, 52.6, T1)],
      ['acme', 'truck', current],
      ['acme', 'a-first', at(0.5, 0.5, T0)],
      ['acme', 'a-first', at(1, 1, T1)],
      ['acme', 'gone', at(2, 2, T0)],
    ] as const) {
      fix.run(realm, id, location.time, JSON.stringify(location));
    }
    raw.close();

    const store = openSqliteStore(path);
    try {
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), SCHEMA_VERSION);
      assert.deepEqual(
        historyRows(path).map((row) => [row.realm, row.object_id, row.location]),
        [
          ['acme', 'a-first', JSON.stringify(at(0.5, 0.5, T0))],
          ['acme', 'truck', JSON.stringify(full)],
          ['acme', 'truck', JSON.stringify(at(13.5, 52.6, T1))],
        ],
      );
      assert.equal(
        JSON.stringify((await store.objects.history('acme', 'truck', { limit: 10, order: 'asc' })).items.map((e) => e.location)),
        JSON.stringify([full, at(13.5, 52.6, T1), current]),
      );
      assert.deepEqual((await store.objects.history('acme', 'a-first', { limit: 10, order: 'desc' })).items.map((e) => e.location), [at(1, 1, T1), at(0.5, 0.5, T0)]);
      // Schema version 12: fixes stored before carry the label and data the object had at
      // the upgrade, and keep them once the data changes.
      const snapshots = async (): Promise<unknown[]> =>
        (await store.objects.history('acme', 'truck', { limit: 10, order: 'asc' })).items.map((e) => [e.location.time, e.label, e.data]);
      assert.deepEqual(await snapshots(), [[full.time, 'Truck', { k: 'old' }], [T1, 'Truck', { k: 'old' }], [T2, 'Truck', { k: 'old' }]]);
      await store.objects.upsertMany('acme', [{ id: 'truck', label: 'New', data: { k: 'new' } }], N1);
      await store.objects.upsertMany('acme', [{ id: 'truck', location: at(14, 53, T3) }], N1);
      assert.deepEqual(await snapshots(), [
        [full.time, 'Truck', { k: 'old' }],
        [T1, 'Truck', { k: 'old' }],
        [T2, 'Truck', { k: 'old' }],
        [T3, 'New', { k: 'new' }],
      ]);
    } finally {
      await store.close();
    }
  });

  void it('schema 12: a tracker with unchanged data stores no snapshot; changing data waits in the row, then moves to snapshots in groups', () =>
    withFile(async (store, path) => {
      const T = (m: number): string => new Date(Date.parse(T0) + m * 1000).toISOString();
      for (let m = 0; m < 20; m++) {
        await store.objects.upsertMany('acme', [{ id: 'same', location: at(1, 2, T(m)), data: { kind: 'van' } }, { id: 'moving', location: at(1, 2, T(m)), data: { note: `${'x'.repeat(300)}${m}` } }], N0);
      }
      const rows = inspect(path, (db) => db.prepare('SELECT o.id, count(s.ver) AS n, length(o.snaps) AS held FROM objects o LEFT JOIN snapshots s ON s.orow = o.rowid GROUP BY o.id ORDER BY o.id').all());
      const [moving, same] = rows as { id: string; n: number; held: number | null }[];
      assert.equal(same?.n, 0);
      assert.equal(same?.held, null);
      // 19 kept snapshots: some moved in groups, the rest (under the buffer's size) held.
      assert.ok(moving !== undefined && moving.n > 0 && moving.n < 19 && moving.held !== null && moving.held < SNAPSHOT_BUFFER_CHARS, JSON.stringify(rows));
      const entries = (await store.objects.history('acme', 'moving', { limit: 100, order: 'asc' })).items;
      assert.deepEqual(entries.map((e) => e.data.note), Array.from({ length: 20 }, (_, m) => `${'x'.repeat(300)}${m}`));
    }));

  void it('keeps the spatial index and the FTS5 index in step with every write, delete and realm delete', () =>
    withFile(async (store, path) => {
      // Held from the start: every change below is applied to them, not rebuilt.
      store.objects.locations.grid('a');
      store.objects.locations.grid('b');
      const sync = (): Promise<void> => assertIndexesInSync(store, path, ['a', 'b']);
      await store.objects.upsertMany('a', [{ id: 'x', label: 'X' }, { id: 'y', location: at(1, 2) }], N0);
      await store.objects.upsertMany('b', [{ id: 'x', location: at(-179.99999, 89.99999) }], N0);
      await sync();
      await store.objects.upsertMany('a', [{ id: 'x', location: at(3, 4) }, { id: 'y', location: at(0.1, 0.2, T1) }], N1);
      await store.objects.upsertMany('a', [{ id: 'y', location: at(9, 9, T0) }], N1); // older: stays at 0.1, 0.2
      await store.objects.upsertMany('a', [{ id: 'x', location: at(3.0001, 4.0001, T1) }], N1); // same cell, new position
      await sync();
      assert.deepEqual(indexState(path).located.find((r) => r.realm === 'a' && r.lon === 0.1)?.lat, 0.2);
      await store.objects.delete('a', 'x', N1);
      await sync();
      await store.realms.put('b', SETTINGS, N1);
      await store.realms.delete('b');
      await sync();
      assert.deepEqual([...indexState(path).keys.keys()], ['a']);
    }));

  void it('builds every realm\'s spatial index in the background at open, with writes racing it', async () => {
    const path = freshPath();
    const first = openSqliteStore(path);
    const n = 80_000; // eight chunks of the background pass
    const spread = (realm: string, count: number, offset: number): ObjectPatch[] =>
      Array.from({ length: count }, (_, i) => ({ id: `${realm}-${i}`, location: at(((i * 7) % 360) - 180 + offset, ((i * 13) % 170) - 85) }));
    await first.objects.upsertMany('a', spread('a', n, 0), N0);
    await first.objects.upsertMany('b', spread('b', 100, 0.5), N0);
    await first.objects.upsertMany('a', [{ id: 'no-location', label: 'x' }], N0);
    await first.close();

    const store = openSqliteStore(path);
    try {
      const warming = store.objects.locations.warm();
      // Writes while the pass reads: moves of rows it has read and has not, deletes, new
      // rows. A round's writes are committed together, in one turn of the event loop.
      for (let round = 0; round < 5; round++) {
        assert.equal(store.objects.locations.warming, true, 'the writes race the pass');
        await Promise.all([
          store.objects.upsertMany('a', [{ id: `a-${round * 5000}`, location: at(1 + round, 1, T1) }, { id: `a-new-${round}`, location: at(2, 2) }], N1),
          store.objects.delete('a', `a-${round * 5000 + 1}`, N1),
          store.objects.upsertMany('b', [{ id: `b-${round}`, location: at(3, 3, T1) }], N1),
          // A realm new meanwhile.
          round === 2 ? store.objects.upsertMany('c', [{ id: 'c-1', location: at(4, 4) }], N1) : null,
        ]);
      }
      await warming;
      assert.deepEqual(store.objects.locations.held().sort(), ['a', 'b', 'c'], 'built by the background pass');
      await assertIndexesInSync(store, path, ['a', 'b', 'c']);
      assert.equal(store.objects.locations.grid('a').size, n + 5 - 5);
    } finally {
      await store.close();
    }
  });

  void it('the background pass reads the rows there when it began: a bulk ingest meanwhile does not keep it going', async () => {
    const path = freshPath();
    const first = openSqliteStore(path);
    const located = (from: number, count: number): ObjectPatch[] =>
      Array.from({ length: count }, (_, i) => ({ id: `a-${from + i}`, location: at(((from + i) % 360) - 180, ((from + i) % 170) - 85) }));
    await first.objects.upsertMany('a', located(0, 15_000), N0); // two chunks of the pass
    await first.close();

    const store = openSqliteStore(path);
    try {
      const warming = store.objects.locations.warm();
      // Each turn of the event loop: a step of the pass, then a batch of new rows, as many
      // as a chunk. A pass that read up to the newest rows would never end meanwhile.
      for (let round = 0; round < 4; round++) {
        await new Promise((resolve) => setImmediate(resolve));
        await store.objects.upsertMany('a', located(15_000 + round * 10_000, 10_000), N1);
      }
      assert.equal(store.objects.locations.warming, false, 'the pass ended after the rows it began with');
      await warming;
      await assertIndexesInSync(store, path, ['a']);
      assert.equal(store.objects.locations.grid('a').size, 55_000);
    } finally {
      await store.close();
    }
  });

  void it('deleting a realm purges its index entries one by one, or rebuilds the indexes when it holds most of them', () =>
    withFile(async (store, path) => {
      const seed = async (realm: string, n: number): Promise<void> => {
        await store.realms.put(realm, SETTINGS, N0);
        await store.objects.upsertMany(
          realm,
          Array.from({ length: n }, (_, i) => ({ id: `${realm}-${i}`, label: `Tractor ${realm}`, location: at(i / 100, i / 100), data: { n: i } })),
          N0,
        );
      };
      await seed('big', 40);
      await seed('small', 3);
      await seed('other', 5);
      const found = async (realm: string): Promise<[number, number]> => [
        (await store.objects.list(realm, { limit: 100, shape: { w: -1, n: 1, e: 1, s: -1 } })).items.length,
        (await store.objects.search(realm, { words: ['trac'], limit: 100 })).length,
      ];
      const sync = (): Promise<void> => assertIndexesInSync(store, path, ['big', 'small', 'other']);
      // small: 3 of 48 entries, deleted one by one.
      assert.equal(await store.realms.delete('small'), true);
      await sync();
      assert.deepEqual(await found('small'), [0, 0]);
      assert.deepEqual(await found('big'), [40, 40]);
      // big: 40 of 45 entries, the indexes are rebuilt with the other realm's 5.
      assert.equal(await store.realms.delete('big'), true);
      await sync();
      assert.deepEqual(await found('big'), [0, 0]);
      assert.deepEqual(await found('other'), [5, 5]);
      // The store keeps working on the rebuilt indexes.
      await store.objects.upsertMany('other', [{ id: 'late', label: 'Tractor late', location: at(0.5, 0.5) }], N1);
      await store.realms.put('big', SETTINGS, N1);
      await store.objects.upsertMany('big', [{ id: 'again', label: 'Tractor again', location: at(0.5, 0.5) }], N1);
      assert.deepEqual(await found('other'), [6, 6]);
      assert.deepEqual(await found('big'), [1, 1]);
      await store.objects.delete('other', 'late', N1);
      await sync();
      assert.deepEqual(await found('other'), [5, 5]);
    }));

  void it('updates of recently written objects merge into the committed state, also after a failure or a write by another connection', async () => {
    const path = freshPath();
    const store = openSqliteStore(path);
    const other = openSqliteStore(path);
    try {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'A', location: at(1, 1), data: { k: 1 } }], N0);
      // A new object is not held (a bulk import would only push the trackers' entries out); an updated one is.
      assert.equal(store.objects.recent.get('acme', 'a'), undefined, 'not held after its creation');
      await store.objects.upsertMany('acme', [{ id: 'a', data: { k: 1 } }], N0);
      assert.ok(store.objects.recent.get('acme', 'a') !== undefined, 'held after an update');
      // A failed batch: the held state stays the committed one.
      const bad = { big: 10n } as unknown as Data;
      await assert.rejects(store.objects.upsertMany('acme', [{ id: 'a', label: 'B', data: { k: 2 } }, { id: 'c', data: bad }], N1));
      await store.objects.upsertMany('acme', [{ id: 'a', location: at(2, 2, T1) }], N1);
      assert.deepEqual(await store.objects.get('acme', 'a'), { id: 'a', label: 'A', location: at(2, 2, T1), data: { k: 1 }, seen: N1 });
      // Another connection changes the object: the next update here starts from that.
      await other.objects.upsertMany('acme', [{ id: 'a', label: 'Other', data: { j: true } }], N1);
      const [change] = await store.objects.upsertMany('acme', [{ id: 'a', location: at(3, 3, T2), data: { k: null } }], N1);
      assert.deepEqual(change?.old, { id: 'a', label: 'Other', location: at(2, 2, T1), data: { k: 1, j: true }, seen: N1 });
      assert.deepEqual(await store.objects.get('acme', 'a'), { id: 'a', label: 'Other', location: at(3, 3, T2), data: { j: true }, seen: N1 });
      // A deleted object, or one of a deleted realm, is not held.
      await store.objects.delete('acme', 'a', N1);
      assert.equal(store.objects.recent.get('acme', 'a'), undefined);
      await store.objects.upsertMany('acme', [{ id: 'a', data: { fresh: 1 } }], N1);
      assert.deepEqual((await store.objects.get('acme', 'a'))?.data, { fresh: 1 });
      await store.realms.put('acme', SETTINGS, N1);
      await store.realms.delete('acme');
      assert.equal(store.objects.recent.get('acme', 'a'), undefined);
      await store.realms.put('acme', SETTINGS, N1);
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'New' }], N1);
      assert.deepEqual(await store.objects.get('acme', 'a'), { id: 'a', label: 'New', location: null, data: {}, seen: null });
      await assertIndexesInSync(store, path, ['acme']);
    } finally {
      await other.close();
      await store.close();
    }
  });

  void it('a token revoked or a realm deleted by another connection is no longer found, though its lookup was held', async () => {
    const path = freshPath();
    const store = openSqliteStore(path);
    const other = openSqliteStore(path);
    try {
      await store.realms.put('acme', SETTINGS, N0);
      await store.realms.put('beta', SETTINGS, N0);
      for (const [id, realm] of [['t1', 'acme'], ['t2', 'acme'], ['t3', 'beta']] as const) {
        await store.tokens.create({ id, realm, hash: `h-${id}`, scope: 'write', created: N0 });
      }
      for (const id of ['t1', 't2', 't3']) assert.equal((await store.tokens.findByHash(`h-${id}`))?.id, id);
      assert.equal(await other.tokens.delete('acme', 't1'), true);
      assert.equal(await store.tokens.findByHash('h-t1'), null);
      assert.equal((await store.tokens.findByHash('h-t2'))?.id, 't2');
      assert.equal(await other.realms.delete('beta'), true);
      assert.equal(await store.tokens.findByHash('h-t3'), null);
      assert.equal((await store.tokens.findByHash('h-t2'))?.id, 't2');
      // A token created by another connection is found at once (unknown hashes are not held).
      assert.equal(await store.tokens.findByHash('h-t4'), null);
      await other.tokens.create({ id: 't4', realm: 'acme', hash: 'h-t4', scope: 'read', created: N1 });
      assert.equal((await store.tokens.findByHash('h-t4'))?.scope, 'read');
    } finally {
      await other.close();
      await store.close();
    }
  });

  void it('writes of one turn are committed together; one that fails is undone alone, and later ones see earlier ones', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'A', location: at(1, 1) }], N0);
      await store.objects.upsertMany('acme', [{ id: 'a', data: { k: 1 } }], N0); // held in RecentObjects from here
      const bad = { big: 10n } as unknown as Data;
      // Five writes in one turn: the third fails; the others build on each other in call order.
      const outcomes = await Promise.allSettled([
        store.objects.upsertMany('acme', [{ id: 'a', location: at(2, 2, T1) }], N1),
        store.objects.upsertMany('acme', [{ id: 'n', label: 'New', location: at(3, 3) }], N1),
        store.objects.upsertMany('acme', [{ id: 'a', label: 'Lost', location: at(9, 9, T2) }, { id: 'x', data: bad }], N1),
        store.objects.upsertMany('acme', [{ id: 'a', label: 'B', location: at(4, 4, T2) }], N1),
        store.objects.upsertMany('acme', [{ id: 'n', data: { seen: 2 } }], N1),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
      );
      const changes = outcomes.map((o) => (o.status === 'fulfilled' ? o.value[0] : null));
      assert.deepEqual(changes[0]?.old?.location, at(1, 1));
      assert.deepEqual(changes[3]?.old, { id: 'a', label: 'A', location: at(2, 2, T1), data: { k: 1 }, seen: N1 });
      assert.deepEqual(changes[4]?.old, { id: 'n', label: 'New', location: at(3, 3), data: {}, seen: N1 });
      assert.deepEqual(await store.objects.get('acme', 'a'), { id: 'a', label: 'B', location: at(4, 4, T2), data: { k: 1 }, seen: N1 });
      assert.deepEqual(await store.objects.get('acme', 'n'), { id: 'n', label: 'New', location: at(3, 3), data: { seen: 2 }, seen: N1 });
      assert.equal(await store.objects.get('acme', 'x'), null);
      assert.deepEqual((await store.objects.history('acme', 'a', { limit: 10, order: 'asc' })).items.map((e) => e.location), [at(1, 1), at(2, 2, T1), at(4, 4, T2)]);
      assert.deepEqual((await store.objects.list('acme', { limit: 5, shape: { cx: 9, cy: 9, r: 1000 } })).items, []);
      assert.deepEqual((await store.objects.search('acme', { words: ['lost'], limit: 5 })).length, 0);
      await assertIndexesInSync(store, path, ['acme']);
    }));

  void it('when a group of writes cannot commit, its writes run again one by one: only the one that fails alone fails', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'A', location: at(1, 1) }], N0);
      await store.objects.upsertMany('acme', [{ id: 'a', data: { k: 1 } }], N0);
      const before = await store.objects.get('acme', 'a');
      // A deferred foreign key fails at COMMIT, after every write of the group has run.
      const other = new Database(path);
      other.exec(`
        CREATE TABLE boom_parent (id INTEGER PRIMARY KEY);
        CREATE TABLE boom_child (p INTEGER REFERENCES boom_parent (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TRIGGER boom AFTER INSERT ON objects WHEN new.id = 'boom' BEGIN INSERT INTO boom_child VALUES (42); END;
      `);
      other.close();
      const outcomes = await Promise.allSettled([
        store.objects.upsertMany('acme', [{ id: 'a', label: 'Moved', location: at(5, 5, T1) }], N1),
        store.objects.upsertMany('acme', [{ id: 'boom', location: at(6, 6) }], N1),
        store.objects.upsertMany('acme', [{ id: 'a', data: { k: 2 } }], N1),
      ]);
      assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
      const [first, failed, third] = outcomes;
      if (failed?.status === 'rejected') assert.ok(failed.reason instanceof LocusError);
      // Each write started from the committed state, not from the rolled-back group's.
      const moved = { id: 'a', label: 'Moved', location: at(5, 5, T1), data: { k: 1 }, seen: N1 };
      assert.deepEqual(first?.status === 'fulfilled' ? first.value[0]?.old : null, before);
      assert.deepEqual(third?.status === 'fulfilled' ? third.value[0]?.old : null, moved);
      assert.deepEqual(await store.objects.get('acme', 'a'), { ...moved, data: { k: 2 } });
      assert.equal(await store.objects.get('acme', 'boom'), null);
      assert.deepEqual((await store.objects.list('acme', { limit: 5, shape: { cx: 6, cy: 6, r: 1000 } })).items, []);
      assert.deepEqual((await store.objects.history('acme', 'a', { limit: 10, order: 'asc' })).items.map((e) => e.location), [at(1, 1), at(5, 5, T1)]);
      await assertIndexesInSync(store, path, ['acme']);
    }));

  void it('a group of writes meeting a database locked by another process fails at once, not once per write', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'A' }], N0);
      const other = new Database(path);
      other.pragma('busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      try {
        const started = performance.now();
        const outcomes = await Promise.allSettled(
          ['b', 'c', 'd', 'e'].map((id) => store.objects.upsertMany('acme', [{ id, label: id }], N1)),
        );
        const elapsed = performance.now() - started;
        assert.deepEqual(outcomes.map((o) => o.status), ['rejected', 'rejected', 'rejected', 'rejected']);
        for (const outcome of outcomes) if (outcome.status === 'rejected') assert.equal((outcome.reason as LocusError).code, 'unavailable');
        // The group waited for the lock (busy_timeout, 5 s) and gave up once; retried one by
        // one, its four writes would have waited 25 s in all.
        assert.ok(elapsed < 15_000, `${Math.round(elapsed)} ms`);
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      assert.equal(await store.objects.get('acme', 'b'), null);
      await store.objects.upsertMany('acme', [{ id: 'b', label: 'B' }], N1);
      assert.equal((await store.objects.get('acme', 'b'))?.label, 'B');
    }));

  for (const [way, textForNewBehind] of [
    ['from their rows', Number.POSITIVE_INFINITY],
    ['from the text the write sends (the indexer being behind)', 0],
  ] as const) {
    void it(`new objects are indexed ${way}: a rowid a deleted object left is indexed as the new object`, () =>
      withFile(async (store, path) => {
        const rowidOf = (id: string): number | undefined =>
          inspect(path, (db) => db.prepare<[string], number>("SELECT rowid FROM objects WHERE realm = 'acme' AND id = ?").pluck().get(id));
        // The indexer's first pass over a new file indexes every row there: the writes below
        // come after it, so they reach the index through the queue.
        await store.objects.indexed();
        await store.objects.upsertMany('acme', [{ id: 'a', label: 'Alpha' }, { id: 'b', label: 'Bravo', data: { note: 'lost' } }], N0);
        const freed = rowidOf('b');
        await store.objects.delete('acme', 'b', N0);
        // One turn: c takes b's rowid (the largest plus one); d is renamed and e deleted
        // before the indexer may have read their rows.
        await Promise.all([
          store.objects.upsertMany('acme', [{ id: 'c', label: 'Charlie' }, { id: 'd', label: 'Delta' }, { id: 'e', label: 'Echo' }], N1),
          store.objects.upsertMany('acme', [{ id: 'd', label: 'Dora' }], N1),
        ]);
        await store.objects.delete('acme', 'e', N1);
        assert.equal(rowidOf('c'), freed);
        const found = async (q: string): Promise<string[]> =>
          (await store.objects.search('acme', { words: [q], limit: 5 })).map((hit) => hit.object.id);
        assert.deepEqual(await found('bravo'), []);
        assert.deepEqual(await found('lost'), []);
        assert.deepEqual(await found('charlie'), ['c']);
        assert.deepEqual(await found('alpha'), ['a']);
        assert.deepEqual(await found('delta'), []);
        assert.deepEqual(await found('dora'), ['d']);
        assert.deepEqual(await found('echo'), []);
        await assertIndexesInSync(store, path, ['acme']);
      }, { textForNewBehind }),
    );
  }

  void it('writes that wait for the full-text indexer (far behind) still take effect in call order', () =>
    withFile(
      async (store) => {
        await store.objects.indexed();
        // Each write queues index work (a new label): with no backlog allowed, each one
        // waits for the indexer to apply the last; those asked for meanwhile wait behind it.
        await store.objects.upsertMany('acme', [{ id: 'car', label: 'zero' }], N0);
        const labels = ['one', 'two', 'three', 'four', 'five'];
        const changes = await Promise.all(labels.map((label) => store.objects.upsertMany('acme', [{ id: 'car', label }], N1)));
        assert.deepEqual(
          changes.map(([change]) => `${change?.old?.label ?? '-'}>${change?.new?.label ?? '-'}`),
          ['zero>one', 'one>two', 'two>three', 'three>four', 'four>five'],
        );
        assert.equal((await store.objects.get('acme', 'car'))?.label, 'five');
        const found = await store.objects.search('acme', { words: ['five'], limit: 5 });
        assert.deepEqual(
          found.map((hit) => hit.object.id),
          ['car'],
        );
      },
      { indexerBacklog: 0 },
    ));

  void it('a failed batch leaves the indexes as they were', () =>
    withFile(async (store, path) => {
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'Alpha', location: at(1, 1) }], N0);
      const unserialisable = { big: 10n } as unknown as Data;
      await assert.rejects(
        store.objects.upsertMany(
          'acme',
          [{ id: 'a', label: 'Beta', location: at(5, 5, T1) }, { id: 'b', label: 'Bravo', location: at(6, 6) }, { id: 'c', data: unserialisable }],
          N1,
        ),
      );
      await assertIndexesInSync(store, path, ['acme']);
      assert.deepEqual((await store.objects.search('acme', { words: ['beta'], limit: 5 })).length, 0);
      assert.deepEqual((await store.objects.search('acme', { words: ['bravo'], limit: 5 })).length, 0);
      assert.deepEqual((await store.objects.list('acme', { limit: 5, shape: { cx: 5, cy: 5, r: 1000 } })).items, []);
      assert.deepEqual((await store.objects.list('acme', { limit: 5, shape: { cx: 1, cy: 1, r: 1000 } })).items.map((o) => o.id), ['a']);
    }));

  void it('queries use the indexes: EXPLAIN QUERY PLAN', () =>
    withFile(async (store, path) => {
      const patches: ObjectPatch[] = [];
      for (let i = 0; i < 6000; i++) {
        patches.push({ id: `o${i}`, label: `Object ${i}`, location: at((i % 100) / 100, Math.floor(i / 100) / 100), data: { k: i } });
      }
      await store.objects.upsertMany('r', patches, N);
      await store.objects.upsertMany('other', patches.slice(0, 100), N);
      await store.objects.indexed();
      const plan = (sql: string, params: unknown[]): string[] =>
        inspect(path, (db) => {
          db.function('locus_inside', { varargs: true }, () => 1); // the store's exact test, registered on its own connection
          db.prepare('ATTACH DATABASE ? AS search').run(`${path}-search`);
          return db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => r.detail);
        });
      const index = 'SEARCH o USING INDEX sqlite_autoindex_objects_1 (realm=? AND id>?)';

      const explain = (query: Parameters<SqliteStore['objects']['listPlan']>[1]) => {
        const planned = store.objects.listPlan('r', query);
        assert.ok(planned !== null);
        return { plan: planned.plan, details: plan(planned.sql, planned.params) };
      };
      // id paging and filters: the (realm, id) index, in order, no sort, no scan.
      for (const query of [{ limit: 10 }, { limit: 10, filter: parseFilter('k>5,label!=x', 10) }]) {
        const { plan: kind, details } = explain(query);
        assert.equal(kind, 'index');
        assert.deepEqual(details, [index]);
      }
      // id bounds narrow the index range.
      assert.deepEqual(explain({ limit: 10, filter: parseFilter('id<o9,id>o1', 10) }).details, [
        'SEARCH o USING INDEX sqlite_autoindex_objects_1 (realm=? AND id>? AND id<?)',
      ]);
      // A small shape: its hits (from the spatial index) drive, each row found by rowid.
      for (const shape of [{ cx: 0.5, cy: 0.3, r: 2000 }, { points: [[0.1, 0.1], [0.2, 0.1], [0.15, 0.2]] }] as Shape[]) {
        const { plan: kind, details } = explain({ limit: 10, shape, filter: parseFilter('k>5', 10) });
        assert.equal(kind, 'spatial');
        assert.match(details[0] ?? '', /^SCAN c VIRTUAL TABLE INDEX/);
        assert.ok(details.includes('SEARCH o USING INTEGER PRIMARY KEY (rowid=?)'), details.join('\n'));
        assert.ok(!details.some((d) => /^SCAN (o|objects)\b/.test(d)), details.join('\n'));
      }
      // Boxes across the antimeridian: the hits of both boxes.
      {
        await store.objects.upsertMany('r', [{ id: 'east', location: at(179.5, 0) }, { id: 'west', location: at(-179.5, 0) }], N);
        const { plan: kind } = explain({ limit: 10, shape: { w: 179, n: 1, e: -179, s: -1 } });
        assert.equal(kind, 'spatial');
        assert.deepEqual((await store.objects.list('r', { limit: 10, shape: { w: 179, n: 1, e: -179, s: -1 } })).items.map((o) => o.id), [
          'east',
          'west',
        ]);
      }
      // A shape holding most of the realm: the id index drives and the page fills early.
      {
        const { plan: kind, details } = explain({ limit: 10, shape: { w: -1, n: 1, e: 1, s: -1 } });
        assert.equal(kind, 'ordered');
        assert.deepEqual(details, [index]);
      }
      // Search: FTS5 match (in the attached search file), rows by rowid.
      assert.deepEqual(
        plan(
          "SELECT o.id FROM search.object_fts CROSS JOIN objects o ON o.rowid = object_fts.rowid WHERE object_fts MATCH ? AND o.realm = ? ORDER BY bm25(object_fts), o.id LIMIT 5",
          ['"1xobj"*', 'r'],
        ).slice(0, 2),
        ['SCAN search.object_fts VIRTUAL TABLE INDEX 0:M2', 'SEARCH o USING INTEGER PRIMARY KEY (rowid=?)'],
      );
      // History pages (the store's own statement, chunkPageSql) and retention: the (orow, last) index (schema.ts version 15).
      assert.deepEqual(plan(chunkPageSql(false), [1, Date.parse(T0), Date.parse(T2)]), ['SEARCH history USING INDEX history_by_object (orow=? AND last>? AND last<?)']);
      assert.deepEqual(plan(chunkPageSql(true), [1, Date.parse(T0), Date.parse(T2)]), ['SEARCH history USING INDEX history_by_object (orow=? AND last>? AND last<?)']);
      // Retention of a chunk of objects: a seek on the key per object of the chunk.
      assert.deepEqual(plan(PRUNE_CHUNKS_SQL, ['r', 'o1', 'o9', Date.parse(T2)]), [
        'SEARCH history USING COVERING INDEX history_by_object (orow=? AND last<?)',
        'LIST SUBQUERY 1',
        'SEARCH objects USING COVERING INDEX sqlite_autoindex_objects_1 (realm=? AND id>? AND id<?)',
      ]);
      // The old rows of a batch: one index probe per id.
      assert.equal(
        plan('SELECT rowid FROM objects WHERE realm = ? AND id IN (SELECT value FROM json_each(?))', ['r', '["o1","o2"]'])[0],
        'SEARCH objects USING COVERING INDEX sqlite_autoindex_objects_1 (realm=? AND id=?)',
      );
      // Both plans give the same exact answers.
      const big: Shape = { w: -1, n: 1, e: 1, s: -1 };
      const all = await store.objects.list('r', { limit: 10_000, shape: big });
      assert.equal(all.items.length, 6000);
      const small = await store.objects.list('r', { limit: 10_000, shape: { w: 0.2, n: 0.3, e: 0.4, s: 0.2 } });
      assert.deepEqual(
        small.items.map((o) => o.id),
        all.items.filter((o) => o.location !== null && o.location.longitude >= 0.2 && o.location.longitude <= 0.4 && o.location.latitude >= 0.2 && o.location.latitude <= 0.3).map((o) => o.id),
      );
    }));
});

void describe('page cursor', () => {
  void it('round-trips any id and is URL-safe', () => {
    for (const id of ['a', 'vehicle/17', '😀', '\uFFFD', 'a b&c=d?', '"quoted"']) {
      const cursor = encodeCursor(id);
      assert.match(cursor, /^[A-Za-z0-9_-]+$/);
      assert.equal(decodeCursor(cursor), id);
    }
  });

  void it('rejects a cursor with bytes that are not UTF-8 or with extra fields', () => {
    const isInvalidCursor = (err: unknown) => err instanceof LocusError && err.code === 'invalid_cursor' && err.status === 400;
    assert.throws(() => decodeCursor(Buffer.from([0x7b, 0xff, 0x7d]).toString('base64url')), isInvalidCursor);
    assert.throws(() => decodeCursor(Buffer.from('{"v":1,"after":"a","x":1}').toString('base64url')), isInvalidCursor);
    assert.throws(() => decodeCursor(Buffer.from('{"v":2,"after":"a"}').toString('base64url')), isInvalidCursor);
    assert.throws(() => decodeCursor(Buffer.from('{"v":1,"after":""}').toString('base64url')), isInvalidCursor);
    // Non-canonical trailing bits.
    const good = encodeCursor('a');
    assert.throws(() => decodeCursor(`${good}A`), isInvalidCursor);
  });
});
