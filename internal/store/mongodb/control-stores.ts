/**
 * The control database: the realm registry, tokens (hashes only), tenants and signing keys.
 * Nothing here is held in memory: every lookup reads the database, so a change made by any
 * process is seen by all at once (caches belong to the services, told by the event bus).
 */
import type { Collection, Db } from 'mongodb';
import { defaultTenant } from '../../auth/principal.js';
import { instructionLeaseName } from '../../domain/instruction-update.js';
import { applyRealmPatch } from '../../domain/realm-entity.js';
import { splitRealmKey } from '../../domain/realm-key.js';
import type { Realm, RealmPatch, RealmSettings, SigningKeyRecord, TenantRecord, TokenRecord } from '../../domain/types.js';
import { conflict, LocusError, realmExists } from '../../errors.js';
import type { RealmStore, SigningKeyStore, TenantStore, TokenStore } from '../port.js';
import { keyFromDoc, realmFromDoc, tenantFromDoc, tokenFromDoc, type KeyDoc, type RealmDoc, type TenantDoc, type TokenDoc } from './documents.js';
import type { InstructionRealmDoc, LeaseDoc } from './instruction-store.js';
import { guarded, insertNew } from './mongo-errors.js';
import type { MongoObjectStore } from './object-store.js';
import type { RealmDatabases } from './realm-databases.js';

const UPDATE_ATTEMPTS = 20;

export interface ControlCollections {
  realms: Collection<RealmDoc>;
  tokens: Collection<TokenDoc>;
  tenants: Collection<TenantDoc>;
  keys: Collection<KeyDoc>;
  leases: Collection<LeaseDoc>;
  instructionRealms: Collection<InstructionRealmDoc>;
}

export function controlCollections(db: Db): ControlCollections {
  return {
    realms: db.collection<RealmDoc>('realms'),
    tokens: db.collection<TokenDoc>('tokens'),
    tenants: db.collection<TenantDoc>('tenants'),
    keys: db.collection<KeyDoc>('signing_keys'),
    leases: db.collection<LeaseDoc>('leases'),
    instructionRealms: db.collection<InstructionRealmDoc>('instruction_realms'),
  };
}

const cleanSettings = (s: RealmSettings): RealmSettings => ({
  connectionTimeout: s.connectionTimeout,
  historyRetentionDays: s.historyRetentionDays,
  rateLimit: s.rateLimit,
  // Stored and returned; the data_pairs index (indexes.ts) already serves every data field's conditions.
  ...(s.filterIndexes !== undefined && s.filterIndexes.length > 0 ? { filterIndexes: [...s.filterIndexes] } : {}),
});

export class MongoRealmStore implements RealmStore {
  constructor(
    private readonly c: ControlCollections,
    private readonly databases: RealmDatabases,
    private readonly objects: MongoObjectStore,
  ) {}

  put(id: string, settings: RealmSettings, now: string): Promise<{ realm: Realm; created: boolean }> {
    return guarded(async () => {
      const { tenant, name } = splitRealmKey(id);
      const stored = cleanSettings(settings);
      const before = await this.c.realms.findOneAndUpdate(
        { _id: id },
        { $set: { settings: stored }, $setOnInsert: { tenant, name, label: null, data: '{}', created: now, db: this.databases.name(id), v: 0 } },
        { upsert: true, returnDocument: 'before' },
      );
      await this.databases.provision(id, stored.historyRetentionDays);
      if (before === null) return { realm: { id, tenant, name, label: null, data: {}, settings: stored, created: now }, created: true };
      return { realm: { ...realmFromDoc(before), settings: stored }, created: false };
    });
  }

  create(realm: Realm): Promise<Realm> {
    return guarded(async () => {
      const doc: RealmDoc = {
        _id: realm.id,
        tenant: realm.tenant,
        name: realm.name,
        label: realm.label,
        data: JSON.stringify(realm.data),
        settings: cleanSettings(realm.settings),
        created: realm.created,
        db: this.databases.name(realm.id),
        v: 0,
      };
      await insertNew(this.c.realms, doc, (err) => realmExists(realm.name, err));
      await this.databases.provision(realm.id, realm.settings.historyRetentionDays);
      return realm;
    });
  }

