/**
 * Batches of updates of objects picked at random (object-writes.ts writes a batch's
 * existing objects in the order of their rowids, not the order given): each change comes
 * back in the order of the patches, with the object's state before and after; objects,
 * and their history across held fixes and chunks, read back as a model of the writes says.
 * And an acknowledged batch survives a crash of the process right after its
 * acknowledgement (WAL, synchronous=NORMAL: the commit is in the file before the caller
 * hears of it).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Location, ObjectPatch, TrackedObject } from '../../internal/domain/types.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { assertHistoryPages, historyStores } from '../support/history-stores.js';

const NOW = '2024-05-01T12:00:00.000Z';
const BASE = Date.parse('2024-05-01T10:00:00.000Z');
const time = (offset: number): string => new Date(BASE + offset).toISOString();
const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

const stores = historyStores([
  { held: 1, span: 40, fixes: 3 },
  { held: 3, span: 200, fixes: 4 },
  { held: 8, span: 500, fixes: 64 },
]);
const dir = mkdtempSync(join(tmpdir(), 'locus-random-updates-'));
after(async () => {
  for (const { store } of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

let realms = 0;

void describe('random updates', () => {
  for (const { name, store } of stores) {
    void it(`return changes in the order of the patches and keep every object and its history (${name})`, async () => {
      const OBJECTS = 40;
      const batch = fc.record({
        // Objects in any order (the batch writes them by rowid), a few new ones among them.
        ids: fc.uniqueArray(fc.integer({ min: 0, max: OBJECTS + 9 }), { minLength: 2, maxLength: 30 }),
        // Some updates change the label too (the general UPDATE, not the move).
        relabel: fc.integer({ min: 0, max: 5 }),
        // Forgetting the recent objects makes the batch read its old rows.
        forget: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 12 }), async (batches) => {
          const realm = `r${++realms}`;
          await store.realms.put(realm, SETTINGS, NOW);
          const ids = Array.from({ length: OBJECTS + 10 }, (_, i) => `o${i}`);
          // Objects o0 … o39 exist first, written in one batch in id order (rowids in that order).
          await store.objects.upsertMany(
            realm,
            ids.slice(0, OBJECTS).map((id, i) => ({ id, location: { longitude: i, latitude: 0, time: time(0) } })),
            NOW,
          );
          const model = new Map<string, TrackedObject>();
          const fixes = new Map<string, Location[]>();
          for (const id of ids.slice(0, OBJECTS)) {
            const obj = await store.objects.get(realm, id);
            assert.ok(obj !== null);
            model.set(id, obj);
            fixes.set(id, [obj.location as Location]);
          }
          let step = 0;
          for (const { ids: picked, relabel, forget } of batches) {
            if (forget) store.objects.recent.clear();
            step++;
            const patches: ObjectPatch[] = picked.map((n, k) => {
              const location = { longitude: n + step / 100, latitude: step, speed: k, time: time(step * 10) };
              return k % 6 === relabel ? { id: ids[n] as string, label: `L${step}`, location } : { id: ids[n] as string, location };
            });
            const changes = await store.objects.upsertMany(realm, patches, NOW);
            assert.deepEqual(
              changes.map((c) => c.id),
              patches.map((p) => p.id),
              'changes in the order of the patches',
            );
            for (const [k, change] of changes.entries()) {
              const patch = patches[k] as ObjectPatch;
              assert.deepEqual(change.old, model.get(patch.id) ?? null, `old state of ${patch.id}`);
              assert.deepEqual(change.new?.location, patch.location);
              if (patch.label !== undefined) assert.equal(change.new?.label, patch.label);
              model.set(patch.id, change.new as TrackedObject);
              fixes.set(patch.id, [...(fixes.get(patch.id) ?? []), patch.location as Location]);
            }
          }
          store.objects.recent.clear();
          for (const [id, obj] of model) {
            assert.deepEqual(await store.objects.get(realm, id), obj, `object ${id}`);
            await assertHistoryPages(store, realm, id, fixes.get(id) ?? [], { order: 'asc', from: undefined, to: undefined, limit: 5 }, `history of ${id}`);
          }
        }),
        { numRuns: 15 },
      );
    });
  }

  void it('write an object whose rowid is too large to sort by, with the others of its batch', async () => {
    const path = join(dir, 'large-rowid.db');
    let store = openSqliteStore(path);
    await store.realms.put('big', SETTINGS, NOW);
    await store.objects.upsertMany('big', [0, 1, 2, 3].map((i) => ({ id: `o${i}`, location: { longitude: i, latitude: 0, time: time(0) } })), NOW);
    await store.close();
    const db = new Database(path);
    db.prepare('UPDATE objects SET rowid = ? WHERE id = ?').run(2 ** 52, 'o2');
    db.close();
    store = openSqliteStore(path);
    try {
      const patches: ObjectPatch[] = [3, 2, 0, 1].map((i) => ({ id: `o${i}`, location: { longitude: i, latitude: 1, time: time(1000) } }));
      const changes = await store.objects.upsertMany('big', patches, NOW);
      assert.deepEqual(
        changes.map((c) => [c.id, c.old?.location?.latitude, c.new?.location?.latitude]),
        patches.map((p) => [p.id, 0, 1]),
      );
      store.objects.recent.clear();
      for (const i of [0, 1, 2, 3]) {
        assert.deepEqual((await store.objects.get('big', `o${i}`))?.location, { longitude: i, latitude: 1, time: time(1000) });
        const history = await store.objects.history('big', `o${i}`, { order: 'asc', limit: 10 });
        assert.deepEqual(
          history.items.map((e) => e.location.latitude),
          [0, 1],
        );
      }
    } finally {
      await store.close();
    }
  });

  void it('keep an acknowledged batch when the process is killed right after the acknowledgement', async () => {
    const path = join(dir, 'crash.db');
    const storeModule = new URL('../../internal/store/sqlite/sqlite-store.js', import.meta.url).href;
    // The child writes 2,000 objects, then three batches of updates of objects picked at
    // random, prints the acknowledgement of the last one and kills itself at once: no
    // close, no checkpoint.
    const child = `
      const { openSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = openSqliteStore(${JSON.stringify(path)});
      await store.realms.put('crash', ${JSON.stringify(SETTINGS)}, ${JSON.stringify(NOW)});
      const N = 2000;
      await store.objects.upsertMany('crash', Array.from({ length: N }, (_, i) => ({ id: 'o' + i, data: { n: i }, location: { longitude: i / 100, latitude: 1, time: ${JSON.stringify(time(0))} } })), ${JSON.stringify(NOW)});
      let seed = 1;
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      for (let b = 1; b <= 3; b++) {
        const picked = new Set();
        while (picked.size < 500) picked.add(Math.floor(random() * N));
        const patches = [...picked].map((i) => ({ id: 'o' + i, location: { longitude: i / 100, latitude: 1 + b, time: new Date(${BASE} + b * 1000).toISOString() } }));
        await store.objects.upsertMany('crash', patches, ${JSON.stringify(NOW)});
        process.stdout.write(JSON.stringify(patches.map((p) => p.id)) + '\\n');
      }
      process.kill(process.pid, 'SIGKILL');
    `;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => proc.once('close', (_code, sig) => resolve(sig)));
    assert.equal(signal, 'SIGKILL', err);
    const acked = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
    assert.equal(acked.length, 3, err);
    // The latest acknowledged location of each object, and the fixes it replaced.
    const latest = new Map<string, number>();
    const replaced = new Map<string, number[]>();
    acked.forEach((batchIds, k) => {
      for (const id of batchIds) {
        replaced.set(id, [...(replaced.get(id) ?? [0]), k + 1]);
        latest.set(id, k + 1);
      }
    });
    const store = openSqliteStore(path);
    try {
      for (let i = 0; i < 2000; i++) {
        const id = `o${i}`;
        const obj = await store.objects.get('crash', id);
        const b = latest.get(id) ?? 0;
        assert.deepEqual(obj?.location, { longitude: i / 100, latitude: 1 + b, time: time(b * 1000) }, `location of ${id}`);
        assert.deepEqual(obj?.data, { n: i });
        const history = await store.objects.history('crash', id, { order: 'asc', limit: 10 });
        assert.deepEqual(
          history.items.map((e) => e.location.latitude),
          (replaced.get(id) ?? [0]).map((k) => 1 + k),
          `history of ${id}`,
        );
      }
    } finally {
      await store.close();
    }
  });
});
