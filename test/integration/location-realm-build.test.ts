import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { ObjectPatch } from '../../internal/domain/types.js';
import { REALM_CHUNK } from '../../internal/store/sqlite/location-index.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T11:00:00.000Z';
const WORLD = [{ minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }];

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function withStore(body: (store: SqliteStore, path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'locus-location-'));
  dirs.push(dir);
  const path = join(dir, 'locus.db');
  const store = openSqliteStore(path);
  try {
    // The pass of the open (an empty file) is over: what follows is the realm builds' work.
    await store.objects.locations.warm();
    await body(store, path);
  } finally {
    await store.close();
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const spread = (realm: string, from: number, count: number): ObjectPatch[] =>
  Array.from({ length: count }, (_, i) => ({ id: `${realm}-${String(from + i).padStart(6, '0')}`, location: { longitude: ((from + i) * 7) % 360 - 180, latitude: ((from + i) * 13) % 170 - 85, time: T0 } }));

/** The realm's grid as a map rowid → [lon, lat]. */
function gridOf(store: SqliteStore, realm: string): Map<number, [number, number]> {
  const held = new Map<number, [number, number]>();
  store.objects.locations.grid(realm).visit(WORLD, (rowid, lon, lat) => void held.set(rowid, [lon, lat]));
  return held;
}

/** The realm's located rows, read through a second connection. */
function rowsOf(path: string, realm: string): Map<number, [number, number]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare<[string], [number, number, number]>('SELECT rowid, lon, lat FROM objects WHERE realm = ? AND lon IS NOT NULL').raw(true).all(realm);
    return new Map(rows.map(([rowid, lon, lat]) => [rowid, [lon, lat]]));
  } finally {
    db.close();
  }
}

describe('spatial index: a realm written to and not held is built in the background', () => {
  void it('from its own rows, a chunk per turn, with writes racing it; then held without any query', () =>
    withStore(async (store, path) => {
      const n = REALM_CHUNK * 4 + 17;
      await store.objects.upsertMany('a', spread('a', 0, n), N0);
      await store.objects.upsertMany('b', spread('b', 0, 10), N0);
      assert.deepEqual(store.objects.locations.building().sort(), ['a', 'b'], 'writes to realms not held start their builds');
      assert.deepEqual(store.objects.locations.held(), []);
      // Moves of rows the build has read and of rows it has not, deletes, new rows, a row
      // losing its location: each turn a step of the build, then a write.
      for (let round = 0; round < 4; round++) {
        await turn();
        const early = `a-${String(round).padStart(6, '0')}`;
        const late = `a-${String(n - 1 - round).padStart(6, '0')}`;
        await store.objects.upsertMany('a', [{ id: early, location: { longitude: 1 + round, latitude: 1, time: T1 } }, { id: late, location: { longitude: 2, latitude: 2 + round, time: T1 } }, ...spread('a', n + round * 10, 10)], N1);
        await store.objects.delete('a', `a-${String(REALM_CHUNK * round + 5).padStart(6, '0')}`, N1);
      }
      await store.objects.upsertMany('a', [{ id: 'no-location', label: 'x' }], N1);
      for (let i = 0; i < 20 && store.objects.locations.building().length > 0; i++) await turn();
      assert.deepEqual(store.objects.locations.building(), [], 'the builds end');
      assert.deepEqual(store.objects.locations.held().sort(), ['a', 'b'], 'held without a shape query');
      assert.deepEqual(gridOf(store, 'a'), rowsOf(path, 'a'));
      assert.deepEqual(gridOf(store, 'b'), rowsOf(path, 'b'));
      assert.equal(gridOf(store, 'a').size, n + 40 - 4);
      // Held from now on: a later write is applied, not built again.
      await store.objects.upsertMany('a', spread('a', 100_000, 3), N1);
      assert.deepEqual(store.objects.locations.building(), []);
      assert.deepEqual(gridOf(store, 'a'), rowsOf(path, 'a'));
    }));

  void it('a shape query meanwhile finishes the build at once; a realm deleted meanwhile is dropped', () =>
    withStore(async (store, path) => {
      const n = REALM_CHUNK * 3 + 1;
      await store.objects.upsertMany('a', spread('a', 0, n), N0);
      await store.objects.upsertMany('gone', spread('gone', 0, n), N0);
      await turn();
      assert.deepEqual(store.objects.locations.building().sort(), ['a', 'gone']);
      assert.deepEqual(gridOf(store, 'a'), rowsOf(path, 'a'));
      assert.equal(gridOf(store, 'a').size, n);
      assert.deepEqual(store.objects.locations.building(), ['gone']);
      await store.realms.put('gone', { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, N1);
      await store.realms.delete('gone');
      assert.deepEqual(store.objects.locations.building(), [], 'its build is dropped with it');
      for (let i = 0; i < 5; i++) await turn();
      assert.deepEqual(store.objects.locations.held(), ['a']);
    }));
});
