/**
 * Caches are told, not guessed: two service stacks (as two API processes would have) on one
 * SQLite store. A realm, token, signing key or area changed through stack A is seen by stack
 * B once the control message has reached it over the shared bus; a stack that the message
 * never reaches (its own bus) keeps serving its held entry, which proves the cache is used,
 * until the hold time (HOLD_MS) runs out, or until its bus says messages may have been lost
 * (a reconnect after an outage): then every cache drops everything.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { Authenticator } from '../../internal/auth/authenticator.js';
import { HeldSigningKeys, HeldTokens, HOLD_MS } from '../../internal/auth/held-lookups.js';
import { defaultTenant } from '../../internal/auth/principal.js';
import type { Realm } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import type { LocusEvent } from '../../internal/events/port.js';
import { GeofenceEngine } from '../../internal/geofence/geofence-engine.js';
import { AreaService } from '../../internal/service/areas.js';
import { ChangePublisher } from '../../internal/service/change-publisher.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { ControlChannel } from '../../internal/service/control.js';
import { ObjectService } from '../../internal/service/objects.js';
import { RealmService } from '../../internal/service/realms.js';
import { TenantService } from '../../internal/service/tenants.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';

/** A local bus that can say it may have lost messages (as the NATS bus does after a reconnect). */
class ResyncingBus extends LocalEventBus {
  private readonly listeners = new Set<() => void>();
  override onResync(listener: () => void): { unsubscribe(): void } {
    this.listeners.add(listener);
    return { unsubscribe: () => this.listeners.delete(listener) };
  }
  resync(): void {
    for (const listener of this.listeners) listener();
  }
}

/** Lets the local bus deliver what is queued (it delivers in the next turn). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const start = Date.UTC(2026, 0, 1);

/** The services of one API process, on a shared store and the bus it is given. */
function stack(store: ReturnType<typeof openSqliteStore>, bus: LocalEventBus, clock: () => number) {
  const changes = new ChangeStream();
  const geofence = new GeofenceEngine(store.areas, bus);
  changes.add(new ChangePublisher(bus));
  changes.add(geofence);
  const control = new ControlChannel(bus);
  const realms = new RealmService(store, clock, changes, bus, control);
  const tenants = new TenantService(store, clock, control);
  const tokens = new HeldTokens(store.tokens, clock);
  const keys = new HeldSigningKeys(store.signingKeys, clock);
  for (const cache of [realms, tokens, keys, geofence]) control.add(cache);
  const auth = new Authenticator(tokens, null, { signingKeys: keys, clock });
  const areas = new AreaService(store, { maxPage: 1000, maxVertices: 1000 }, changes, control);
  const objects = new ObjectService(store, clock, { maxBulk: 1000, maxPage: 1000 }, changes);
  return { realms, tenants, tokens, keys, auth, areas, objects, geofence, control };
}

