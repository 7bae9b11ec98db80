/**
 * The MongoDB store's grouped writes (object-store.ts), against the server named by
 * LOCUS_TEST_MONGODB_URI (skipped without one): many callers' writes go together, each
 * caller gets its own changes, and the `old` of a change is exactly the document the write
 * replaced, also when another process (here: a second store on the same databases) writes
 * the same object at the same time.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ObjectChange } from '../../internal/domain/types.js';
import { openMongoStore, type MongoStore } from '../../internal/store/mongodb/mongo-store.js';
import { dropStoreDatabases, testMongoUri, withDatabase } from '../support/mongodb.js';

const settings = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };
const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/** Two stores on one set of databases, as two API processes; dropped afterwards. */
async function twoProcesses(uri: string, body: (a: MongoStore, b: MongoStore) => Promise<void>): Promise<void> {
  const control = `lw${randomBytes(4).toString('hex')}`;
  const a = await openMongoStore(withDatabase(uri, control));
  const b = await openMongoStore(withDatabase(uri, control));
  try {
    await a.realms.put('r', settings, at(0));
    await body(a, b);
  } finally {
    await a.close();
    await b.close();
    await dropStoreDatabases(uri, control);
  }
}

void describe('mongodb store: grouped writes', { skip: testMongoUri === null ? 'LOCUS_TEST_MONGODB_URI is not set' : false }, () => {
  const uri = testMongoUri ?? '';

  void it('many callers at once: each gets the changes of its own patches, and an update-only patch of a missing object creates nothing', async () => {
    await twoProcesses(uri, async (a) => {
      const calls = Array.from({ length: 40 }, (_, i) =>
        a.objects.upsertMany('r', [{ id: `o${i}`, location: { longitude: i, latitude: 1, time: at(1) }, data: { i } }], at(1)),
      );
      calls.push(a.objects.upsertMany('r', [{ id: 'ghost', mustExist: true, data: { x: 1 } }], at(1)));
      const results = await Promise.all(calls);
      results.slice(0, 40).forEach((changes, i) => {
        assert.equal(changes.length, 1);
        assert.equal(changes[0]?.id, `o${i}`);
        assert.equal(changes[0]?.old, null);
        assert.deepEqual(changes[0]?.new?.data, { i });
      });
      assert.deepEqual(results[40], []);
      assert.equal(await a.objects.get('r', 'ghost'), null);

      const again = await Promise.all(
        Array.from({ length: 40 }, (_, i) => a.objects.upsertMany('r', [{ id: `o${i}`, mustExist: true, location: { longitude: i, latitude: 2, time: at(2) } }], at(2))),
      );
      again.forEach((changes, i) => {
        assert.deepEqual(changes[0]?.old?.location, { longitude: i, latitude: 1, time: at(1) });
        assert.deepEqual(changes[0]?.new?.location, { longitude: i, latitude: 2, time: at(2) });
        assert.deepEqual(changes[0]?.new?.data, { i });
      });
      const page = await a.objects.history('r', 'o7', { limit: 10, order: 'asc' });
      assert.deepEqual(
        page.items.map((entry) => entry.location.latitude),
        [1, 2],
      );
    });
  });

  void it('two processes writing one object at once: every change reports exactly the state it replaced', async () => {
    await twoProcesses(uri, async (a, b) => {
      const writes = 30;
      const changes: ObjectChange[] = [];
      // Each write adds a key of its own; the old of each change then names the writes before it.
      const writer = async (store: MongoStore, name: string): Promise<void> => {
        for (let i = 0; i < writes; i++) {
          // Other objects in the same groups, as from other connections.
          const [change] = await Promise.all([
            store.objects.upsertMany('r', [{ id: 'x', data: { [`${name}${i}`]: true } }], at(3)),
            store.objects.upsertMany('r', [{ id: `${name}-other-${i}`, data: { i } }], at(3)),
          ]);
          changes.push(...change);
        }
      };
      await Promise.all([writer(a, 'a'), writer(b, 'b')]);
      assert.equal(changes.length, 2 * writes);
      const olds = changes.map((change) => Object.keys(change.old?.data ?? {}).length).sort((x, y) => x - y);
      // Each state of the object was replaced by exactly one write.
      assert.deepEqual(
        olds,
        Array.from({ length: 2 * writes }, (_, i) => i),
      );
      for (const change of changes) {
        const added = Object.keys(change.new?.data ?? {}).filter((key) => !(key in (change.old?.data ?? {})));
        assert.equal(added.length, 1);
      }
      const stored = await a.objects.get('r', 'x');
      assert.equal(Object.keys(stored?.data ?? {}).length, 2 * writes);
    });
  });
});
