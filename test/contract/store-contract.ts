/**
 * The store contract: one node:test suite, written only against the port, that every
 * adapter must pass: `storeContract('sqlite', open)` (test/integration/sqlite-store.test.ts) always,
 * `storeContract('mongodb', open)` (test/integration/mongodb-store.test.ts) where LOCUS_TEST_MONGODB_URI is set.
 * `open` must return a fresh, empty store for each test; the suite closes it.
 *
 * Expected values are written out by hand. The query engine (filters, shapes, search,
 * history and its retention) has its own part, store-contract-queries.ts, run from here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError, type ErrorCode } from '../../internal/errors.js';
import type { Area, Data, Location, ObjectChange, RealmSettings, SigningKeyRecord, TokenRecord, TrackedObject } from '../../internal/domain/types.js';
import { instructionContract } from './store-contract-instructions.js';
import { queryContract } from './store-contract-queries.js';
import type { Store } from '../../internal/store/port.js';

// Fix times (T) and server receive times (N); normalised ISO, so string order is time order.
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:00:01.000Z';
const T2 = '2024-05-01T10:00:02.000Z';
const T3 = '2024-05-01T10:00:03.000Z';
const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';
const N2 = '2024-05-01T12:00:02.000Z';
const N3 = '2024-05-01T12:00:03.000Z';

const SETTINGS: RealmSettings = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

function fix(longitude: number, latitude: number, time: string): Location {
  return { longitude, latitude, time };
}

function failsWith(code: ErrorCode): (err: unknown) => boolean {
  return (err: unknown) => {
    assert.ok(err instanceof LocusError, `expected a LocusError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  };
}

function ids(items: readonly { id: string }[]): string[] {
  return items.map((item) => item.id);
}

function token(id: string, realm: string, hash: string, scope: TokenRecord['scope'], created: string): TokenRecord {
  return { id, realm, hash, scope, created };
}

export function storeContract(name: string, open: () => Promise<Store>): void {
  /** Runs `body` against a fresh store and closes it afterwards. */
  async function withStore(body: (store: Store) => Promise<void>): Promise<void> {
    const store = await open();
    try {
      await body(store);
    } finally {
      await store.close();
    }
  }

  void describe(`store contract: ${name}`, () => {
    void describe('realms', () => {
      void it('put creates (label null, data {}), put again replaces the settings and keeps the creation time', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.realms.put('beta', SETTINGS, N0), {
            realm: { id: 'beta', tenant: 'default', name: 'beta', label: null, data: {}, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: N0 },
            created: true,
          });
          const replaced = { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: 50 };
          assert.deepEqual(await store.realms.put('beta', replaced, N2), {
            realm: { id: 'beta', tenant: 'default', name: 'beta', label: null, data: {}, settings: { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: 50 }, created: N0 },
            created: false,
          });
          assert.deepEqual(await store.realms.get('beta'), {
            id: 'beta',
            tenant: 'default',
            name: 'beta',
            label: null,
            data: {},
            settings: { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: 50 },
            created: N0,
          });
          assert.equal(await store.realms.get('gamma'), null);
        }));

      void it('create makes a realm once; a second create is a conflict that changes nothing', () =>
        withStore(async (store) => {
          const delta = { id: 'delta', tenant: 'default', name: 'delta', label: null, data: {}, settings: SETTINGS, created: N0 };
          assert.deepEqual(await store.realms.create(delta), delta);
          const other = { id: 'delta', tenant: 'default', name: 'delta', label: 'other', data: { a: 1 }, settings: { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: 50 }, created: N2 };
          await assert.rejects(store.realms.create(other), (err: unknown) => {
            assert.ok(err instanceof LocusError && err.code === 'conflict');
            assert.equal(err.message, 'realm with id delta already exists');
            return true;
          });
          assert.deepEqual(await store.realms.get('delta'), delta);
        }));

      void it('create keeps a label and nested data exactly: key order, nulls inside, __proto__ as a plain key', () =>
        withStore(async (store) => {
          const data = JSON.parse('{"z":1,"nested":{"b":[1,{"c":null}],"a":"Zoë 😀"},"__proto__":{"x":true},"list":[],"e":{}}') as Record<string, never>;
          const realm = { id: 'fleet', tenant: 'default', name: 'fleet', label: 'The fleet', data, settings: SETTINGS, created: N0 };
          await store.realms.create(realm);
          const read = await store.realms.get('fleet');
          assert.deepEqual(read, realm);
          assert.equal(JSON.stringify(read?.data), JSON.stringify(data));
          assert.ok(Object.hasOwn(read?.data ?? {}, '__proto__'));
          assert.deepEqual((await store.realms.list()).map((r) => [r.id, r.label, r.data]), [['fleet', 'The fleet', data]]);
        }));

      void it('update sets the label and merges data key by key at the top level; null removes a key; settings stay', () =>
        withStore(async (store) => {
          await store.realms.create({ id: 'fleet', tenant: 'default', name: 'fleet', label: 'Fleet', data: { keep: 1, drop: 'x', nested: { a: 1, b: 2 } }, settings: SETTINGS, created: N0 });
          const updated = await store.realms.update('fleet', { data: { drop: null, nested: { c: [3] }, added: true } });
          const expected = { id: 'fleet', tenant: 'default', name: 'fleet', label: 'Fleet', data: { keep: 1, nested: { c: [3] }, added: true }, settings: SETTINGS, created: N0 };
          assert.deepEqual(updated, expected);
          assert.deepEqual(await store.realms.get('fleet'), expected);
          assert.deepEqual(await store.realms.update('fleet', { label: 'Renamed' }), { ...expected, label: 'Renamed' });
          assert.deepEqual(await store.realms.update('fleet', { label: null, data: {} }), { ...expected, label: null });
          assert.deepEqual(await store.realms.get('fleet'), { ...expected, label: null });
          // The settings API leaves label and data as they are.
          const replaced = { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: 50 };
          assert.deepEqual((await store.realms.put('fleet', replaced, N1)).realm, { ...expected, label: null, settings: replaced });
          assert.equal(await store.realms.update('never', { label: 'x' }), null);
          assert.equal(await store.realms.get('never'), null);
        }));

      void it('an update whose merged data would be too large fails and changes nothing', () =>
        withStore(async (store) => {
          const half = 'x'.repeat(40 * 1024);
          const fleet = { id: 'fleet', tenant: 'default', name: 'fleet', label: 'Fleet', data: { a: half }, settings: SETTINGS, created: N0 };
          await store.realms.create(fleet);
          await assert.rejects(store.realms.update('fleet', { label: 'new', data: { b: half } }), failsWith('invalid_data'));
          assert.deepEqual(await store.realms.get('fleet'), fleet);
          // Replacing the key keeps it within the limit.
          assert.deepEqual((await store.realms.update('fleet', { data: { a: null, b: half } }))?.data, { b: half });
        }));

      void it('list returns every realm in id order', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.realms.list(), []);
          await store.realms.put('beta', SETTINGS, N0);
          await store.realms.put('alpha', { connectionTimeout: 60, historyRetentionDays: 7, rateLimit: 10 }, N1);
          await store.realms.create({ id: 'Zulu', tenant: 'default', name: 'Zulu', label: 'Z', data: { n: [1] }, settings: SETTINGS, created: N2 });
          assert.deepEqual(await store.realms.list(), [
            { id: 'Zulu', tenant: 'default', name: 'Zulu', label: 'Z', data: { n: [1] }, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: N2 },
            { id: 'alpha', tenant: 'default', name: 'alpha', label: null, data: {}, settings: { connectionTimeout: 60, historyRetentionDays: 7, rateLimit: 10 }, created: N1 },
            { id: 'beta', tenant: 'default', name: 'beta', label: null, data: {}, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: N0 },
          ]);
        }));

      void it('delete returns true for an existing realm, then false', () =>
        withStore(async (store) => {
          await store.realms.put('alpha', SETTINGS, N0);
          await store.realms.put('beta', SETTINGS, N0);
          assert.equal(await store.realms.delete('alpha'), true);
          assert.equal(await store.realms.get('alpha'), null);
          assert.equal(await store.realms.delete('alpha'), false);
          assert.equal(await store.realms.delete('never'), false);
          assert.deepEqual(ids(await store.realms.list()), ['beta']);
        }));

      void it('delete removes the realm objects, areas and tokens, and leaves other realms untouched', () =>
        withStore(async (store) => {
          for (const realm of ['doomed', 'kept']) {
            await store.realms.put(realm, SETTINGS, N0);
            await store.objects.upsertMany(
              realm,
              [
                { id: 'car', label: `car of ${realm}`, location: fix(1, 2, T0), data: { n: 1 } },
                { id: 'car', location: fix(3, 4, T1) },
                { id: 'bus', label: 'bus' },
              ],
              N0,
            );
            await store.areas.create(realm, { id: 'zone', label: 'zone', shape: { cx: 1, cy: 2, r: 30 }, data: {} });
            await store.tokens.create(token(`tok-${realm}`, realm, `hash-${realm}`, 'write', N0));
          }
          // Looked up first: an adapter that holds lookups must drop the realm's tokens.
          assert.equal((await store.tokens.findByHash('hash-doomed'))?.id, 'tok-doomed');

          assert.equal(await store.realms.delete('doomed'), true);

          assert.equal(await store.realms.get('doomed'), null);
          assert.equal(await store.objects.get('doomed', 'car'), null);
          assert.equal(await store.objects.get('doomed', 'bus'), null);
          assert.deepEqual(await store.objects.list('doomed', { limit: 10 }), { items: [], next: null });
          assert.equal(await store.areas.get('doomed', 'zone'), null);
          assert.deepEqual(await store.areas.list('doomed', { limit: 10 }), { items: [], next: null });
          assert.deepEqual(await store.tokens.listByRealm('doomed'), []);
          assert.equal(await store.tokens.findByHash('hash-doomed'), null);

          assert.deepEqual(ids(await store.realms.list()), ['kept']);
          assert.deepEqual(await store.objects.get('kept', 'car'), {
            id: 'car',
            label: 'car of kept',
            location: { longitude: 3, latitude: 4, time: T1 },
            data: { n: 1 },
            seen: N0,
          });
          assert.deepEqual(ids((await store.objects.list('kept', { limit: 10 })).items), ['bus', 'car']);
          assert.deepEqual(await store.areas.get('kept', 'zone'), {
            id: 'zone',
            label: 'zone',
            shape: { cx: 1, cy: 2, r: 30 },
            data: {},
          });
          assert.deepEqual(await store.tokens.findByHash('hash-kept'), {
            id: 'tok-kept',
            realm: 'kept',
            hash: 'hash-kept',
            scope: 'write',
            created: N0,
          });

          // A realm re-created under the same id starts empty: the old object is gone, not hidden.
          await store.realms.put('doomed', SETTINGS, N1);
          const [change] = await store.objects.upsertMany('doomed', [{ id: 'car' }], N1);
          assert.equal(change?.old, null);
          assert.deepEqual(change?.new, { id: 'car', label: null, location: null, data: {}, seen: null });
        }));
    });

    void describe('tenants and signing keys', () => {
      const acmeKey = (id: string, realm: string | null, created: string): SigningKeyRecord => ({ id, tenant: 'acme', realm, secret: `secret-of-${id}`, created });

      void it('the default tenant exists from the start and cannot be deleted', () =>
        withStore(async (store) => {
          const tenants = await store.tenants.list();
          assert.deepEqual(ids(tenants), ['default']);
          assert.equal(tenants[0]?.label, null);
          assert.deepEqual(await store.tenants.get('default'), tenants[0]);
          await assert.rejects(store.tenants.delete('default'), failsWith('conflict'));
        }));

      void it('create, get, list in id order; a second create of an id is a conflict and changes nothing', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.tenants.create({ id: 'zeta', label: null, created: N1 }), { id: 'zeta', label: null, created: N1 });
          await store.tenants.create({ id: 'acme', label: 'Acme Inc.', created: N0 });
          await assert.rejects(store.tenants.create({ id: 'acme', label: 'Other', created: N2 }), failsWith('conflict'));
          assert.deepEqual(await store.tenants.get('acme'), { id: 'acme', label: 'Acme Inc.', created: N0 });
          assert.equal(await store.tenants.get('never'), null);
          assert.deepEqual(ids(await store.tenants.list()), ['acme', 'default', 'zeta']);
        }));

      void it('realms of a tenant: listed by tenant, unique names within it, the same name in two tenants', () =>
        withStore(async (store) => {
          await store.tenants.create({ id: 'acme', label: null, created: N0 });
          const base = { label: null, data: {}, settings: SETTINGS, created: N0 };
          await store.realms.create({ ...base, id: 'fleet', tenant: 'default', name: 'fleet' });
          await store.realms.create({ ...base, id: 'acme\u001ffleet', tenant: 'acme', name: 'fleet' });
          await store.realms.create({ ...base, id: 'acme\u001fdepot', tenant: 'acme', name: 'depot' });
          await assert.rejects(store.realms.create({ ...base, id: 'acme\u001ffleet', tenant: 'acme', name: 'fleet' }), (err: unknown) => {
            assert.ok(err instanceof LocusError && err.code === 'conflict');
            assert.equal(err.message, 'realm with id fleet already exists');
            return true;
          });
          assert.deepEqual((await store.realms.list('acme')).map((r) => [r.id, r.tenant, r.name]), [
            ['acme\u001fdepot', 'acme', 'depot'],
            ['acme\u001ffleet', 'acme', 'fleet'],
          ]);
          assert.deepEqual(ids(await store.realms.list('default')), ['fleet']);
          assert.equal((await store.realms.list()).length, 3);
          // put of a new key takes tenant and name from the key
          const { realm } = await store.realms.put('acme\u001fyard', SETTINGS, N1);
          assert.deepEqual([realm.tenant, realm.name], ['acme', 'yard']);
          assert.deepEqual((await store.realms.get('acme\u001fyard'))?.name, 'yard');
        }));

      void it('a tenant with realms cannot be deleted; without, it goes with its keys', () =>
        withStore(async (store) => {
          await store.tenants.create({ id: 'acme', label: null, created: N0 });
          await store.signingKeys.create(acmeKey('key_1', null, N0));
          await store.realms.create({ id: 'acme\u001ffleet', tenant: 'acme', name: 'fleet', label: null, data: {}, settings: SETTINGS, created: N0 });
          await assert.rejects(store.tenants.delete('acme'), failsWith('conflict'));
          assert.notEqual(await store.tenants.get('acme'), null);
          assert.notEqual(await store.signingKeys.get('key_1'), null);
          assert.equal(await store.realms.delete('acme\u001ffleet'), true);
          assert.equal(await store.tenants.delete('acme'), true);
          assert.equal(await store.tenants.get('acme'), null);
          assert.equal(await store.signingKeys.get('key_1'), null);
          assert.equal(await store.tenants.delete('acme'), false);
        }));

      void it('signing keys: create, get (with secret), list by tenant oldest first, delete; ids are unique', () =>
        withStore(async (store) => {
          await store.tenants.create({ id: 'acme', label: null, created: N0 });
          await store.signingKeys.create(acmeKey('key_2', 'fleet', N1));
          await store.signingKeys.create(acmeKey('key_1', null, N0));
          await store.signingKeys.create({ id: 'key_d', tenant: 'default', realm: null, secret: 's', created: N0 });
          await assert.rejects(store.signingKeys.create(acmeKey('key_1', null, N2)), failsWith('conflict'));
          assert.deepEqual(await store.signingKeys.get('key_2'), acmeKey('key_2', 'fleet', N1));
          assert.deepEqual(await store.signingKeys.listByTenant('acme'), [acmeKey('key_1', null, N0), acmeKey('key_2', 'fleet', N1)]);
          assert.equal(await store.signingKeys.delete('default', 'key_1'), false);
          assert.equal(await store.signingKeys.delete('acme', 'key_1'), true);
          assert.equal(await store.signingKeys.get('key_1'), null);
          assert.equal(await store.signingKeys.delete('acme', 'key_1'), false);
          assert.deepEqual(ids(await store.signingKeys.listByTenant('acme')), ['key_2']);
        }));

      void it('a realm-bound key goes with its realm', () =>
        withStore(async (store) => {
          await store.tenants.create({ id: 'acme', label: null, created: N0 });
          await store.realms.create({ id: 'acme\u001ffleet', tenant: 'acme', name: 'fleet', label: null, data: {}, settings: SETTINGS, created: N0 });
          await store.signingKeys.create(acmeKey('key_bound', 'fleet', N0));
          await store.signingKeys.create(acmeKey('key_free', null, N0));
          assert.notEqual(await store.signingKeys.get('key_bound'), null);
          await store.realms.delete('acme\u001ffleet');
          assert.equal(await store.signingKeys.get('key_bound'), null);
          assert.notEqual(await store.signingKeys.get('key_free'), null);
        }));
    });

    void describe('tokens', () => {
      void it('create, findByHash, listByRealm and delete', () =>
        withStore(async (store) => {
          await store.tokens.create(token('t2', 'acme', 'h2', 'read', N1));
          await store.tokens.create(token('t1', 'acme', 'h1', 'admin', N0));
          await store.tokens.create(token('t3', 'other', 'h3', 'write', N0));

          assert.deepEqual(await store.tokens.findByHash('h2'), {
            id: 't2',
            realm: 'acme',
            hash: 'h2',
            scope: 'read',
            created: N1,
          });
          assert.equal(await store.tokens.findByHash('nope'), null);
          // Oldest first.
          assert.deepEqual(await store.tokens.listByRealm('acme'), [
            { id: 't1', realm: 'acme', hash: 'h1', scope: 'admin', created: N0 },
            { id: 't2', realm: 'acme', hash: 'h2', scope: 'read', created: N1 },
          ]);
          assert.deepEqual(await store.tokens.listByRealm('empty'), []);

          // Looked up before its delete (an adapter that holds lookups must drop it), and a
          // caller that changes a record it got changes nothing stored.
          const found = await store.tokens.findByHash('h1');
          assert.equal(found?.scope, 'admin');
          if (found !== null) found.scope = 'read';
          assert.equal((await store.tokens.findByHash('h1'))?.scope, 'admin');
          // A token is only deleted through its own realm.
          assert.equal(await store.tokens.delete('other', 't1'), false);
          assert.equal(await store.tokens.delete('acme', 't1'), true);
          assert.equal(await store.tokens.delete('acme', 't1'), false);
          assert.equal(await store.tokens.findByHash('h1'), null);
          assert.deepEqual(ids(await store.tokens.listByRealm('acme')), ['t2']);
          assert.deepEqual(ids(await store.tokens.listByRealm('other')), ['t3']);
        }));

      void it('a second token with the same hash or id is a conflict', () =>
        withStore(async (store) => {
          await store.tokens.create(token('t1', 'acme', 'h1', 'read', N0));
          await assert.rejects(store.tokens.create(token('t2', 'acme', 'h1', 'write', N1)), failsWith('conflict'));
          await assert.rejects(store.tokens.create(token('t1', 'acme', 'h9', 'write', N1)), failsWith('conflict'));
          assert.deepEqual(await store.tokens.listByRealm('acme'), [
            { id: 't1', realm: 'acme', hash: 'h1', scope: 'read', created: N0 },
          ]);
        }));
    });

    void describe('objects', () => {
      void it('upsert creates an object and returns the change', () =>
        withStore(async (store) => {
          const location: Location = {
            longitude: 13.404954,
            latitude: 52.520008,
            altitude: 34.5,
            speed: 12.25,
            heading: 270,
            accuracy: 5,
            altitudeAccuracy: 3,
            time: T0,
          };
          const changes = await store.objects.upsertMany(
            'acme',
            [{ id: 'car', label: 'Car', location, data: { fuel: 80.5, driver: 'Ann', active: true } }],
            N0,
          );
          const created: TrackedObject = {
            id: 'car',
            label: 'Car',
            location: {
              longitude: 13.404954,
              latitude: 52.520008,
              altitude: 34.5,
              speed: 12.25,
              heading: 270,
              accuracy: 5,
              altitudeAccuracy: 3,
              time: T0,
            },
            data: { fuel: 80.5, driver: 'Ann', active: true },
            seen: N0,
          };
          const expected: ObjectChange[] = [
            { realm: 'acme', id: 'car', old: null, new: created, history: [created.location as Location], time: N0 },
          ];
          assert.deepEqual(changes, expected);
          assert.deepEqual(await store.objects.get('acme', 'car'), created);
          assert.equal(await store.objects.get('acme', 'truck'), null);
        }));

      void it('an object created without label, location or data reads as nulls and {}', () =>
        withStore(async (store) => {
          const changes = await store.objects.upsertMany('acme', [{ id: 'bare' }], N0);
          assert.deepEqual(changes, [
            {
              realm: 'acme',
              id: 'bare',
              old: null,
              new: { id: 'bare', label: null, location: null, data: {}, seen: null },
              history: [],
              time: N0,
            },
          ]);
          assert.deepEqual(await store.objects.get('acme', 'bare'), {
            id: 'bare',
            label: null,
            location: null,
            data: {},
            seen: null,
          });
        }));

      void it('upsertMany of no patches changes nothing', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.objects.upsertMany('acme', [], N0), []);
          assert.deepEqual(await store.objects.list('acme', { limit: 10 }), { items: [], next: null });
        }));

      void it('writes started before the last one settles take effect in call order', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', label: 'zero' }], N0);
          // Not awaited in between: a v1 connection's pipelined messages write like this.
          const writes = ['one', 'two', 'three'].map((label, i) =>
            store.objects.upsertMany('acme', [{ id: 'car', label }, { id: `other-${i}`, label }], [N1, N2, N3][i] as string),
          );
          const changes = await Promise.all(writes);
          assert.deepEqual(
            changes.map(([change]) => [change?.old?.label, change?.new?.label]),
            [
              ['zero', 'one'],
              ['one', 'two'],
              ['two', 'three'],
            ],
          );
          assert.equal((await store.objects.get('acme', 'car'))?.label, 'three');
          // A write that fails (here: for a realm this store deleted) fails alone; the others stand.
          await store.realms.put('gone', SETTINGS, N0);
          await store.realms.delete('gone');
          const mixed = await Promise.allSettled([
            store.objects.upsertMany('acme', [{ id: 'car', label: 'four' }], N3),
            store.objects.upsertMany('gone', [{ id: 'x' }], N3),
            store.objects.upsertMany('acme', [{ id: 'car', label: 'five' }], N3),
          ]);
          assert.deepEqual(
            mixed.map((outcome) => outcome.status),
            ['fulfilled', 'rejected', 'fulfilled'],
          );
          assert.equal((await store.objects.get('acme', 'car'))?.label, 'five');
        }));

      void it('a given label replaces the old one, an absent one keeps it, null clears it', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', label: 'first' }], N0);
          const [replaced] = await store.objects.upsertMany('acme', [{ id: 'car', label: 'second' }], N1);
          assert.equal(replaced?.old?.label, 'first');
          assert.equal(replaced?.new?.label, 'second');
          await store.objects.upsertMany('acme', [{ id: 'car', data: { x: 1 } }], N2);
          assert.equal((await store.objects.get('acme', 'car'))?.label, 'second');
          const [cleared] = await store.objects.upsertMany('acme', [{ id: 'car', label: null }], N3);
          assert.equal(cleared?.old?.label, 'second');
          assert.deepEqual(await store.objects.get('acme', 'car'), {
            id: 'car',
            label: null,
            location: null,
            data: { x: 1 },
            seen: null,
          });
        }));

      void it('task ids: stored in order, replaced, kept by writes without them, cleared by [] (then absent); the last of a batch wins', () =>
        withStore(async (store) => {
          const [created] = await store.objects.upsertMany('acme', [{ id: 'car', label: 'Car', tasks: ['t2', 't1', 't2'] }], N0);
          assert.deepEqual(created?.new, { id: 'car', label: 'Car', location: null, data: {}, seen: null, tasks: ['t2', 't1', 't2'] });
          assert.deepEqual(await store.objects.get('acme', 'car'), { id: 'car', label: 'Car', location: null, data: {}, seen: null, tasks: ['t2', 't1', 't2'] });
          // Writes that give none keep them: label, data, a location (a tracker's update).
          await store.objects.upsertMany('acme', [{ id: 'car', data: { fuel: 1 } }], N1);
          const [moved] = await store.objects.upsertMany('acme', [{ id: 'car', location: fix(1, 2, T1) }], N1);
          assert.deepEqual(moved?.old?.tasks, ['t2', 't1', 't2']);
          assert.deepEqual(moved?.new?.tasks, ['t2', 't1', 't2']);
          assert.deepEqual(await store.objects.get('acme', 'car'), {
            id: 'car',
            label: 'Car',
            location: fix(1, 2, T1),
            data: { fuel: 1 },
            seen: N1,
            tasks: ['t2', 't1', 't2'],
          });
          // Replaced, with a location in the same write.
          const [replaced] = await store.objects.upsertMany('acme', [{ id: 'car', location: fix(3, 4, T2), tasks: ['t9'] }], N2);
          assert.deepEqual(replaced?.old?.tasks, ['t2', 't1', 't2']);
          assert.deepEqual(replaced?.new?.tasks, ['t9']);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.tasks, ['t9']);
          // The last given in a batch wins; other entries of the id do not touch them.
          await store.objects.upsertMany('acme', [{ id: 'car', tasks: ['a'] }, { id: 'car', tasks: ['b', 'c'] }, { id: 'car', label: 'Car 2' }], N2);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.tasks, ['b', 'c']);
          // Whole-object lists and searches show them; a projection does not.
          await store.objects.upsertMany('acme', [{ id: 'van' }], N2);
          assert.deepEqual((await store.objects.list('acme', { limit: 10 })).items.map((o) => [o.id, o.tasks]), [['car', ['b', 'c']], ['van', undefined]]);
          assert.equal('tasks' in ((await store.objects.list('acme', { limit: 10 })).items[1] ?? {}), false);
          assert.deepEqual((await store.objects.list('acme', { limit: 10, fields: ['fuel'] })).items.map((o) => 'tasks' in o), [false, false]);
          assert.deepEqual((await store.objects.list('acme', { limit: 10, fields: null })).items.map((o) => 'tasks' in o), [false, false]);
          // [] clears them: the key is gone from reads and changes.
          const [cleared] = await store.objects.upsertMany('acme', [{ id: 'car', tasks: [] }], N3);
          assert.deepEqual(cleared?.old?.tasks, ['b', 'c']);
          assert.equal(cleared?.new !== null && cleared?.new !== undefined && 'tasks' in cleared.new, false);
          assert.deepEqual(await store.objects.get('acme', 'car'), { id: 'car', label: 'Car 2', location: fix(3, 4, T2), data: { fuel: 1 }, seen: N2 });
          // Set again, then the delete's change carries them as old.
          await store.objects.upsertMany('acme', [{ id: 'car', tasks: ['again'] }], N3);
          assert.deepEqual((await store.objects.delete('acme', 'car', N3))?.old?.tasks, ['again']);
          // A new object created with [] has none; an update-only patch of a missing object writes nothing.
          await store.objects.upsertMany('acme', [{ id: 'bike', tasks: [] }, { id: 'ghost', tasks: ['t'], mustExist: true }], N3);
          assert.deepEqual(await store.objects.get('acme', 'bike'), { id: 'bike', label: null, location: null, data: {}, seen: null });
          assert.equal(await store.objects.get('acme', 'ghost'), null);
        }));

      void it('task ids of many objects in one batch, new and existing, each kept apart', () =>
        withStore(async (store) => {
          const ids = Array.from({ length: 150 }, (_, i) => `o${String(i).padStart(3, '0')}`);
          await store.objects.upsertMany('acme', ids.map((id, i) => (i % 3 === 0 ? { id, tasks: [`t-${id}`] } : { id, location: fix(i / 10, 1, T0) })), N0);
          await store.objects.upsertMany('acme', ids.map((id, i) => (i % 2 === 0 ? { id, tasks: [`u-${id}`, 'shared'] } : { id, location: fix(i / 10, 2, T1) })), N1);
          const page = await store.objects.list('acme', { limit: 200 });
          assert.deepEqual(
            page.items.map((o) => [o.id, o.tasks]),
            ids.map((id, i) => [id, i % 2 === 0 ? [`u-${id}`, 'shared'] : i % 3 === 0 ? [`t-${id}`] : undefined]),
          );
        }));

      void it('data merges key by key and a null value removes the key', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', data: { a: 1, b: 'x', c: true, gone: null } }], N0);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.data, { a: 1, b: 'x', c: true });

          const [change] = await store.objects.upsertMany('acme', [{ id: 'car', data: { b: 'y', c: null, d: false } }], N1);
          assert.deepEqual(change?.old?.data, { a: 1, b: 'x', c: true });
          assert.deepEqual(change?.new?.data, { a: 1, b: 'y', d: false });
          assert.deepEqual((await store.objects.get('acme', 'car'))?.data, { a: 1, b: 'y', d: false });

          await store.objects.upsertMany('acme', [{ id: 'car', data: {} }, { id: 'car', label: 'only label' }], N2);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.data, { a: 1, b: 'y', d: false });

          await store.objects.upsertMany('acme', [{ id: 'car', data: { a: null, b: null, d: null, never: null } }], N3);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.data, {});
        }));

      void it('data keeps keys such as __proto__, unicode keys and exact values', () =>
        withStore(async (store) => {
          const data = JSON.parse(
            '{"__proto__":"own","constructor":1,"ключ":"значение","😀":true,"車":-0.5,"max":9007199254740991,"text":"line\\n\\"quoted\\" 🚗"}',
          ) as Data;
          await store.objects.upsertMany('acme', [{ id: 'odd', data }], N0);
          const read = await store.objects.get('acme', 'odd');
          assert.ok(read !== null);
          assert.equal(Object.getPrototypeOf(read.data), Object.prototype);
          assert.ok(Object.hasOwn(read.data, '__proto__'));
          assert.deepEqual(
            Object.entries(read.data).sort(([a], [b]) => (a < b ? -1 : 1)),
            [
              ['__proto__', 'own'],
              ['constructor', 1],
              ['max', 9007199254740991],
              ['text', 'line\n"quoted" 🚗'],
              ['ключ', 'значение'],
              ['車', -0.5],
              ['😀', true],
            ],
          );

          // Removing the odd keys works like any other key.
          await store.objects.upsertMany('acme', [{ id: 'odd', data: JSON.parse('{"__proto__":null,"😀":null}') as Data }], N1);
          const after = await store.objects.get('acme', 'odd');
          assert.ok(after !== null);
          assert.equal(Object.hasOwn(after.data, '__proto__'), false);
          assert.deepEqual(Object.keys(after.data).sort(), ['constructor', 'max', 'text', 'ключ', '車']);
        }));

      void it('nested data reads back exactly (key order, nulls inside, odd keys) through get, list, projection, history and delete', () =>
        withStore(async (store) => {
          // Key order inside, __proto__, $ and dotted keys, an empty key, arrays of every kind, eight levels (the data object is level 1).
          const data = JSON.parse(
            '{"$hkt_icon":{"color":"red","category":"truck","filename":"t.png"},"z":[3,"b",null,true,[],{}],' +
              '"nested":{"b":1,"a":{"__proto__":{"x":[1.5,-0.5]},"$set":"v","a.b":null,"":"empty"}},' +
              '"deep":[{"a":[{"b":[{"c":["leaf"]}]}]}],"n":2}',
          ) as Data;
          const location = fix(13.4, 52.5, T0);
          const [created] = await store.objects.upsertMany('acme', [{ id: 'truck', label: 'T', location, data }], N0);
          assert.deepEqual(created?.new?.data, data);
          const read = await store.objects.get('acme', 'truck');
          assert.ok(read !== null);
          assert.deepEqual(read.data, data);
          assert.equal(JSON.stringify(read.data), JSON.stringify(data), 'key order at every level');
          const inner = (read.data.nested as { a: Record<string, unknown> }).a;
          assert.ok(Object.hasOwn(inner, '__proto__'), '__proto__ stays an own key');
          assert.equal(Object.getPrototypeOf(inner), Object.prototype);

          const listed = await store.objects.list('acme', { limit: 10 });
          assert.equal(JSON.stringify(listed.items[0]?.data), JSON.stringify(data));
          const projected = await store.objects.list('acme', { limit: 10, fields: ['$hkt_icon', 'missing', 'z'] });
          assert.equal(JSON.stringify(projected.items[0]?.data), JSON.stringify({ $hkt_icon: data.$hkt_icon, z: data.z }));

          // A merge replaces a nested value whole, keeps the others, and null removes one.
          const [merged] = await store.objects.upsertMany(
            'acme',
            [{ id: 'truck', location: fix(13.5, 52.5, T1), data: { $hkt_icon: { color: 'blue' }, deep: null, n: { was: 2 } } }],
            N1,
          );
          const after = { $hkt_icon: { color: 'blue' }, z: data.z, nested: data.nested, n: { was: 2 } };
          assert.equal(JSON.stringify(merged?.new?.data), JSON.stringify(after));
          assert.equal(JSON.stringify((await store.objects.get('acme', 'truck'))?.data), JSON.stringify(after));

          const history = await store.objects.history('acme', 'truck', { limit: 10, order: 'asc' });
          assert.deepEqual(
            history.items.map((entry) => JSON.stringify(entry.data)),
            [JSON.stringify(data), JSON.stringify(after)],
          );
          const removed = await store.objects.delete('acme', 'truck', N2);
          assert.equal(JSON.stringify(removed?.old?.data), JSON.stringify(after));
        }));

      void it('nested data in a bulk batch of several objects and several entries of one id', () =>
        withStore(async (store) => {
          await store.objects.upsertMany(
            'acme',
            [
              { id: 'a', location: fix(1, 1, T0), data: { icon: { color: 'red' }, tags: ['x'] } },
              { id: 'b', data: { route: [[1, 2], [3, 4]] } },
              { id: 'a', location: fix(1, 2, T1), data: { tags: ['x', 'y'], more: { k: [null] } } },
            ],
            N0,
          );
          assert.deepEqual((await store.objects.get('acme', 'a'))?.data, { icon: { color: 'red' }, tags: ['x', 'y'], more: { k: [null] } });
          assert.deepEqual((await store.objects.get('acme', 'b'))?.data, { route: [[1, 2], [3, 4]] });
          // A scalar replaces a nested value and back.
          await store.objects.upsertMany('acme', [{ id: 'b', data: { route: 'none' } }], N1);
          assert.deepEqual((await store.objects.get('acme', 'b'))?.data, { route: 'none' });
          await store.objects.upsertMany('acme', [{ id: 'b', data: { route: [] } }], N2);
          assert.deepEqual((await store.objects.get('acme', 'b'))?.data, { route: [] });
        }));

      void it('a newer location replaces the old one whole', () =>
        withStore(async (store) => {
          const first: Location = { longitude: 10, latitude: 50, altitude: 100, speed: 3, time: T0 };
          await store.objects.upsertMany('acme', [{ id: 'car', location: first }], N0);
          const [change] = await store.objects.upsertMany('acme', [{ id: 'car', location: fix(-73.9857, 40.7484, T1) }], N1);
          assert.deepEqual(change?.old?.location, { longitude: 10, latitude: 50, altitude: 100, speed: 3, time: T0 });
          assert.deepEqual(change?.new?.location, { longitude: -73.9857, latitude: 40.7484, time: T1 });
          assert.deepEqual(change?.history, [{ longitude: -73.9857, latitude: 40.7484, time: T1 }]);
          assert.deepEqual(await store.objects.get('acme', 'car'), {
            id: 'car',
            label: null,
            location: { longitude: -73.9857, latitude: 40.7484, time: T1 },
            data: {},
            seen: N1,
          });
        }));

      void it('an older fix never overwrites a newer one in single writes; equal time: the later write wins', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', location: fix(2, 2, T2) }], N0);
          const [older] = await store.objects.upsertMany('acme', [{ id: 'car', location: fix(1, 1, T1) }], N1);
          assert.deepEqual(older?.new?.location, { longitude: 2, latitude: 2, time: T2 });
          assert.deepEqual(older?.history, [{ longitude: 1, latitude: 1, time: T1 }]);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.location, { longitude: 2, latitude: 2, time: T2 });

          await store.objects.upsertMany('acme', [{ id: 'car', location: fix(3, 3, T2) }], N2);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.location, { longitude: 3, latitude: 3, time: T2 });
        }));

      void it('an older fix never overwrites a newer one in bulk writes; equal time: the later entry wins', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', location: fix(2, 2, T2) }], N0);
          await store.objects.upsertMany(
            'acme',
            [
              { id: 'car', location: fix(1, 1, T1) },
              { id: 'bus', location: fix(5, 5, T3) },
              { id: 'bus', location: fix(4, 4, T0) },
              { id: 'van', location: fix(6, 6, T1) },
              { id: 'van', location: fix(7, 7, T1) },
            ],
            N1,
          );
          assert.deepEqual((await store.objects.get('acme', 'car'))?.location, { longitude: 2, latitude: 2, time: T2 });
          assert.deepEqual((await store.objects.get('acme', 'bus'))?.location, { longitude: 5, latitude: 5, time: T3 });
          assert.deepEqual((await store.objects.get('acme', 'van'))?.location, { longitude: 7, latitude: 7, time: T1 });

          // Equal to the stored time, in bulk: the write wins over the stored fix.
          await store.objects.upsertMany('acme', [{ id: 'car', label: 'x' }, { id: 'car', location: fix(8, 8, T2) }], N2);
          assert.deepEqual((await store.objects.get('acme', 'car'))?.location, { longitude: 8, latitude: 8, time: T2 });
        }));

      void it('several entries of one id in a bulk: every fix goes to history, the latest becomes current', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'y', label: 'old y', data: { keep: 'yes' } }], N0);
          const changes = await store.objects.upsertMany(
            'acme',
            [
              { id: 'x', label: 'one', location: fix(1, 1, T1), data: { a: 1 } },
              { id: 'y', location: fix(0, 0, T0) },
              { id: 'x', location: fix(3, 3, T3), data: { b: 2 } },
              { id: 'x', label: 'two', location: fix(2, 2, T2), data: { a: null } },
            ],
            N1,
          );
          assert.deepEqual(changes, [
            {
              realm: 'acme',
              id: 'x',
              old: null,
              new: { id: 'x', label: 'two', location: { longitude: 3, latitude: 3, time: T3 }, data: { b: 2 }, seen: N1 },
              history: [
                { longitude: 1, latitude: 1, time: T1 },
                { longitude: 3, latitude: 3, time: T3 },
                { longitude: 2, latitude: 2, time: T2 },
              ],
              time: N1,
            },
            {
              realm: 'acme',
              id: 'y',
              old: { id: 'y', label: 'old y', location: null, data: { keep: 'yes' }, seen: null },
              new: { id: 'y', label: 'old y', location: { longitude: 0, latitude: 0, time: T0 }, data: { keep: 'yes' }, seen: N1 },
              history: [{ longitude: 0, latitude: 0, time: T0 }],
              time: N1,
            },
          ]);
          assert.deepEqual(await store.objects.get('acme', 'x'), {
            id: 'x',
            label: 'two',
            location: { longitude: 3, latitude: 3, time: T3 },
            data: { b: 2 },
            seen: N1,
          });
        }));

      void it('seen is set only by writes that carry a location', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'car', label: 'car' }], N0);
          assert.equal((await store.objects.get('acme', 'car'))?.seen, null);
          await store.objects.upsertMany('acme', [{ id: 'car', data: { a: 1 } }], N1);
          assert.equal((await store.objects.get('acme', 'car'))?.seen, null);
          await store.objects.upsertMany('acme', [{ id: 'car', location: fix(1, 1, T2) }], N1);
          assert.equal((await store.objects.get('acme', 'car'))?.seen, N1);
          await store.objects.upsertMany('acme', [{ id: 'car', label: 'renamed', data: { a: 2 } }], N2);
          assert.equal((await store.objects.get('acme', 'car'))?.seen, N1);
          // An older fix does not become current, but the object was still heard from.
          await store.objects.upsertMany('acme', [{ id: 'car', location: fix(0, 0, T0) }], N3);
          const read = await store.objects.get('acme', 'car');
          assert.equal(read?.seen, N3);
          assert.deepEqual(read?.location, { longitude: 1, latitude: 1, time: T2 });
        }));

      void it('ids may hold slashes, unicode and emoji', () =>
        withStore(async (store) => {
          const odd = ['vehicle/17', 'vehicle/17/trailer', '/', 'Ölfeld Straße', '車両-7', '🚗💨', 'a b', '\u00e9', 'e\u0301'];
          await store.objects.upsertMany(
            'acme',
            odd.map((id) => ({ id, label: `label of ${id}` })),
            N0,
          );
          for (const id of odd) {
            assert.deepEqual(await store.objects.get('acme', id), {
              id,
              label: `label of ${id}`,
              location: null,
              data: {},
              seen: null,
            });
          }
          // No prefix matching and no unicode normalisation: these are different ids.
          assert.equal(await store.objects.get('acme', 'vehicle'), null);
          assert.equal(await store.objects.get('acme', 'vehicle/1'), null);
          assert.equal(await store.objects.get('acme', '🚗'), null);
          assert.equal((await store.objects.list('acme', { limit: 100 })).items.length, 9);

          assert.notEqual(await store.objects.delete('acme', 'vehicle/17', N1), null);
          assert.equal(await store.objects.get('acme', 'vehicle/17'), null);
          assert.equal((await store.objects.get('acme', 'vehicle/17/trailer'))?.label, 'label of vehicle/17/trailer');
          assert.notEqual(await store.objects.delete('acme', 'e\u0301', N1), null);
          assert.equal((await store.objects.get('acme', '\u00e9'))?.label, 'label of \u00e9');
        }));

      void it('list pages cover every id exactly once, in Unicode code point order', () =>
        withStore(async (store) => {
          const inserted = ['😀', 'vehicle/2', 'a', '\uFFFD', 'é', 'B', '\uE000', 'vehicle/17'];
          // By code point: B (U+42) < a (U+61) < v... < é (U+E9) < U+E000 < U+FFFD < 😀 (U+1F600).
          const expected = ['B', 'a', 'vehicle/17', 'vehicle/2', 'é', '\uE000', '\uFFFD', '😀'];
          // JavaScript's default sort compares UTF-16 code units and puts 😀 (D83D DE00) first of the three.
          assert.notDeepEqual([...inserted].sort(), expected);
          const byCodePoint = (a: string, b: string): number => {
            const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
            const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
            for (let i = 0; i < Math.min(x.length, y.length); i++) {
              if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
            }
            return x.length - y.length;
          };
          assert.deepEqual([...inserted].sort(byCodePoint), expected);

          for (const id of inserted) await store.objects.upsertMany('acme', [{ id, data: { id } }], N0);
          await store.objects.upsertMany('other', [{ id: 'a0' }, { id: 'C' }], N0);

          const pages: string[][] = [];
          let cursor: string | undefined;
          for (;;) {
            const page = await store.objects.list('acme', cursor === undefined ? { limit: 3 } : { limit: 3, cursor });
            pages.push(ids(page.items));
            for (const item of page.items) assert.deepEqual(item.data, { id: item.id });
            if (page.next === null) break;
            assert.equal(typeof page.next, 'string');
            cursor = page.next;
            assert.ok(pages.length < 10, 'paging does not end');
          }
          assert.deepEqual(pages, [
            ['B', 'a', 'vehicle/17'],
            ['vehicle/2', 'é', '\uE000'],
            ['\uFFFD', '😀'],
          ]);

          // A page that ends exactly at the last id says so.
          const whole = await store.objects.list('acme', { limit: 8 });
          assert.deepEqual(ids(whole.items), expected);
          assert.equal(whole.next, null);
          const almost = await store.objects.list('acme', { limit: 7 });
          assert.deepEqual(ids(almost.items), expected.slice(0, 7));
          assert.ok(almost.next !== null);
          assert.deepEqual(await store.objects.list('acme', { limit: 7, cursor: almost.next }), {
            items: [{ id: '😀', label: null, location: null, data: { id: '😀' }, seen: null }],
            next: null,
          });
          assert.deepEqual(await store.objects.list('empty', { limit: 5 }), { items: [], next: null });
        }));

      void it('a cursor stays valid when the id it ends on is deleted', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', ['d', 'a', 'c', 'b'].map((id) => ({ id })), N0);
          const first = await store.objects.list('acme', { limit: 2 });
          assert.deepEqual(ids(first.items), ['a', 'b']);
          assert.ok(first.next !== null);
          await store.objects.delete('acme', 'b', N1);
          await store.objects.upsertMany('acme', [{ id: 'aa' }, { id: 'bb' }], N1);
          const second = await store.objects.list('acme', { limit: 2, cursor: first.next });
          assert.deepEqual(ids(second.items), ['bb', 'c']);
        }));

      void it('a malformed cursor is invalid_cursor', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('acme', [{ id: 'a' }], N0);
          await store.areas.create('acme', { id: 'z', label: null, shape: { w: 0, n: 1, e: 1, s: 0 }, data: {} });
          const bad = [
            '',
            'not a cursor',
            '!!!!',
            'eyJ2IjoxLCJhZnRlciI6ImEifQ==', // padded base64, not base64url
            Buffer.from('not json').toString('base64url'),
            Buffer.from('"a"').toString('base64url'),
            Buffer.from('[]').toString('base64url'),
            Buffer.from('{}').toString('base64url'),
            Buffer.from('{"after":42}').toString('base64url'),
          ];
          for (const cursor of bad) {
            await assert.rejects(store.objects.list('acme', { limit: 10, cursor }), failsWith('invalid_cursor'), cursor);
            await assert.rejects(store.areas.list('acme', { limit: 10, cursor }), failsWith('invalid_cursor'), cursor);
          }
        }));

      void it('delete returns the change and removes the object; null when missing', () =>
        withStore(async (store) => {
          await store.objects.upsertMany(
            'acme',
            [{ id: 'car', label: 'Car', location: fix(1, 2, T0), data: { a: 1 } }, { id: 'car', location: fix(3, 4, T1) }],
            N0,
          );
          assert.deepEqual(await store.objects.delete('acme', 'car', N1), {
            realm: 'acme',
            id: 'car',
            old: { id: 'car', label: 'Car', location: { longitude: 3, latitude: 4, time: T1 }, data: { a: 1 }, seen: N0 },
            new: null,
            history: [],
            time: N1,
          });
          assert.equal(await store.objects.get('acme', 'car'), null);
          assert.deepEqual(await store.objects.list('acme', { limit: 10 }), { items: [], next: null });
          assert.equal(await store.objects.delete('acme', 'car', N2), null);
          assert.equal(await store.objects.delete('acme', 'never', N2), null);

          // Written again, it starts from nothing.
          const [again] = await store.objects.upsertMany('acme', [{ id: 'car', location: fix(0, 0, T0) }], N3);
          assert.equal(again?.old, null);
          assert.deepEqual(again?.new, {
            id: 'car',
            label: null,
            location: { longitude: 0, latitude: 0, time: T0 },
            data: {},
            seen: N3,
          });
        }));
    });

    void describe('areas', () => {
      const circle: Area = { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 250 }, data: { kind: 'yard', gates: 2 } };

      void it('create returns the change and get reads the area', () =>
        withStore(async (store) => {
          assert.deepEqual(await store.areas.create('acme', circle), {
            realm: 'acme',
            id: 'depot',
            old: null,
            new: { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 250 }, data: { kind: 'yard', gates: 2 } },
          });
          assert.deepEqual(await store.areas.get('acme', 'depot'), {
            id: 'depot',
            label: 'Depot',
            shape: { cx: 13.4, cy: 52.5, r: 250 },
            data: { kind: 'yard', gates: 2 },
          });
          assert.equal(await store.areas.get('acme', 'nowhere'), null);
        }));

      void it('create on an existing id is a conflict and changes nothing', () =>
        withStore(async (store) => {
          await store.areas.create('acme', circle);
          await assert.rejects(
            store.areas.create('acme', { id: 'depot', label: 'Other', shape: { w: 0, n: 1, e: 1, s: 0 }, data: {} }),
            (err: unknown) => {
              assert.ok(err instanceof LocusError);
              assert.equal(err.code, 'conflict');
              assert.equal(err.status, 409);
              assert.equal(err.message, 'area with id depot already exists');
              return true;
            },
          );
          assert.deepEqual(await store.areas.get('acme', 'depot'), {
            id: 'depot',
            label: 'Depot',
            shape: { cx: 13.4, cy: 52.5, r: 250 },
            data: { kind: 'yard', gates: 2 },
          });
        }));

      void it('update replaces label and shape and merges data', () =>
        withStore(async (store) => {
          await store.areas.create('acme', circle);
          const polygon = { points: [[0, 0], [1, 0], [1, 1]] as [number, number][] };
          assert.deepEqual(await store.areas.update('acme', 'depot', { label: 'Main depot', shape: polygon, data: { gates: null, open: true } }), {
            realm: 'acme',
            id: 'depot',
            old: { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 250 }, data: { kind: 'yard', gates: 2 } },
            new: { id: 'depot', label: 'Main depot', shape: { points: [[0, 0], [1, 0], [1, 1]] }, data: { kind: 'yard', open: true } },
          });
          // An empty patch keeps everything; a null label clears it.
          await store.areas.update('acme', 'depot', {});
          await store.areas.update('acme', 'depot', { label: null, data: { kind: 'depot' } });
          assert.deepEqual(await store.areas.get('acme', 'depot'), {
            id: 'depot',
            label: null,
            shape: { points: [[0, 0], [1, 0], [1, 1]] },
            data: { kind: 'depot', open: true },
          });
        }));

      void it('nested area data reads back exactly; an update replaces a nested value whole', () =>
        withStore(async (store) => {
          const data = JSON.parse('{"style":{"fill":"#f00","dash":[4,2]},"__proto__":{"a":null},"k":1}') as Data;
          await store.areas.create('acme', { id: 'zone', label: 'Zone', shape: { cx: 1, cy: 2, r: 10 }, data });
          assert.equal(JSON.stringify((await store.areas.get('acme', 'zone'))?.data), JSON.stringify(data));
          const change = await store.areas.update('acme', 'zone', { data: { style: { fill: '#0f0' }, k: null } });
          assert.equal(JSON.stringify(change.new?.data), '{"style":{"fill":"#0f0"},"__proto__":{"a":null}}');
          assert.equal(JSON.stringify((await store.areas.list('acme', { limit: 10 })).items[0]?.data), JSON.stringify(change.new?.data));
        }));

      void it('update of a missing area is not_found', () =>
        withStore(async (store) => {
          await store.areas.create('other', circle);
          await assert.rejects(store.areas.update('acme', 'depot', { label: 'x' }), failsWith('not_found'));
          assert.equal(await store.areas.get('acme', 'depot'), null);
        }));

      void it('list pages in code point order', () =>
        withStore(async (store) => {
          for (const id of ['zone/b', '😀', 'Zone', 'zone', 'é', 'zone/a']) {
            await store.areas.create('acme', { id, label: id, shape: { cx: 0, cy: 0, r: 1 }, data: {} });
          }
          const first = await store.areas.list('acme', { limit: 4 });
          assert.deepEqual(ids(first.items), ['Zone', 'zone', 'zone/a', 'zone/b']);
          assert.deepEqual(first.items[0], { id: 'Zone', label: 'Zone', shape: { cx: 0, cy: 0, r: 1 }, data: {} });
          assert.ok(first.next !== null);
          const second = await store.areas.list('acme', { limit: 4, cursor: first.next });
          assert.deepEqual(ids(second.items), ['é', '😀']);
          assert.equal(second.next, null);
          assert.deepEqual(await store.areas.list('empty', { limit: 4 }), { items: [], next: null });
        }));

      void it('delete returns the change; null when missing', () =>
        withStore(async (store) => {
          await store.areas.create('acme', circle);
          assert.deepEqual(await store.areas.delete('acme', 'depot'), {
            realm: 'acme',
            id: 'depot',
            old: { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 250 }, data: { kind: 'yard', gates: 2 } },
            new: null,
          });
          assert.equal(await store.areas.get('acme', 'depot'), null);
          assert.equal(await store.areas.delete('acme', 'depot'), null);
          // The id is free again.
          await store.areas.create('acme', { ...circle, label: 'Again' });
          assert.equal((await store.areas.get('acme', 'depot'))?.label, 'Again');
        }));
    });

    void describe('realm isolation', () => {
      void it('the same object id in two realms is two independent objects', () =>
        withStore(async (store) => {
          await store.objects.upsertMany('north', [{ id: 'car', label: 'north car', location: fix(1, 1, T2), data: { a: 1 } }], N0);
          const [south] = await store.objects.upsertMany('south', [{ id: 'car', label: 'south car', location: fix(2, 2, T0) }], N1);
          assert.equal(south?.old, null);
          // An older fix in one realm is not compared with a newer one in the other.
          assert.deepEqual(south?.new?.location, { longitude: 2, latitude: 2, time: T0 });

          await store.objects.upsertMany('north', [{ id: 'car', data: { a: null, b: 2 } }], N2);
          assert.deepEqual(await store.objects.get('south', 'car'), {
            id: 'car',
            label: 'south car',
            location: { longitude: 2, latitude: 2, time: T0 },
            data: {},
            seen: N1,
          });
          assert.deepEqual(await store.objects.get('north', 'car'), {
            id: 'car',
            label: 'north car',
            location: { longitude: 1, latitude: 1, time: T2 },
            data: { b: 2 },
            seen: N0,
          });
          await store.objects.upsertMany('south', [{ id: 'bike' }], N2);
          assert.deepEqual(ids((await store.objects.list('north', { limit: 10 })).items), ['car']);
          assert.deepEqual(ids((await store.objects.list('south', { limit: 10 })).items), ['bike', 'car']);

          assert.notEqual(await store.objects.delete('north', 'car', N3), null);
          assert.equal(await store.objects.get('north', 'car'), null);
          assert.equal((await store.objects.get('south', 'car'))?.label, 'south car');
        }));

      void it('the same area id in two realms is two independent areas', () =>
        withStore(async (store) => {
          await store.areas.create('north', { id: 'zone', label: 'N', shape: { cx: 0, cy: 0, r: 1 }, data: {} });
          await store.areas.create('south', { id: 'zone', label: 'S', shape: { cx: 1, cy: 1, r: 2 }, data: {} });
          await store.areas.update('north', 'zone', { data: { x: 1 } });
          assert.deepEqual(await store.areas.get('south', 'zone'), {
            id: 'zone',
            label: 'S',
            shape: { cx: 1, cy: 1, r: 2 },
            data: {},
          });
          assert.notEqual(await store.areas.delete('south', 'zone'), null);
          assert.deepEqual(await store.areas.get('north', 'zone'), {
            id: 'zone',
            label: 'N',
            shape: { cx: 0, cy: 0, r: 1 },
            data: { x: 1 },
          });
          assert.equal(await store.areas.delete('south', 'zone'), null);
        }));
    });

    void describe('queries', () => {
      queryContract(withStore);
    });

    instructionContract(withStore);
  });
}
