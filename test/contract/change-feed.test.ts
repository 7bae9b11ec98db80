/**
 * The one change stream across processes, on a real nats-server: two processes (each its own
 * NATS bus and write path, as startup/services.ts registers it: the change publisher, then the
 * geofence engine) on one store. The change records one process stores reach every process's
 * ChangeFeed (BusChangeFeed) whole, its own included, and a geofence crossing is produced once,
 * by the process that stored the write, however many processes listen.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultRealmSettings } from '../../internal/domain/realm-settings.js';
import type { AreaChange, ObjectChange, Realm } from '../../internal/domain/types.js';
import { openNatsBus, type NatsBus } from '../../internal/events/nats-bus.js';
import { GeofenceEngine } from '../../internal/geofence/geofence-engine.js';
import { AreaService } from '../../internal/service/areas.js';
import { BusChangeFeed } from '../../internal/service/bus-change-feed.js';
import type { RealmChange } from '../../internal/service/change-feed.js';
import { ChangePublisher } from '../../internal/service/change-publisher.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { ObjectService } from '../../internal/service/objects.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { changeRecords, collect, eventually } from './bus-contract.js';

interface Process {
  bus: NatsBus;
  changes: ChangeStream;
  objects: ObjectService;
  areas: AreaService;
  geofence: GeofenceEngine;
  /** The change records this process's services handed to its change stream, in order. */
  stored: RealmChange[];
}

async function openProcess(server: NatsServer, name: string, store: SqliteStore): Promise<Process> {
  const bus = await openNatsBus({ servers: [server.url], name, reconnectDelayMs: 50, maxReconnectDelayMs: 200 });
  const changes = new ChangeStream((err) => {
    throw err;
  });
  const stored: RealmChange[] = [];
  changes.add(new ChangePublisher(bus));
  const geofence = new GeofenceEngine(store.areas, bus);
  changes.add(geofence);
  changes.add({
    objectsChanged: (_realm: string, records: readonly ObjectChange[]) => {
      for (const change of records) stored.push({ kind: 'object', change });
    },
    areaChanged: (_realm: string, change: AreaChange) => {
      stored.push({ kind: 'area', change });
    },
    realmDeleted: () => undefined,
  });
  const objects = new ObjectService(store, Date.now, { maxBulk: 1000, maxPage: 1000 }, changes);
  const areas = new AreaService(store, { maxPage: 1000, maxVertices: 1000 }, changes);
  return { bus, changes, objects, areas, geofence, stored };
}

/** What a feed handed over, as the port's RealmChange (the bus event also names the realm). */
const plain = (changes: readonly RealmChange[]): RealmChange[] => changes.map((c) => (c.kind === 'object' ? { kind: 'object', change: c.change } : { kind: 'area', change: c.change }));

