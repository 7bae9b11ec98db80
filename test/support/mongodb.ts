/**
 * MongoDB for tests: the server named by LOCUS_TEST_MONGODB_URI (the GitHub workflow's
 * `mongo` service container), or none. Each store a test opens gets a control database of
 * its own under a prefix unique to the test run, and its databases are dropped when it closes.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { isStoreDatabase } from '../../internal/store/mongodb/names.js';
import { openMongoStore, type MongoStore } from '../../internal/store/mongodb/mongo-store.js';

/** The test server's URL, or null when none is configured. */
export const testMongoUri: string | null = process.env.LOCUS_TEST_MONGODB_URI === undefined || process.env.LOCUS_TEST_MONGODB_URI === '' ? null : process.env.LOCUS_TEST_MONGODB_URI;

/** The URL with its path (database) replaced by `database`, its options kept. */
export function withDatabase(uri: string, database: string): string {
  const query = uri.indexOf('?');
  const base = query < 0 ? uri : uri.slice(0, query);
  const options = query < 0 ? '' : uri.slice(query);
  const schemeEnd = base.indexOf('://') + 3;
  const slash = base.indexOf('/', schemeEnd);
  const authority = slash < 0 ? base : base.slice(0, slash);
  return `${authority}/${database}${options}`;
}

const run = randomBytes(4).toString('hex');
let opened = 0;

/** Drops every database of the store whose control database is `control`. */
export async function dropStoreDatabases(uri: string, control: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000 });
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    for (const { name } of databases) if (isStoreDatabase(control, name)) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}

/** A fresh, empty MongoDB store; closing it drops its databases. */
export async function freshMongoStore(uri: string): Promise<MongoStore> {
  const control = `lt${run}_${++opened}`;
  const store = await openMongoStore(withDatabase(uri, control));
  const close = store.close.bind(store);
  store.close = async (): Promise<void> => {
    try {
      await close();
    } finally {
      await dropStoreDatabases(uri, control);
    }
  };
  return store;
}
