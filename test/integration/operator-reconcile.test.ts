/**
 * The operator's reconcile (internal/operator/reconciler.ts) on a real store (SQLite in
 * memory) with a fake Kubernetes API above the KubePort: what one pass writes, that a second
 * pass writes nothing, that revoked credentials are minted again (only the revoked part), that
 * a failure is reported in status and Events, and what each deletionPolicy leaves behind.
 * The same against a real API server: test/kube/operator.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashSecret } from '../../internal/auth/tokens.js';
import { realmKey } from '../../internal/domain/realm-key.js';
import type { RealmResource, RealmStatus } from '../../internal/kube/realm-resource.js';
import { CREDENTIAL_KEYS, FINALIZER, ROTATE_ANNOTATION, TENANT_KEY_SECRET } from '../../internal/operator/desired-state.js';
import { KubeConflict, type KubePort, type SecretObject, type SecretWrite } from '../../internal/operator/kube-port.js';
import { Reconciler } from '../../internal/operator/reconciler.js';
import { noChangeListener } from '../../internal/service/changes.js';
import type { ControlMessage } from '../../internal/domain/events.js';
import { RealmService } from '../../internal/service/realms.js';
import { TenantService } from '../../internal/service/tenants.js';
import { openStore } from '../../internal/store/open-store.js';
import type { Store } from '../../internal/store/port.js';
import { MongoClient } from 'mongodb';
import { controlDatabaseName, realmDatabaseName } from '../../internal/store/mongodb/names.js';
import { mongoTestStore, type TestStore } from '../support/cluster.js';
import { testMongoUri } from '../support/mongodb.js';

/** An in-memory API server for Realms, Secrets and Events, counting writes. */
class FakeKube implements KubePort {
  realms = new Map<string, RealmResource>();
  secrets = new Map<string, SecretObject>();
  events: { realm: string; type: string; reason: string; message: string }[] = [];
  writes = 0;
  private version = 1;

  apply(realm: RealmResource): void {
    const key = `${realm.metadata.namespace ?? ''}/${realm.metadata.name}`;
    this.realms.set(key, structuredClone({ ...realm, metadata: { uid: `uid-${key}`, generation: 1, ...realm.metadata, resourceVersion: String(this.version++) } }));
  }
  realm(ns: string, name: string): RealmResource | undefined {
    return this.realms.get(`${ns}/${name}`);
  }
  getRealm(ns: string, name: string): Promise<RealmResource | null> {
    return Promise.resolve(structuredClone(this.realms.get(`${ns}/${name}`) ?? null));
  }
  setFinalizers(realm: RealmResource, finalizers: string[]): Promise<RealmResource> {
    const key = `${realm.metadata.namespace ?? ''}/${realm.metadata.name}`;
    const stored = this.realms.get(key);
    if (stored === undefined) return Promise.reject(new Error('404'));
    if (stored.metadata.resourceVersion !== realm.metadata.resourceVersion) return Promise.reject(new KubeConflict('changed'));
    this.writes++;
    if (finalizers.length === 0 && stored.metadata.deletionTimestamp !== undefined) {
      this.realms.delete(key);
      return Promise.resolve(stored);
    }
    stored.metadata.finalizers = finalizers;
    stored.metadata.resourceVersion = String(this.version++);
    return Promise.resolve(structuredClone(stored));
  }
  patchStatus(realm: RealmResource, status: RealmStatus): Promise<void> {
    const stored = this.realms.get(`${realm.metadata.namespace ?? ''}/${realm.metadata.name}`);
    if (stored !== undefined) {
      this.writes++;
      // A merge patch: the fields sent replace theirs, the others stay.
      stored.status = { ...stored.status, ...structuredClone(status) };
      stored.metadata.resourceVersion = String(this.version++);
    }
    return Promise.resolve();
  }
  getSecret(ns: string, name: string): Promise<SecretObject | null> {
    return Promise.resolve(structuredClone(this.secrets.get(`${ns}/${name}`) ?? null));
  }
  private put(secret: SecretWrite): void {
    this.writes++;
    this.secrets.set(`${secret.namespace}/${secret.name}`, {
      name: secret.name,
      namespace: secret.namespace,
      resourceVersion: String(this.version++),
      labels: { ...secret.labels },
      annotations: { ...secret.annotations },
      ownerUids: secret.owner?.metadata.uid === undefined ? [] : [secret.owner.metadata.uid],
      data: { ...secret.data },
    });
  }
  createSecret(secret: SecretWrite): Promise<void> {
    if (this.secrets.has(`${secret.namespace}/${secret.name}`)) return Promise.reject(new KubeConflict('exists'));
    this.put(secret);
    return Promise.resolve();
  }
  replaceSecret(secret: SecretWrite & { resourceVersion: string }): Promise<void> {
    if (this.secrets.get(`${secret.namespace}/${secret.name}`)?.resourceVersion !== secret.resourceVersion) return Promise.reject(new KubeConflict('changed'));
    this.put(secret);
    return Promise.resolve();
  }
  deleteSecret(ns: string, name: string): Promise<void> {
    if (this.secrets.delete(`${ns}/${name}`)) this.writes++;
    return Promise.resolve();
  }
  recordEvent(realm: RealmResource, type: string, reason: string, message: string): Promise<void> {
    this.events.push({ realm: realm.metadata.name, type, reason, message });
    return Promise.resolve();
  }
}

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

