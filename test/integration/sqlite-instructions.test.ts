/**
 * The SQLite side of instructions beyond the store contract: the version 16 migration of an
 * existing file, one transaction per membership batch (a failing batch keeps nothing), and
 * leases between two stores sharing one file (several processes, store-owner.ts `shared`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { InstructionRecord, PendingAction } from '../../internal/domain/instruction.js';
import { LocusError } from '../../internal/errors.js';
import { SCHEMA_VERSION } from '../../internal/store/sqlite/schema.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const T0 = '2024-05-01T10:00:00.000Z';
const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'locus-sqlite-ins-'));
  dirs.push(dir);
  return join(dir, 'locus.db');
}

function instruction(id: string): InstructionRecord {
  return { id, label: null, source: 'when object(kind="van") then delete()', data: {}, created: N0, updated: N0, generation: 1, suspended: null };
}

function action(key: string, entries: string[]): PendingAction {
  return { key, instruction: 'a', generation: 1, part: 'then', entries, created: N0, attempts: 0 };
}

const NEW_TABLES = ['instruction_members', 'instruction_pending', 'instructions'];

void describe('sqlite store: instructions', () => {
  void it('migrates a version 15 file: the new tables appear, the objects stay, instructions work', async () => {
    const path = freshPath();
    const first = openSqliteStore(path);
    await first.realms.put('acme', SETTINGS, N0);
    await first.objects.upsertMany('acme', [{ id: 'car', label: 'Car', location: { longitude: 1, latitude: 2, time: T0 }, data: { fuel: 1 } }], N0);
    await first.close();
    // Back to version 15 as released: none of the instruction tables.
    const raw = new Database(path);
    for (const table of NEW_TABLES) raw.exec(`DROP TABLE ${table}`);
    raw.pragma('user_version = 15');
    raw.close();
    const store = openSqliteStore(path);
    try {
      const inspect = new Database(path, { readonly: true });
      try {
        assert.equal(inspect.pragma('user_version', { simple: true }), SCHEMA_VERSION);
        const tables = inspect.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'instruction%' ORDER BY name").pluck().all();
        assert.deepEqual(tables, NEW_TABLES);
      } finally {
        inspect.close();
      }
      assert.equal((await store.objects.get('acme', 'car'))?.label, 'Car');
      await store.instructions.create('acme', instruction('a'));
      await store.instructions.applyMembership('acme', [{ instruction: 'a', generation: 1, joined: ['o:car'], left: [] }], [action('k1', ['o:car'])]);
      assert.deepEqual(await store.instructions.members('acme', 'a'), ['o:car']);
      assert.equal((await store.leases.acquire('instructions:acme', 'p1', 1000, N0)).holder, 'p1');
    } finally {
      await store.close();
    }
  });

  void it('a membership batch that fails part way keeps nothing: neither members nor actions, of any instruction', async () => {
    const store = openSqliteStore(':memory:');
    try {
      await store.instructions.create('r', instruction('a'));
      await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['x'], left: [] }], [action('k1', ['x'])]);
      // The second action cannot be written (its entries are no JSON): it fails after the members and the first action were written.
      const broken = { ...action('k3', ['z']), entries: [1n] } as unknown as PendingAction;
      await assert.rejects(
        store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['y', 'z'], left: ['x'] }], [action('k2', ['y']), broken]),
        (err: unknown) => err instanceof LocusError && err.code === 'internal',
      );
      assert.deepEqual(await store.instructions.members('r', 'a'), ['x']);
      assert.deepEqual(
        (await store.instructions.pending('r', 10)).map((a) => a.key),
        ['k1'],
      );
    } finally {
      await store.close();
    }
  });

  void it('leases are kept in <file>-leases: renewing one commits nothing to the database (the others keep their held state), and it outlives a restart', async () => {
    const path = freshPath();
    const store = openSqliteStore(path, { ownership: 'shared' });
    const watcher = new Database(path, { readonly: true });
    try {
      const version = (): number => watcher.pragma('data_version', { simple: true }) as number;
      const before = version();
      await store.leases.acquire('instructions:r', 'p1', 10_000, N0);
      await store.leases.acquire('instructions:r', 'p1', 10_000, N1);
      await store.leases.release('instructions:r', 'p1');
      await store.leases.acquire('instructions:r', 'p1', 10_000, N1);
      assert.equal(version(), before);
      // Instruction state is the database's: its commits are seen.
      await store.instructions.create('r', instruction('a'));
      assert.notEqual(version(), before);
    } finally {
      watcher.close();
      await store.close();
    }
    const lease = new Database(`${path}-leases`, { readonly: true });
    try {
      assert.deepEqual(lease.prepare('SELECT name, holder FROM leases').all(), [{ name: 'instructions:r', holder: 'p1' }]);
    } finally {
      lease.close();
    }
    const again = openSqliteStore(path);
    try {
      assert.deepEqual(await again.leases.acquire('instructions:r', 'p2', 10_000, N1), { name: 'instructions:r', holder: 'p1', expires: '2024-05-01T12:00:11.000Z' });
    } finally {
      await again.close();
    }
  });

  void it('two stores on one file (shared): one lease holder at a time, and each sees the other\'s instructions and state', async () => {
    const path = freshPath();
    const one = openSqliteStore(path, { ownership: 'shared' });
    const two = openSqliteStore(path, { ownership: 'shared' });
    try {
      const [a, b] = await Promise.all([one.leases.acquire('instructions:r', 'p1', 10_000, N0), two.leases.acquire('instructions:r', 'p2', 10_000, N0)]);
      assert.equal(a.holder, 'p1');
      assert.equal(b.holder, 'p1');
      assert.equal((await two.leases.acquire('instructions:r', 'p2', 10_000, N1)).holder, 'p1');
      await one.leases.release('instructions:r', 'p1');
      assert.equal((await two.leases.acquire('instructions:r', 'p2', 10_000, N1)).holder, 'p2');

      await one.instructions.create('r', instruction('a'));
      await assert.rejects(two.instructions.create('r', instruction('a')), (err: unknown) => err instanceof LocusError && err.code === 'conflict');
      await two.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['x'], left: [] }], [action('k1', ['x'])]);
      assert.deepEqual(await one.instructions.members('r', 'a'), ['x']);
      assert.deepEqual((await one.instructions.pending('r', 10)).map((p) => p.key), ['k1']);
      await one.instructions.update('r', 'a', { source: 'when object(kind="car") then delete()' }, N1);
      assert.deepEqual(await two.instructions.members('r', 'a'), []);
      assert.equal((await two.instructions.get('r', 'a'))?.generation, 2);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
