/**
 * The MongoDB side of instructions beyond the store contract (where LOCUS_TEST_MONGODB_URI
 * names a server): two stores on one control database (two processes) racing for a lease, and
 * state a crash can leave behind (rows of a void incarnation) that no read returns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MongoClient, ObjectId } from 'mongodb';
import type { InstructionRecord } from '../../internal/domain/instruction.js';
import type { InstructionDoc, PendingDoc } from '../../internal/store/mongodb/instruction-store.js';
import { openMongoStore } from '../../internal/store/mongodb/mongo-store.js';
import { realmDatabaseName } from '../../internal/store/mongodb/names.js';
import { freshMongoStore, testMongoUri, withDatabase } from '../support/mongodb.js';

const N0 = '2024-05-01T12:00:00.000Z';

function instruction(id: string): InstructionRecord {
  return { id, label: null, source: 'when object(kind="van") then delete()', data: {}, created: N0, updated: N0, generation: 1, suspended: null };
}

if (testMongoUri === null) {
  void describe('mongodb store: instructions', () => {
    void it('runs where LOCUS_TEST_MONGODB_URI names a MongoDB server', { skip: 'LOCUS_TEST_MONGODB_URI is not set' }, () => undefined);
  });
} else {
  const uri = testMongoUri;
  void describe('mongodb store: instructions', () => {
    void it('two stores on one control database (two processes): of their concurrent acquires one wins, and both are told so', async () => {
      const one = await freshMongoStore(uri);
      const two = await openMongoStore(withDatabase(uri, one.controlName));
      try {
        for (let round = 0; round < 5; round++) {
          const name = `instructions:r${round}`;
          const [a, b] = await Promise.all([one.leases.acquire(name, 'p1', 10_000, N0), two.leases.acquire(name, 'p2', 10_000, N0)]);
          assert.equal(a.holder, b.holder);
          assert.deepEqual(await one.leases.acquire(name, 'p3', 10_000, N0), a);
        }
      } finally {
        await two.close();
        await one.close();
      }
    });

    void it('members and pending actions of a void incarnation (a crash before their cleanup) are read by nobody', async () => {
      const store = await freshMongoStore(uri);
      const client = new MongoClient(uri);
      try {
        await store.instructions.create('r', instruction('a'));
        await store.instructions.applyMembership('r', [{ instruction: 'a', generation: 1, joined: ['x'], left: [] }], []);
        const db = client.db(realmDatabaseName(store.controlName, 'r'));
        // As a crash between the write that voids an incarnation and its cleanup leaves them.
        const stale = new ObjectId();
        await db.collection('instruction_members').insertOne({ incarnation: stale, entry: 'old' });
        await db.collection<PendingDoc>('instruction_pending').insertOne({
          _id: 'k-old',
          instruction: 'a',
          generation: 1,
          incarnation: stale,
          part: 'then',
          entries: ['old'],
          created: N0,
          attempts: 0,
          order: new ObjectId(),
        });
        assert.deepEqual(await store.instructions.members('r', 'a'), ['x']);
        assert.deepEqual(await store.instructions.pending('r', 10), []);
        // Deleted and created again: the new instruction starts empty, whatever was left behind.
        await db.collection<InstructionDoc>('instructions').deleteOne({ _id: 'a' });
        await store.instructions.create('r', instruction('a'));
        assert.deepEqual(await store.instructions.members('r', 'a'), []);
        assert.deepEqual(await store.instructions.pending('r', 10), []);
      } finally {
        await client.close();
        await store.close();
      }
    });
  });
}