describe('caches told through control messages', () => {
  const store = openSqliteStore(':memory:');
  const shared = new LocalEventBus();
  const deafBus = new ResyncingBus();
  let now = start;
  const clock = (): number => now;
  const a = stack(store, shared, clock);
  const b = stack(store, shared, clock);
  /** A stack no control message of A reaches. */
  const deaf = stack(store, deafBus, clock);
  after(async () => {
    for (const s of [a, b, deaf]) s.control.close();
    await shared.close();
    await deafBus.close();
    await store.close();
  });

  it('a token revoked through A is refused by B after the message; without it the held token is used', async () => {
    now = start;
    await a.realms.put(defaultTenant, 'fleet', undefined);
    const issued = await a.realms.createToken(defaultTenant, 'fleet', { scope: 'write' });
    const kept = await a.realms.createToken(defaultTenant, 'fleet', { scope: 'read' });
    for (const s of [a, b, deaf]) assert.equal((await s.auth.authenticate(issued.token)).realm, 'fleet');
    await b.auth.authenticate(kept.token);
    assert.equal(b.tokens.size, 2);

    await a.realms.revokeToken(defaultTenant, 'fleet', issued.id);
    // A dropped it at once; B and the deaf stack still hold it (the store no longer has it).
    await assert.rejects(a.auth.authenticate(issued.token), { code: 'unauthorized' });
    assert.equal((await b.auth.authenticate(issued.token)).realm, 'fleet', 'B answers from its cache until told');
    await turn();
    assert.equal(b.tokens.size, 1, 'only the revoked token was dropped');
    await assert.rejects(b.auth.authenticate(issued.token), { code: 'unauthorized' });
    assert.equal((await deaf.auth.authenticate(issued.token)).realm, 'fleet', 'never told: the held entry is used');
    now += HOLD_MS;
    await assert.rejects(deaf.auth.authenticate(issued.token), { code: 'unauthorized' });
  });

  it('a realm changed through A is read again by B after the message', async () => {
    now = start;
    await a.realms.put(defaultTenant, 'settings', { settings: { connectionTimeout: 30 } });
    const held = async (s: typeof a): Promise<number> => ((await s.realms.findIn(defaultTenant, 'settings')) as Realm).settings.connectionTimeout;
    for (const s of [a, b, deaf]) assert.equal(await held(s), 30);
    await a.realms.updateSettings(defaultTenant, 'settings', { settings: { connectionTimeout: 90 } });
    assert.equal(await held(a), 90);
    assert.equal(await held(b), 30, 'B answers from its cache until told');
    await turn();
    assert.equal(await held(b), 90);
    assert.equal(await held(deaf), 30, 'never told: the held entry is used');
    now += 1000;
    assert.equal(await held(deaf), 90);
  });

  it('a signing key revoked through A fails JWTs on B after the message', async () => {
    now = start;
    await a.tenants.create('acme', { label: 'Acme' });
    const key = await a.tenants.createKey('acme', {});
    const jwt = await new SignJWT({ sub: 'device-1' }).setProtectedHeader({ alg: 'HS256', kid: key.id }).sign(new TextEncoder().encode(key.secret));
    for (const s of [a, b, deaf]) assert.equal((await s.auth.authenticate(jwt)).tenant, 'acme');
    await a.tenants.revokeKey('acme', key.id);
    await assert.rejects(a.auth.authenticate(jwt), { code: 'unauthorized' });
    assert.equal((await b.auth.authenticate(jwt)).tenant, 'acme', 'B answers from its cache until told');
    await turn();
    await assert.rejects(b.auth.authenticate(jwt), { code: 'unauthorized' });
    assert.equal((await deaf.auth.authenticate(jwt)).tenant, 'acme', 'never told: the held key is used');
    now += HOLD_MS;
    await assert.rejects(deaf.auth.authenticate(jwt), { code: 'unauthorized' });
  });

  it('an area created through A drives geofencing on B after the message; without it B keeps its index', async () => {
    now = start;
    await a.realms.put(defaultTenant, 'zones', undefined);
    const realm = (await a.realms.findIn(defaultTenant, 'zones')) as Realm;
    const entered = (bus: LocalEventBus): string[] => {
      const seen: string[] = [];
      bus.subscribe(realm.id, (message) => {
        if (message.kind !== 'events') return;
        for (const event of message.events as LocusEvent[]) if (event.kind === 'entered') seen.push(`${event.object}>${event.area}`);
      });
      return seen;
    };
    const onShared = entered(shared);
    const onDeaf = entered(deafBus);
    const fix = (s: number, lon: number): { location: { longitude: number; latitude: number; time: string } } => ({
      location: { longitude: lon, latitude: 0, time: new Date(start + s * 1000).toISOString() },
    });
    // B and the deaf stack load the realm's (empty) area index with a first write each.
    await b.objects.upsert(realm, 'car-b', fix(1, -10));
    await deaf.objects.upsert(realm, 'car-d', fix(1, -10));
    await turn();
    assert.equal(b.geofence.indexedAreas(realm.id), 0);
    assert.equal(deaf.geofence.indexedAreas(realm.id), 0);

    await a.areas.create(realm, 'depot', { label: 'Depot', shape: { w: -1, s: -1, e: 1, n: 1 } });
    await turn();
    assert.equal(b.geofence.indexedAreas(realm.id), null, 'B dropped its index');
    await b.objects.upsert(realm, 'car-b', fix(2, 0));
    await deaf.objects.upsert(realm, 'car-d', fix(2, 0));
    for (let i = 0; i < 5 && onShared.length === 0; i++) await turn();
    assert.deepEqual(onShared, ['car-b>depot']);
    assert.deepEqual(onDeaf, [], 'never told: the deaf stack used its index without the area');
    assert.equal(deaf.geofence.indexedAreas(realm.id), 0);
  });

  it('when the bus may have lost messages, every cache drops everything: the deaf stack sees the area, the revoked token, the changed realm', async () => {
    now = start;
    const realm = (await a.realms.findIn(defaultTenant, 'zones')) as Realm;
    const seen: string[] = [];
    deafBus.subscribe(realm.id, (message) => {
      if (message.kind !== 'events') return;
      for (const event of message.events as LocusEvent[]) if (event.kind === 'entered' || event.kind === 'exited') seen.push(`${event.kind} ${event.object}>${event.area}`);
    });
    const fix = (s: number, lon: number): { location: { longitude: number; latitude: number; time: string } } => ({
      location: { longitude: lon, latitude: 0, time: new Date(start + s * 1000).toISOString() },
    });
    const issued = await a.realms.createToken(defaultTenant, 'zones', { scope: 'read' });
    assert.equal((await deaf.auth.authenticate(issued.token)).realm, 'zones');
    assert.equal((await deaf.realms.findIn(defaultTenant, 'zones'))?.settings.connectionTimeout, realm.settings.connectionTimeout);
    await a.realms.revokeToken(defaultTenant, 'zones', issued.id);
    await a.realms.put(defaultTenant, 'zones', { settings: { connectionTimeout: 77 } });
    await turn();
    assert.equal((await deaf.auth.authenticate(issued.token)).realm, 'zones', 'held: no message reached the deaf stack');
    assert.notEqual((await deaf.realms.findIn(defaultTenant, 'zones'))?.settings.connectionTimeout, 77, 'held too');
    assert.equal(deaf.geofence.indexedAreas(realm.id), 0, 'its index still lacks the depot');

    deafBus.resync();
    assert.equal(deaf.geofence.indexedAreas(realm.id), null, 'the index is dropped');
    await assert.rejects(deaf.auth.authenticate(issued.token), { code: 'unauthorized' });
    assert.equal((await deaf.realms.findIn(defaultTenant, 'zones'))?.settings.connectionTimeout, 77);
    await deaf.objects.upsert(realm, 'car-d', fix(3, 10));
    await deaf.objects.upsert(realm, 'car-d', fix(4, 0));
    for (let i = 0; i < 5 && seen.length < 2; i++) await turn();
    assert.deepEqual(seen, ['exited car-d>depot', 'entered car-d>depot'], 'the reloaded index holds the depot');
  });
});
