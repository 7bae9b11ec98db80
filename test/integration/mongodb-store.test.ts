/**
 * The store contract against the MongoDB adapter, where a server is available
 * (LOCUS_TEST_MONGODB_URI: the GitHub workflow's `mongo` service container). No MongoDB
 * server can run on the development machines: there this file reports one skipped test,
 * and test/unit/mongodb-translation.test.ts checks the documents the adapter sends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import { MongoClient } from 'mongodb';
import { clientOptions, MongoStore, openMongoStore } from '../../internal/store/mongodb/mongo-store.js';
import { storeContract } from '../contract/store-contract.js';
import { freshMongoStore, testMongoUri } from '../support/mongodb.js';

void describe('mongodb store: an unreachable server', () => {
  // Needs no server: nothing listens on port 1.
  void it('a server that cannot be reached is `unavailable`, naming the URL without its password', async () => {
    const started = Date.now();
    await assert.rejects(openMongoStore('mongodb://user:secret@127.0.0.1:1/locus?serverSelectionTimeoutMS=300'), (err: unknown) => {
      assert.ok(err instanceof LocusError);
      assert.equal(err.code, 'unavailable');
      assert.match(err.message, /^the store at mongodb:\/\/user:\*\*\*@127\.0\.0\.1:1\/locus\?serverSelectionTimeoutMS=300 cannot be reached/);
      assert.doesNotMatch(err.message, /secret/);
      return true;
    });
    assert.ok(Date.now() - started < 30_000);
  });

  void it('ping rejects with `unavailable` while the server cannot be reached (so /readyz is false)', async () => {
    const client = new MongoClient('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300', clientOptions('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300'));
    const store = new MongoStore(client, 'locus');
    try {
      await assert.rejects(store.ping(), (err: unknown) => err instanceof LocusError && err.code === 'unavailable');
    } finally {
      await store.close();
    }
    await assert.rejects(store.ping(), (err: unknown) => err instanceof LocusError && err.code === 'unavailable' && err.message === 'store is closed');
  });

  void it('bad limits and cursors are refused before the server is asked, as rejected promises', async () => {
    const client = new MongoClient('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300', clientOptions('mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300'));
    const store = new MongoStore(client, 'locus');
    const code = (expected: string) => (err: unknown) => err instanceof LocusError && err.code === expected;
    try {
      await assert.rejects(store.objects.list('r', { limit: 0 }), code('invalid_query'));
      await assert.rejects(store.objects.list('r', { limit: 10, cursor: 'nope' }), code('invalid_cursor'));
      await assert.rejects(store.areas.list('r', { limit: 10, cursor: 'nope' }), code('invalid_cursor'));
      await assert.rejects(store.objects.search('r', { words: ['a'], limit: 10_001 }), code('invalid_query'));
      await assert.rejects(store.objects.history('r', 'a', { limit: 0, order: 'asc' }), code('invalid_query'));
      await assert.rejects(store.objects.history('r', 'a', { limit: 5, order: 'asc', cursor: 'nope' }), code('invalid_cursor'));
      // A query the server must answer: unavailable.
      await assert.rejects(store.objects.get('r', 'a'), code('unavailable'));
    } finally {
      await store.close();
    }
  });
});

if (testMongoUri === null) {
  void describe('store contract: mongodb', () => {
    void it('runs where LOCUS_TEST_MONGODB_URI names a MongoDB server', { skip: 'LOCUS_TEST_MONGODB_URI is not set' }, () => undefined);
  });
} else {
  const uri = testMongoUri;
  storeContract('mongodb', () => freshMongoStore(uri));

  void describe('mongodb store: connection', () => {
    void it('ping resolves while the server answers', async () => {
      const store = await freshMongoStore(uri);
      try {
        await store.ping();
      } finally {
        await store.close();
      }
    });
  });
}