describe('change feed over NATS (BusChangeFeed)', () => {
  let server: NatsServer;
  let store: SqliteStore;
  let a: Process;
  let b: Process;
  let realm: Realm;

  before(async () => {
    server = await startNatsServer();
    store = openSqliteStore(':memory:');
    realm = (await store.realms.put('fleet', { ...defaultRealmSettings }, new Date().toISOString())).realm;
    a = await openProcess(server, 'process-a', store);
    b = await openProcess(server, 'process-b', store);
  });

  after(async () => {
    await a.bus.close();
    await b.bus.close();
    await store.close();
    await server.stop();
  });

  const fix = (lon: number, s: number): { location: { longitude: number; latitude: number; time: string } } => ({
    location: { longitude: lon, latitude: 0, time: new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString() },
  });

  it('hands every process the change records one process stored, whole and in order, its own included', async () => {
    const onB: RealmChange[] = [];
    const onA: RealmChange[] = [];
    const feedB = new BusChangeFeed(b.bus).subscribe(realm.id, (changes) => onB.push(...changes));
    const feedA = new BusChangeFeed(a.bus).subscribe(realm.id, (changes) => onA.push(...changes));
    await b.bus.flush();
    await a.areas.create(realm, 'depot', { label: 'Depot', shape: { w: -1, s: -1, e: 1, n: 1 }, data: { gates: 2 } });
    await a.objects.upsert(realm, 'van/1', { label: 'Van', ...fix(-5, 1), data: { load: { pallets: [1, 2] } } });
    await a.objects.bulk(realm, { objects: [{ id: 'van/1', ...fix(0, 2) }, { id: 'van/2', ...fix(0.5, 2) }] });
    await a.areas.update(realm, 'depot', { shape: { w: -2, s: -2, e: 2, n: 2 } });
    await a.objects.delete(realm, 'van/2');
    await a.areas.delete(realm, 'depot');
    assert.equal(a.stored.length, 7);
    await eventually(() => onB.length === 7 && onA.length === 7, 'seven change records on both processes');
    // B's records crossed NATS as JSON; A's stayed in the process. Both equal what the store returned.
    assert.deepEqual(plain(onB), structuredClone(a.stored));
    assert.deepEqual(plain(onA), a.stored);
    const move = onB[2];
    assert.ok(move?.kind === 'object');
    assert.deepEqual(move.change.old?.location, fix(-5, 1).location, 'the old state travels');
    assert.deepEqual(move.change.history, [fix(0, 2).location], 'the history travels');
    assert.equal(typeof move.change.time, 'string');
    feedA.unsubscribe();
    feedB.unsubscribe();
  });

  it('carries an instruction\'s origin, and hands over nothing but change records', async () => {
    const got: (readonly RealmChange[])[] = [];
    const feed = new BusChangeFeed(b.bus).subscribe('elsewhere', (changes) => got.push(changes));
    await b.bus.flush();
    const events = changeRecords('elsewhere');
    // A message with crossings and presence only: no call.
    a.bus.publish('elsewhere', [
      { kind: 'entered', realm: 'elsewhere', object: 'o', area: 'A', time: 't' },
      { kind: 'cst', realm: 'elsewhere', object: 'o', status: 'con' },
    ]);
    for (const event of events) {
      if (event.kind === 'object') a.changes.objectsChanged('elsewhere', [event.change]);
      else if (event.kind === 'area') a.changes.areaChanged('elsewhere', event.change);
    }
    await eventually(() => got.flat().length === events.length, 'the records');
    assert.deepEqual(
      got.flat().map((c) => c.change),
      structuredClone(events.map((e) => (e.kind === 'object' || e.kind === 'area' ? e.change : null))),
    );
    assert.deepEqual(
      got.flat().flatMap((c) => (c.change.origin === undefined ? [] : [c.change.origin])),
      [
        { instruction: 'ins-1', depth: 2 },
        { instruction: 'ins-2', depth: 1 },
      ],
    );
    feed.unsubscribe();
    got.length = 0;
    a.changes.objectsChanged('elsewhere', [{ realm: 'elsewhere', id: 'late', old: null, new: null, history: [], time: 't' }]);
    await a.bus.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(got, [], 'nothing after unsubscribe');
  });

  it('produces a geofence crossing once, on the process that stored the write, whoever listens', async () => {
    const zone = (await store.realms.put('zones', { ...defaultRealmSettings }, new Date().toISOString())).realm;
    const onA = collect(a.bus, zone.id);
    const onB = collect(b.bus, zone.id);
    await a.bus.flush();
    await b.bus.flush();
    // Both processes hold the realm's area index (each wrote once), so either could compute crossings.
    await a.objects.upsert(zone, 'a-car', fix(-10, 1));
    await b.objects.upsert(zone, 'b-car', fix(-10, 1));
    await eventually(() => a.geofence.indexedAreas(zone.id) === 0 && b.geofence.indexedAreas(zone.id) === 0, 'both indexes loaded');
    await a.areas.create(zone, 'yard', { label: 'Yard', shape: { w: -1, s: -1, e: 1, n: 1 } });
    // The yard reaches B's index through the store: B reloads it on its next write (its control message is not wired here).
    b.geofence.hear({ kind: 'areas.changed', realm: zone.id });
    await a.objects.upsert(zone, 'a-car', fix(0, 2));
    await b.objects.upsert(zone, 'b-car', fix(0, 2));
    await a.objects.upsert(zone, 'a-car', fix(10, 3));
    const crossings = (events: typeof onA.events): string[] =>
      events.flatMap((e) => (e.kind === 'entered' || e.kind === 'exited' ? [`${e.kind} ${e.object} ${e.area}`] : [])).sort();
    const expected = ['entered a-car yard', 'entered b-car yard', 'exited a-car yard'];
    await eventually(() => crossings(onA.events).length >= 3 && crossings(onB.events).length >= 3, 'the crossings on both processes');
    await a.bus.flush();
    await b.bus.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(crossings(onA.events), expected);
    assert.deepEqual(crossings(onB.events), expected);
    onA.stop();
    onB.stop();
  });
});