  update(id: string, patch: RealmPatch): Promise<Realm | null> {
    return guarded(async () => {
      for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
        const doc = await this.c.realms.findOne({ _id: id });
        if (doc === null) return null;
        const next = applyRealmPatch(realmFromDoc(doc), patch);
        const result = await this.c.realms.updateOne({ _id: id, v: doc.v }, { $set: { label: next.label, data: JSON.stringify(next.data), v: doc.v + 1 } });
        if (result.matchedCount === 1) return next;
      }
      throw new LocusError('unavailable', 'the realm is being changed by others: try again');
    });
  }

  get(id: string): Promise<Realm | null> {
    return guarded(async () => {
      const doc = await this.c.realms.findOne({ _id: id });
      return doc === null ? null : realmFromDoc(doc);
    });
  }

  list(tenant?: string): Promise<Realm[]> {
    return guarded(async () => {
      const docs = tenant === undefined ? await this.c.realms.find({}, { sort: { _id: 1 } }).toArray() : await this.c.realms.find({ tenant }, { sort: { name: 1 } }).toArray();
      return docs.map(realmFromDoc);
    });
  }

  delete(id: string): Promise<boolean> {
    return guarded(async () => {
      // Writes queued before the delete go first.
      await this.objects.settle();
      const { tenant, name } = splitRealmKey(id);
      const result = await this.c.realms.deleteOne({ _id: id });
      await this.c.tokens.deleteMany({ realm: id });
      // A realm-bound signing key goes with its realm, as its tokens do.
      await this.c.keys.deleteMany({ tenant, realm: name });
      // Its instructions and their state go with its database; so do its entry in the instruction index and its evaluation lease.
      await this.c.instructionRealms.deleteOne({ _id: id });
      await this.c.leases.deleteOne({ _id: instructionLeaseName(id) });
      await this.databases.drop(id);
      return result.deletedCount > 0;
    });
  }

  /** The registered realms' retention (for provisioning at start). */
  async retentions(): Promise<[string, number][]> {
    const docs = await this.c.realms.find({}, { projection: { _id: 1, settings: 1 } }).toArray();
    return docs.map((doc) => [doc._id, doc.settings.historyRetentionDays]);
  }
}

export class MongoTokenStore implements TokenStore {
  constructor(private readonly c: ControlCollections) {}

  create(token: TokenRecord): Promise<void> {
    return guarded(async () => {
      const doc: TokenDoc = { _id: token.id, realm: token.realm, hash: token.hash, scope: token.scope, created: token.created };
      await insertNew(this.c.tokens, doc, (err) => new LocusError('conflict', 'token already exists', { cause: err }));
    });
  }

  findByHash(hash: string): Promise<TokenRecord | null> {
    return guarded(async () => {
      const doc = await this.c.tokens.findOne({ hash });
      return doc === null ? null : tokenFromDoc(doc);
    });
  }

  listByRealm(realm: string): Promise<TokenRecord[]> {
    return guarded(async () => (await this.c.tokens.find({ realm }, { sort: { created: 1, _id: 1 } }).toArray()).map(tokenFromDoc));
  }

  delete(realm: string, id: string): Promise<boolean> {
    return guarded(async () => (await this.c.tokens.deleteOne({ _id: id, realm })).deletedCount > 0);
  }
}

export class MongoTenantStore implements TenantStore {
  constructor(private readonly c: ControlCollections) {}

  create(tenant: TenantRecord): Promise<TenantRecord> {
    return guarded(async () => {
      await insertNew(this.c.tenants, { _id: tenant.id, label: tenant.label, created: tenant.created }, () => conflict(`tenant with id ${tenant.id} already exists`));
      return { ...tenant };
    });
  }

  get(id: string): Promise<TenantRecord | null> {
    return guarded(async () => {
      const doc = await this.c.tenants.findOne({ _id: id });
      return doc === null ? null : tenantFromDoc(doc);
    });
  }

  list(): Promise<TenantRecord[]> {
    return guarded(async () => (await this.c.tenants.find({}, { sort: { _id: 1 } }).toArray()).map(tenantFromDoc));
  }

  /**
   * Not atomic across the collections (no transaction): a realm created for the tenant
   * while it is being deleted can outlive it; the services create realms of existing
   * tenants only.
   */
  delete(id: string): Promise<boolean> {
    return guarded(async () => {
      if (id === defaultTenant) throw conflict('the default tenant cannot be deleted');
      if ((await this.c.tenants.findOne({ _id: id })) === null) return false;
      if ((await this.c.realms.findOne({ tenant: id }, { projection: { _id: 1 } })) !== null) throw conflict(`tenant ${id} still has realms: delete them first`);
      await this.c.keys.deleteMany({ tenant: id });
      return (await this.c.tenants.deleteOne({ _id: id })).deletedCount > 0;
    });
  }

  /** The default tenant exists in every store. */
  async ensureDefault(now: string): Promise<void> {
    await this.c.tenants.updateOne({ _id: defaultTenant }, { $setOnInsert: { label: null, created: now } }, { upsert: true });
  }
}

export class MongoSigningKeyStore implements SigningKeyStore {
  constructor(private readonly c: ControlCollections) {}

  create(key: SigningKeyRecord): Promise<void> {
    return guarded(async () => {
      await insertNew(this.c.keys, { _id: key.id, tenant: key.tenant, realm: key.realm, secret: key.secret, created: key.created }, () => conflict(`signing key ${key.id} already exists`));
    });
  }

  get(id: string): Promise<SigningKeyRecord | null> {
    return guarded(async () => {
      const doc = await this.c.keys.findOne({ _id: id });
      return doc === null ? null : keyFromDoc(doc);
    });
  }

  listByTenant(tenant: string): Promise<SigningKeyRecord[]> {
    return guarded(async () => (await this.c.keys.find({ tenant }, { sort: { created: 1, _id: 1 } }).toArray()).map(keyFromDoc));
  }

  delete(tenant: string, id: string): Promise<boolean> {
    return guarded(async () => (await this.c.keys.deleteOne({ _id: id, tenant })).deletedCount > 0);
  }
}
