import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { LocusError } from '../../internal/errors.js';
import type { Data, ObjectPatch } from '../../internal/domain/types.js';
import { storeContract } from '../../internal/store/contract.js';
import { decodeCursor, encodeCursor } from '../../internal/store/cursor.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:00:01.000Z';
const T2 = '2024-05-01T10:00:02.000Z';
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
  realm: string;
  object_id: string;
  time: string;
  location: string;
}

function historyRows(path: string): HistoryRow[] {
  return inspect(path, (db) =>
    db.prepare<[], HistoryRow>('SELECT realm, object_id, time, location FROM history ORDER BY realm, object_id, time').all(),
  );
}

async function withFile(body: (store: SqliteStore, path: string) => Promise<void>): Promise<void> {
  const path = freshPath();
  const store = openSqliteStore(path);
  try {
    await body(store, path);
  } finally {
    await store.close();
  }
}

storeContract('sqlite', () => Promise.resolve(openSqliteStore(freshPath())));

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
      assert.deepEqual(await second.realms.get('acme'), { id: 'acme', settings: SETTINGS, created: N0 });
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

  void it('runs in WAL mode with the schema version set', () =>
    withFile(async (store, path) => {
      await store.ping();
      assert.equal(inspect(path, (db) => db.pragma('journal_mode', { simple: true })), 'wal');
      assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), 1);
      assert.deepEqual(
        inspect(path, (db) =>
          db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all(),
        ).map((row) => row.name),
        ['areas', 'history', 'objects', 'realms', 'tokens'],
      );
    }));

  void it('opens an existing database again without touching its schema version', async () => {
    const path = freshPath();
    await openSqliteStore(path).close();
    const again = openSqliteStore(path);
    await again.ping();
    await again.close();
    assert.equal(inspect(path, (db) => db.pragma('user_version', { simple: true })), 1);
  });

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
      await store.objects.upsertMany('acme', [{ id: 'a', label: 'A', location: { longitude: 1, latitude: 1, time: T0 }, data: { n: 1 } }], N0);
      const before = historyRows(path);

      // The third object's data cannot be serialised: the first two were already written in the transaction.
      const unserialisable = { big: 10n } as unknown as Data;
      const patches: ObjectPatch[] = [
        { id: 'a', label: 'A2', location: { longitude: 2, latitude: 2, time: T1 }, data: { n: 2 } },
        { id: 'b', label: 'B', location: { longitude: 3, latitude: 3, time: T1 } },
        { id: 'c', data: unserialisable },
      ];
      await assert.rejects(store.objects.upsertMany('acme', patches, N1), (err: unknown) => err instanceof LocusError && err.code === 'internal');

      assert.deepEqual(await store.objects.get('acme', 'a'), {
        id: 'a',
        label: 'A',
        location: { longitude: 1, latitude: 1, time: T0 },
        data: { n: 1 },
        seen: N0,
      });
      assert.equal(await store.objects.get('acme', 'b'), null);
      assert.equal(await store.objects.get('acme', 'c'), null);
      assert.deepEqual(historyRows(path), before);
      assert.equal(before.length, 1);
      // And the store still works.
      await store.objects.upsertMany('acme', [{ id: 'b', label: 'B' }], N1);
      assert.equal((await store.objects.get('acme', 'b'))?.label, 'B');
    }));

  void it('history holds every fix of a bulk; equal times keep the later one', () =>
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
        [
          ['acme', 'x', T0, { longitude: 2, latitude: 2, time: T0 }],
          ['acme', 'x', T1, { longitude: 3, latitude: 3, time: T1, speed: 4 }],
          ['acme', 'y', T2, { longitude: 9, latitude: 9, time: T2 }],
          ['other', 'x', T0, { longitude: 5, latitude: 5, time: T0 }],
        ],
      );
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