/**
 * The suite on one store: SQLite in memory always; a MongoDB store of its own too where
 * LOCUS_TEST_MONGODB_URI is set (the GitHub workflow), where the realm's database and its
 * indexes must exist after the first pass.
 */
function reconcileSuite(storeName: string, testStore: () => TestStore): void {
void describe(`operator reconcile on a real store (${storeName}), fake API server`, () => {
  let store: Store;
  const target = testStore();
  let kube: FakeKube;
  let reconciler: Reconciler;
  let now = Date.parse('2026-01-01T00:00:00Z');
  const announced: ControlMessage[] = [];

  before(async () => {
    store = await openStore(target.url ?? 'sqlite::memory:');
    kube = new FakeKube();
    const control = { announce: (m: ControlMessage) => announced.push(m) };
    const clock = (): number => now;
    reconciler = new Reconciler({
      kube,
      store,
      realms: new RealmService(store, clock, noChangeListener, undefined, control),
      tenants: new TenantService(store, clock, control),
      control,
      clock,
      keyGraceMs: 60_000,
      credentialsGraceMs: 60_000,
      log: silent,
      realmsOf: (ns) => [...kube.realms.values()].filter((r) => r.metadata.namespace === ns),
    });
  });
  after(async () => {
    await store?.close();
    await target.cleanup();
  });

  void it('one pass provisions everything; a second pass writes nothing', async () => {
    kube.apply({ apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'fleet', namespace: 'ns-a' }, spec: { label: 'Fleet', settings: { historyRetentionDays: 9 } } });
    await reconciler.reconcile('ns-a', 'fleet');
    const realm = kube.realm('ns-a', 'fleet');
    assert.deepEqual(realm?.metadata.finalizers, [FINALIZER]);
    assert.equal(realm?.status?.phase, 'Ready');
    assert.equal((await store.tenants.get('ns-a'))?.id, 'ns-a');
    const stored = await store.realms.get(realmKey('ns-a', 'fleet'));
    assert.equal(stored?.settings.historyRetentionDays, 9);
    assert.equal(stored?.label, 'Fleet');
    const creds = (await kube.getSecret('ns-a', 'fleet-locus-credentials'))?.data ?? {};
    const token = await store.tokens.findByHash(hashSecret(creds[CREDENTIAL_KEYS.token] ?? ''));
    assert.equal(token?.realm, realmKey('ns-a', 'fleet'));
    assert.equal(token?.scope, 'write');
    const key = await store.signingKeys.get(creds[CREDENTIAL_KEYS.keyId] ?? '');
    assert.deepEqual([key?.tenant, key?.realm, key?.secret], ['ns-a', 'fleet', creds[CREDENTIAL_KEYS.signingKey]]);
    const tenantKey = (await kube.getSecret('ns-a', TENANT_KEY_SECRET))?.data ?? {};
    assert.equal((await store.signingKeys.get(tenantKey.keyId ?? ''))?.realm, null);

    const writes = kube.writes;
    const events = kube.events.length;
    await reconciler.reconcile('ns-a', 'fleet');
    assert.equal(kube.writes, writes, 'idempotent: nothing written');
    assert.equal(kube.events.length, events);
    assert.equal((await store.tokens.listByRealm(realmKey('ns-a', 'fleet'))).length, 1);

    if (target.url !== null) {
      // MongoDB: the realm's database with its indexes, made by the store's put.
      const client = new MongoClient(target.url, { serverSelectionTimeoutMS: 5000 });
      try {
        const name = realmDatabaseName(controlDatabaseName(target.url), realmKey('ns-a', 'fleet'));
        const indexes = await client.db(name).collection('objects').listIndexes().toArray();
        assert.ok(indexes.length > 1, `indexes of ${name}: ${JSON.stringify(indexes)}`);
      } finally {
        await client.close();
      }
    }
  });

  void it('mints again only what was revoked', async () => {
    const before = (await kube.getSecret('ns-a', 'fleet-locus-credentials'))?.data ?? {};
    await store.tokens.delete(realmKey('ns-a', 'fleet'), before[CREDENTIAL_KEYS.tokenId] ?? '');
    await reconciler.reconcile('ns-a', 'fleet');
    const after = (await kube.getSecret('ns-a', 'fleet-locus-credentials'))?.data ?? {};
    assert.notEqual(after[CREDENTIAL_KEYS.token], before[CREDENTIAL_KEYS.token]);
    assert.equal(after[CREDENTIAL_KEYS.keyId], before[CREDENTIAL_KEYS.keyId]);
    assert.ok(kube.events.some((e) => e.reason === 'CredentialsRenewed'));
  });

  void it('a deleted Secret is minted again; what it held is accepted for the grace period, then revoked', async () => {
    const key = realmKey('ns-a', 'fleet');
    const before = (await kube.getSecret('ns-a', 'fleet-locus-credentials'))?.data ?? {};
    await kube.deleteSecret('ns-a', 'fleet-locus-credentials');
    const result = await reconciler.reconcile('ns-a', 'fleet');
    const after = (await kube.getSecret('ns-a', 'fleet-locus-credentials'))?.data ?? {};
    assert.notEqual(after[CREDENTIAL_KEYS.tokenId], before[CREDENTIAL_KEYS.tokenId]);
    assert.notEqual(after[CREDENTIAL_KEYS.keyId], before[CREDENTIAL_KEYS.keyId]);
    const recorded = kube.realm('ns-a', 'fleet')?.status?.credentials;
    assert.deepEqual([recorded?.tokenId, recorded?.keyId], [after[CREDENTIAL_KEYS.tokenId], after[CREDENTIAL_KEYS.keyId]]);
    assert.deepEqual(recorded?.superseded?.map((s) => s.id).sort(), [before[CREDENTIAL_KEYS.tokenId], before[CREDENTIAL_KEYS.keyId]].sort());
    assert.ok(result.requeueAfterMs !== undefined && result.requeueAfterMs >= 60_000 && result.requeueAfterMs <= 61_000, `comes back when the grace period ends (${result.requeueAfterMs})`);
    assert.notEqual(await store.tokens.findByHash(hashSecret(before[CREDENTIAL_KEYS.token] ?? '')), null, 'the old token is accepted during the grace period');
    assert.notEqual(await store.signingKeys.get(before[CREDENTIAL_KEYS.keyId] ?? ''), null, 'the old key is accepted during the grace period');

    now += 30_000;
    await reconciler.reconcile('ns-a', 'fleet');
    assert.notEqual(await store.tokens.findByHash(hashSecret(before[CREDENTIAL_KEYS.token] ?? '')), null, 'still within the grace period');
    now += 31_000;
    await reconciler.reconcile('ns-a', 'fleet');
    assert.equal(await store.tokens.findByHash(hashSecret(before[CREDENTIAL_KEYS.token] ?? '')), null, 'the old token is revoked');
    assert.equal(await store.signingKeys.get(before[CREDENTIAL_KEYS.keyId] ?? ''), null, 'the old key is revoked');
    assert.ok(announced.some((m) => m.kind === 'token.revoked' && m.hash === hashSecret(before[CREDENTIAL_KEYS.token] ?? '')));
    assert.deepEqual((await store.tokens.listByRealm(key)).map((t) => t.id), [after[CREDENTIAL_KEYS.tokenId]], 'the realm keeps one token');
    assert.notEqual(await store.signingKeys.get(after[CREDENTIAL_KEYS.keyId] ?? ''), null);
    assert.deepEqual(kube.realm('ns-a', 'fleet')?.status?.credentials?.superseded, []);
    assert.ok(kube.events.some((e) => e.reason === 'CredentialsRevoked'));
    const writes = kube.writes;
    await reconciler.reconcile('ns-a', 'fleet');
    assert.equal(kube.writes, writes, 'idempotent again');
  });

  void it('rotation retires the old tenant key until the grace period ends, then removes it', async () => {
    const old = (await kube.getSecret('ns-a', TENANT_KEY_SECRET))?.data.keyId ?? '';
    const realm = kube.realm('ns-a', 'fleet');
    assert.ok(realm !== undefined);
    realm.metadata.annotations = { [ROTATE_ANNOTATION]: 'r1' };
    const result = await reconciler.reconcile('ns-a', 'fleet');
    const fresh = (await kube.getSecret('ns-a', TENANT_KEY_SECRET))?.data.keyId ?? '';
    assert.notEqual(fresh, old);
    assert.ok(result.requeueAfterMs !== undefined && result.requeueAfterMs >= 60_000, 'comes back when the grace period ends');
    assert.notEqual(await store.signingKeys.get(old), null, 'kept during the grace period');
    await reconciler.reconcile('ns-a', 'fleet');
    assert.equal((await kube.getSecret('ns-a', TENANT_KEY_SECRET))?.data.keyId, fresh, 'the same value does not rotate twice');
    now += 61_000;
    await reconciler.reconcile('ns-a', 'fleet');
    assert.equal(await store.signingKeys.get(old), null);
    assert.notEqual(await store.signingKeys.get(fresh), null);
    assert.ok(announced.some((m) => m.kind === 'keys.changed' && m.tenant === 'ns-a'));
  });

  void it('a failure is reported in status (not Ready, Degraded) and as a Warning Event, and thrown for a retry', async () => {
    kube.apply({ apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'reserved', namespace: 'ns-a' }, spec: { realmId: 'sys' } });
    await assert.rejects(reconciler.reconcile('ns-a', 'reserved'), /reserved/);
    const status = kube.realm('ns-a', 'reserved')?.status;
    assert.equal(status?.phase, 'Provisioning');
    const ready = status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.match(ready?.message ?? '', /realm id sys is reserved/);
    assert.equal(status?.conditions?.find((c) => c.type === 'Degraded')?.status, 'True');
    assert.ok(kube.events.some((e) => e.realm === 'reserved' && e.type === 'Warning' && e.reason === 'ReconcileFailed'));
  });

  void it('a second Realm declaring a realm id already declared is refused, and deleting it leaves the first one alone', async () => {
    kube.apply({ apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'first', namespace: 'ns-c', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { realmId: 'shared' } });
    await reconciler.reconcile('ns-c', 'first');
    kube.apply({ apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name: 'second', namespace: 'ns-c', creationTimestamp: '2026-01-01T00:00:05Z' }, spec: { realmId: 'shared', deletionPolicy: 'Delete' } });
    await assert.rejects(reconciler.reconcile('ns-c', 'second'), /realm id shared is already declared by Realm first/);
    const status = kube.realm('ns-c', 'second')?.status;
    assert.equal(status?.phase, 'Provisioning');
    assert.equal(status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'RealmIdConflict');
    assert.ok(kube.events.some((e) => e.realm === 'second' && e.reason === 'RealmIdConflict'));
    assert.equal(await kube.getSecret('ns-c', 'second-locus-credentials'), null);

    const second = kube.realm('ns-c', 'second');
    assert.ok(second !== undefined);
    second.metadata.deletionTimestamp = new Date(now).toISOString();
    await reconciler.reconcile('ns-c', 'second');
    assert.equal(kube.realm('ns-c', 'second'), undefined);
    const key = realmKey('ns-c', 'shared');
    assert.notEqual(await store.realms.get(key), null, 'the first Realm keeps its realm');
    const creds = (await kube.getSecret('ns-c', 'first-locus-credentials'))?.data ?? {};
    assert.notEqual(await store.tokens.findByHash(hashSecret(creds[CREDENTIAL_KEYS.token] ?? '')), null, 'and its credentials');
  });

  void it('deletion: Retain keeps the realm and its data, Delete drops them; both revoke credentials and release the Realm', async () => {
    for (const [name, policy] of [['keep', 'Retain'], ['drop', 'Delete']] as const) {
      kube.apply({ apiVersion: 'locus.dev/v1alpha1', kind: 'Realm', metadata: { name, namespace: 'ns-b' }, spec: { deletionPolicy: policy } });
      await reconciler.reconcile('ns-b', name);
      const key = realmKey('ns-b', name);
      await store.objects.upsertMany(key, [{ id: 'o', label: 'o' }], new Date(now).toISOString());
      const realm = kube.realm('ns-b', name);
      assert.ok(realm !== undefined);
      realm.metadata.deletionTimestamp = new Date(now).toISOString();
      await reconciler.reconcile('ns-b', name);
      assert.equal(kube.realm('ns-b', name), undefined, 'the finalizer is removed');
      assert.equal(await kube.getSecret('ns-b', `${name}-locus-credentials`), null);
      assert.deepEqual(await store.tokens.listByRealm(key), []);
      assert.deepEqual((await store.signingKeys.listByTenant('ns-b')).filter((k) => k.realm === name), []);
      const data = await store.objects.get(key, 'o');
      if (policy === 'Retain') {
        assert.notEqual(await store.realms.get(key), null);
        assert.equal(data?.id, 'o');
      } else {
        assert.equal(await store.realms.get(key), null);
        assert.equal(data, null);
      }
    }
  });
});
}

reconcileSuite('SQLite', () => ({ url: null, cleanup: () => Promise.resolve() }));
if (testMongoUri !== null) reconcileSuite('MongoDB', () => mongoTestStore(testMongoUri ?? ''));
