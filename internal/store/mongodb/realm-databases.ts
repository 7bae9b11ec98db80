/**
 * The databases of the realms: named from the realm key (names.ts), provisioned (their
 * indexes made) once per process before the first write, dropped with their realm.
 *
 * A write needs no registry entry (the store port lets objects be written to a realm that
 * was never put: services check realms), so a realm's database name is a function of its
 * key alone; the registry records it for operators. Realms this process deleted are
 * remembered: a write for one fails with `not_found` until the realm is put again (a
 * write that waited through the delete must not create the database again).
 */
import type { Collection, Db, Document, MongoClient } from 'mongodb';
import { unknownRealm } from '../../errors.js';
import { ensureRealmIndexes } from './indexes.js';
import { realmDatabaseName } from './names.js';

export class RealmDatabases {
  private readonly provisioned = new Map<string, Promise<void>>();
  private readonly deleted = new Set<string>();

  constructor(
    private readonly client: MongoClient,
    readonly control: string,
    /** True when the realm is registered (read from the registry). */
    private readonly registered: (realm: string) => Promise<boolean>,
  ) {}

  name(realm: string): string {
    return realmDatabaseName(this.control, realm);
  }

  db(realm: string): Db {
    return this.client.db(this.name(realm));
  }

  collection<T extends Document>(realm: string, name: 'objects' | 'areas' | 'history' | 'tasks' | 'counters'): Collection<T> {
    return this.db(realm).collection<T>(name);
  }

  /** The realm's database, its indexes made; `not_found` for a realm this process deleted and nobody put again. */
  async forWrite(realm: string): Promise<Db> {
    if (this.deleted.has(realm)) {
      if (!(await this.registered(realm))) throw unknownRealm(realm);
      this.deleted.delete(realm);
    }
    const db = this.db(realm);
    let ready = this.provisioned.get(realm);
    if (ready === undefined) {
      ready = ensureRealmIndexes(db, null);
      this.provisioned.set(realm, ready);
      ready.catch(() => {
        if (this.provisioned.get(realm) === ready) this.provisioned.delete(realm);
      });
    }
    await ready;
    return db;
  }

  /** Provisions the realm's database (indexes and history TTL): at realm put/create and at start. */
  async provision(realm: string, retentionDays: number): Promise<void> {
    this.deleted.delete(realm);
    const ready = ensureRealmIndexes(this.db(realm), retentionDays);
    this.provisioned.set(realm, ready);
    try {
      await ready;
    } catch (err) {
      if (this.provisioned.get(realm) === ready) this.provisioned.delete(realm);
      throw err;
    }
  }

  /** Drops the realm's database; later writes for it fail until it is put again. */
  async drop(realm: string): Promise<void> {
    this.deleted.add(realm);
    this.provisioned.delete(realm);
    await this.db(realm).dropDatabase();
  }
}
