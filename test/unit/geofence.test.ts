/**
 * The geofence engine on change records, without a server: which crossings a write raises,
 * in which order, and how the per-realm area index follows area writes. Most cases run the
 * write path's listeners as the services register them (the change publisher, then the
 * engine) and read the bus as the `evt` model's subscribers do (subscriptionEventsOf), so
 * they state what a subscriber sees.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Area, Location, ObjectChange, Shape, TrackedObject } from '../../internal/domain/types.js';
import type { BusHealth, BusSubscription, ControlMessage, EventBus, LocusEvent, RealmMessage } from '../../internal/events/port.js';
import { AreaIndex } from '../../internal/geofence/area-index.js';
import { crossingsOf, GeofenceEngine } from '../../internal/geofence/geofence-engine.js';
import { containsPoint } from '../../internal/geo/contains.js';
import { ChangePublisher } from '../../internal/service/change-publisher.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { noPresence } from '../../internal/service/presence-port.js';
import { subscriptionEventsOf } from '../../internal/service/subscriptions.js';
import type { AreaListQuery, Page } from '../../internal/store/port.js';

const T = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const loc = (longitude: number, latitude: number, s = 0): Location => ({ longitude, latitude, time: T(s) });
const obj = (id: string, location: Location | null): TrackedObject => ({ id, label: null, location, data: {}, seen: location?.time ?? null });
const area = (id: string, shape: Shape): Area => ({ id, label: null, shape, data: {} });
const rect = (w: number, s: number, e: number, n: number): Shape => ({ w, s, e, n });

/** A move of `id` from `from` to `to` (null: create or delete). */
function move(id: string, from: Location | null | undefined, to: Location | null | undefined, realm = 'r'): ObjectChange {
  return {
    realm,
    id,
    old: from === undefined ? null : obj(id, from),
    new: to === undefined ? null : obj(id, to),
    history: to ? [to] : [],
    time: T(100),
  };
}

class CapturingBus implements EventBus {
  readonly published: { realm: string; events: LocusEvent[] }[] = [];
  readonly deleted: string[] = [];
  publish(realm: string, events: readonly LocusEvent[]): void {
    this.published.push({ realm, events: [...events] });
  }
  publishRealmDeleted(realm: string): void {
    this.deleted.push(realm);
  }
  subscribe(_realm: string, _handler: (message: RealmMessage) => void): BusSubscription {
    return { unsubscribe: () => undefined };
  }
  publishTenant(): void {
    // Realm changes are not the geofence engine's.
  }
  subscribeTenant(): BusSubscription {
    return { unsubscribe: () => undefined };
  }
  publishControl(): void {
    // Control messages are not the geofence engine's.
  }
  subscribeControl(): BusSubscription {
    return { unsubscribe: () => undefined };
  }
  publishLocal(realm: string, events: readonly LocusEvent[]): void {
    this.publish(realm, events);
  }
  publishPresence(): void {
    // Presence is not the geofence engine's.
  }
  subscribePresence(): BusSubscription {
    return { unsubscribe: () => undefined };
  }
  onResync(): BusSubscription {
    return { unsubscribe: () => undefined };
  }
  health(): BusHealth {
    return { ok: true, detail: 'capturing' };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  /** The evt model's events as short strings: `loc a`, `ent a A`, `del area A`. */
  flat(): string[] {
    return this.published.flatMap(({ events }) =>
      subscriptionEventsOf(events, noPresence).map((e) => {
        switch (e.kind) {
          case 'location':
            return `loc ${e.object.id}`;
          case 'entered':
          case 'exited':
            return `${e.kind === 'entered' ? 'ent' : 'exi'} ${e.object} ${e.area}`;
          case 'deleted':
            return 'object' in e ? `del object ${e.object}` : `del area ${e.area}`;
        }
      }),
    );
  }
  /** The crossings alone, as `ent a A`. */
  crossings(): string[] {
    return this.flat().filter((e) => e.startsWith('ent ') || e.startsWith('exi '));
  }
}

/** The change stream's listeners as the services register them: the change records first, then the crossings. */
class WritePath extends ChangeStream {
  constructor(readonly geofence: GeofenceEngine, bus: EventBus) {
    super((err) => {
      throw err;
    });
    this.add(new ChangePublisher(bus));
    this.add(geofence);
  }
  indexedAreas(realm: string): number | null {
    return this.geofence.indexedAreas(realm);
  }
  hear(message: ControlMessage): void {
    this.geofence.hear(message);
  }
}

function writePath(areas: ConstructorParameters<typeof GeofenceEngine>[0], bus: CapturingBus, onError?: (err: unknown) => void): WritePath {
  return new WritePath(new GeofenceEngine(areas, bus, onError), bus);
}

/** An area store whose list answers from a map, in pages of two, optionally held until released. */
class FakeAreas {
  readonly byRealm = new Map<string, Area[]>();
  lists = 0;
  private gate: Promise<void> | null = null;
  private open: () => void = () => undefined;
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }
  release(): void {
    this.open();
    this.gate = null;
  }
  async list(realm: string, query: AreaListQuery): Promise<Page<Area>> {
    this.lists++;
    if (this.gate !== null) await this.gate;
    const all = [...(this.byRealm.get(realm) ?? [])].sort((a, b) => (a.id < b.id ? -1 : 1));
    const start = query.cursor === undefined ? 0 : Number(query.cursor);
    const items = all.slice(start, start + 2);
    return { items, next: start + 2 < all.length ? String(start + 2) : null };
  }
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function engineWith(areas: Area[]): Promise<{ engine: WritePath; bus: CapturingBus; store: FakeAreas }> {
  const store = new FakeAreas();
  store.byRealm.set('r', areas);
  const bus = new CapturingBus();
  const engine = writePath(store, bus);
  // The first change of the realm loads its areas.
  engine.objectsChanged('r', []);
  await settle();
  bus.published.length = 0;
  return { engine, bus, store };
}

describe('AreaIndex', () => {
  it('a move raises an exi for each area left, then an ent for each entered, each in id order (property, against every area tested)', () => {
    const coord = fc.double({ min: -3, max: 3, noNaN: true });
    const areaArb = fc.oneof(
      fc.record({ w: coord, s: coord, e: coord, n: coord }).map(({ w, s, e, n }) => rect(Math.min(w, e), Math.min(s, n), Math.max(w, e), Math.max(s, n))),
      fc.record({ cx: coord, cy: coord, r: fc.double({ min: 1, max: 300_000, noNaN: true }) }),
    );
    fc.assert(
      fc.property(fc.array(areaArb, { maxLength: 12 }), fc.option(fc.tuple(coord, coord)), fc.tuple(coord, coord), (shapes, from, to) => {
        // Ids whose code-unit order differs from their creation order.
        const areas = shapes.map((shape, i) => area(`a${(i * 7) % 13}-${i}`, shape));
        const index = AreaIndex.of(areas);
        const inside = (p: [number, number] | null): string[] =>
          p === null ? [] : areas.filter((a) => containsPoint(a.shape, p[0], p[1])).map((a) => a.id).sort();
        const was = inside(from);
        const is = inside(to);
        const expected = [
          ...was.filter((id) => !is.includes(id)).map((id) => `exi o ${id}`),
          ...is.filter((id) => !was.includes(id)).map((id) => `ent o ${id}`),
        ];
        const change = move('o', from === null ? undefined : loc(from[0], from[1], 1), loc(to[0], to[1], 2));
        const bus = new CapturingBus();
        bus.publish('r', crossingsOf(change, index));
        assert.deepEqual(bus.flat(), expected);
      }),
      { numRuns: 400 },
    );
  });

  it('finds areas by the exact test, not only by their boxes', () => {
    const index = AreaIndex.of([area('circle', { cx: 0, cy: 0, r: 1000 }), area('box', rect(0, 0, 1, 1))]);
    assert.deepEqual(index.containing(0, 0), ['box', 'circle']);
    // Inside the circle's box, outside the circle.
    assert.deepEqual(index.containing(-0.0085, -0.0085), []);
    assert.deepEqual(index.containing(0.5, 0.5), ['box']);
  });

  it('finds an area that crosses the antimeridian on both sides, once', () => {
    const index = AreaIndex.of([area('pacific', rect(170, -10, -170, 10))]);
    assert.deepEqual(index.containing(175, 0), ['pacific']);
    assert.deepEqual(index.containing(-175, 0), ['pacific']);
    assert.deepEqual(index.containing(180, 0), ['pacific']);
    assert.deepEqual(index.containing(0, 0), []);
  });

  it('put replaces a shape, remove drops it', () => {
    const index = new AreaIndex();
    index.put(area('a', rect(0, 0, 1, 1)));
    index.put(area('a', rect(10, 10, 11, 11)));
    assert.deepEqual(index.containing(0.5, 0.5), []);
    assert.deepEqual(index.containing(10.5, 10.5), ['a']);
    index.remove('a');
    assert.deepEqual(index.containing(10.5, 10.5), []);
    assert.equal(index.size, 0);
  });
});

describe('GeofenceEngine', () => {
  const A = area('A', rect(0, 0, 2, 2));
  const B = area('B', rect(1, 0, 3, 2));

  it('a new object with a location raises loc, then ent for each area holding it', async () => {
    const { engine, bus } = await engineWith([A, B]);
    engine.objectsChanged('r', [move('o', undefined, loc(1.5, 1))]);
    assert.deepEqual(bus.flat(), ['loc o', 'ent o A', 'ent o B']);
  });

  it('enter and exit', async () => {
    const { engine, bus } = await engineWith([A]);
    engine.objectsChanged('r', [move('o', loc(-1, 1, 1), loc(1, 1, 2))]);
    engine.objectsChanged('r', [move('o', loc(1, 1, 2), loc(5, 1, 3))]);
    assert.deepEqual(bus.flat(), ['loc o', 'ent o A', 'loc o', 'exi o A']);
    const enter = bus.published.flatMap((p) => p.events).find((e) => e.kind === 'entered');
    assert.deepEqual(enter, { kind: 'entered', realm: 'r', object: 'o', area: 'A', time: T(2) });
  });

  it('moving between overlapping areas: loc, then exits, then enters', async () => {
    const { engine, bus } = await engineWith([A, B, area('C', rect(2.5, 0, 4, 2))]);
    // From A only to the overlap of B and C.
    engine.objectsChanged('r', [move('o', loc(0.5, 1, 1), loc(2.7, 1, 2))]);
    assert.deepEqual(bus.flat(), ['loc o', 'exi o A', 'ent o B', 'ent o C']);
    bus.published.length = 0;
    // Within the overlap of A and B to B only: one exit, no enter.
    engine.objectsChanged('r', [move('p', loc(1.5, 1, 1), loc(2.2, 1, 2))]);
    assert.deepEqual(bus.flat(), ['loc p', 'exi p A']);
  });

  it('a move within an area raises loc only; a write that keeps the location raises nothing', async () => {
    const { engine, bus } = await engineWith([A]);
    engine.objectsChanged('r', [move('o', loc(1, 1, 1), loc(1.1, 1, 2))]);
    const same = loc(1.1, 1, 2);
    engine.objectsChanged('r', [move('o', same, same)]);
    // A new object without a location (label only) raises nothing.
    engine.objectsChanged('r', [move('q', undefined, null)]);
    assert.deepEqual(bus.flat(), ['loc o']);
  });

  it('an out-of-order older fix leaves the current location as it was: no event', async () => {
    const { engine, bus } = await engineWith([A]);
    // The store keeps the newer current location; the change record says so (old = new).
    const current = loc(5, 5, 10);
    engine.objectsChanged('r', [{ ...move('o', current, current), history: [loc(1, 1, 5)] }]);
    assert.deepEqual(bus.flat(), []);
  });

  it('a bulk write compares the old location with the final one, object by object in order', async () => {
    const { engine, bus } = await engineWith([A]);
    // One record per object: the intermediate fixes of "o" (in and out of A) raise nothing.
    engine.objectsChanged('r', [move('o', loc(5, 5, 1), loc(6, 6, 9)), move('p', loc(5, 5, 1), loc(1, 1, 9))]);
    assert.deepEqual(bus.flat(), ['loc o', 'loc p', 'ent p A']);
    // One publish of the write's change records, one of its crossings.
    assert.deepEqual(
      bus.published.map((p) => p.events.map((e) => e.kind)),
      [['object', 'object'], ['entered']],
    );
  });

  it('an area created around an object raises nothing until the object moves', async () => {
    const { engine, bus } = await engineWith([]);
    engine.objectsChanged('r', [move('o', undefined, loc(1, 1, 1))]);
    engine.areaChanged('r', { realm: 'r', id: 'A', old: null, new: A });
    assert.deepEqual(bus.flat(), ['loc o']);
    // Moving inside the new area: it was already inside by location, so no ent either.
    engine.objectsChanged('r', [move('o', loc(1, 1, 1), loc(1.2, 1, 2))]);
    engine.objectsChanged('r', [move('o', loc(1.2, 1, 2), loc(9, 9, 3))]);
    assert.deepEqual(bus.flat(), ['loc o', 'loc o', 'loc o', 'exi o A']);
  });

  it('a reshaped area is used from the next write on, and raises nothing itself', async () => {
    const { engine, bus } = await engineWith([A]);
    const moved = area('A', rect(10, 10, 12, 12));
    engine.areaChanged('r', { realm: 'r', id: 'A', old: A, new: moved });
    engine.objectsChanged('r', [move('o', loc(1, 1, 1), loc(11, 11, 2))]);
    assert.deepEqual(bus.flat(), ['loc o', 'ent o A']);
  });

  it('an area deleted raises del and no exit, then never matches again', async () => {
    const { engine, bus } = await engineWith([A]);
    engine.areaChanged('r', { realm: 'r', id: 'A', old: A, new: null });
    engine.objectsChanged('r', [move('o', loc(1, 1, 1), loc(5, 5, 2))]);
    engine.objectsChanged('r', [move('o', loc(5, 5, 2), loc(1, 1, 3))]);
    assert.deepEqual(bus.flat(), ['del area A', 'loc o', 'loc o']);
  });

  it('every object and area write publishes its change record, the very record the store returned, before its crossings', async () => {
    const { engine, bus } = await engineWith([A]);
    const moved = { ...move('o', loc(5, 5, 1), loc(1, 1, 2)), origin: { instruction: 'i1', depth: 1 } };
    const labelled = { ...move('q', undefined, null), new: { ...obj('q', null), label: 'Q' } };
    engine.objectsChanged('r', [moved, labelled]);
    assert.deepEqual(
      bus.published.map((p) => p.events.map((e) => e.kind)),
      [['object', 'object'], ['entered']],
    );
    const [first] = bus.published[0]?.events ?? [];
    // No copy: old, new, history, time and origin as the store and the service made them.
    assert.ok(first?.kind === 'object' && first.change === moved);
    bus.published.length = 0;
    const reshaped = area('A', rect(10, 10, 12, 12));
    const changes = [
      { realm: 'r', id: 'A', old: A, new: reshaped },
      { realm: 'r', id: 'B', old: null, new: B },
      { realm: 'r', id: 'B', old: B, new: null },
    ];
    for (const change of changes) engine.areaChanged('r', change);
    assert.deepEqual(
      bus.published.map(({ events }) => events),
      changes.map((change) => [{ kind: 'area', realm: 'r', change }]),
    );
    // An object deletion: its record, and no crossing (it left no area by moving).
    bus.published.length = 0;
    const deleted = move('o', loc(11, 11, 1), undefined);
    engine.objectsChanged('r', [deleted]);
    assert.deepEqual(bus.published, [{ realm: 'r', events: [{ kind: 'object', realm: 'r', change: deleted }] }]);
  });

  it('the engine itself publishes crossings only, one per area crossed', async () => {
    const store = new FakeAreas();
    store.byRealm.set('r', [A, B]);
    const bus = new CapturingBus();
    const engine = new GeofenceEngine(store, bus);
    engine.objectsChanged('r', [move('o', undefined, loc(1.5, 1, 1))]);
    await settle();
    engine.objectsChanged('r', [move('o', loc(1.5, 1, 1), loc(1.6, 1, 2)), move('p', undefined, null)]);
    engine.areaChanged('r', { realm: 'r', id: 'C', old: null, new: area('C', rect(0, 0, 9, 9)) });
    engine.objectsChanged('r', [move('o', loc(1.6, 1, 2), undefined)]);
    engine.objectsChanged('r', [move('o', loc(1.6, 1, 2), loc(5, 1, 3))]);
    assert.deepEqual(
      bus.published.map(({ events }) => events.map((e) => (e.kind === 'entered' || e.kind === 'exited' ? `${e.kind === 'entered' ? 'ent' : 'exi'} ${e.object} ${e.area}` : e.kind))),
      [['ent o A', 'ent o B'], ['exi o A', 'exi o B']],
    );
  });

  it('an object deleted raises del only', async () => {
    const { engine, bus } = await engineWith([A]);
    engine.objectsChanged('r', [move('o', loc(1, 1, 1), undefined)]);
    assert.deepEqual(bus.flat(), ['del object o']);
  });

  it('loads a realm once, over all pages, and keeps realms apart', async () => {
    const { engine, bus, store } = await engineWith([A, B, area('C', rect(0, 0, 9, 9)), area('D', rect(0, 0, 9, 9)), area('E', rect(0, 0, 9, 9))]);
    assert.equal(engine.indexedAreas('r'), 5);
    assert.equal(store.lists, 3);
    engine.objectsChanged('other', [move('o', undefined, loc(1, 1, 1), 'other')]);
    await settle();
    assert.equal(engine.indexedAreas('other'), 0);
    assert.deepEqual(bus.flat(), ['loc o']);
    assert.equal(bus.published[0]?.realm, 'other');
  });

  it('while a realm loads, its changes wait in order and meet the areas as they were when written', async () => {
    const store = new FakeAreas();
    store.byRealm.set('r', [A]);
    const bus = new CapturingBus();
    const engine = writePath(store, bus);
    store.hold();
    engine.objectsChanged('r', [move('o', loc(5, 5, 1), loc(1, 1, 2))]);
    // While loading: area A deleted (the list will no longer hold it), then B created.
    store.byRealm.set('r', [B]);
    engine.areaChanged('r', { realm: 'r', id: 'A', old: A, new: null });
    engine.areaChanged('r', { realm: 'r', id: 'B', old: null, new: B });
    engine.objectsChanged('r', [move('p', loc(5, 5, 1), loc(1.5, 1, 2))]);
    // The change records go at once; the crossings wait for the areas.
    assert.deepEqual(bus.flat(), ['loc o', 'del area A', 'loc p']);
    store.release();
    await settle();
    assert.deepEqual(bus.crossings(), ['ent o A', 'ent p B']);
    assert.equal(engine.indexedAreas('r'), 1);
  });

  it('a realm whose areas fail to load still raises loc, and retries on the next change', async () => {
    const bus = new CapturingBus();
    let fail = true;
    const errors: unknown[] = [];
    const engine = writePath(
      {
        list: () => (fail ? Promise.reject(new Error('store down')) : Promise.resolve({ items: [A], next: null })),
      },
      bus,
      (err) => errors.push(err),
    );
    engine.objectsChanged('r', [move('o', loc(5, 5, 1), loc(1, 1, 2))]);
    await settle();
    assert.deepEqual(bus.flat(), ['loc o']);
    assert.equal(errors.length, 1);
    fail = false;
    engine.objectsChanged('r', [move('o', loc(1, 1, 2), loc(5, 5, 3))]);
    await settle();
    engine.objectsChanged('r', [move('o', loc(5, 5, 3), loc(1, 1, 4))]);
    assert.deepEqual(bus.flat(), ['loc o', 'loc o', 'exi o A', 'loc o', 'ent o A']);
  });

  it('a deleted realm forgets its areas and tells the bus', async () => {
    const { engine, bus } = await engineWith([A]);
    engine.realmDeleted('r');
    assert.deepEqual(bus.deleted, ['r']);
    assert.equal(engine.indexedAreas('r'), null);
  });
});

describe('GeofenceEngine: told by control messages', () => {
  it('areas.changed drops a loaded index; the next change loads the areas again', async () => {
    const { engine, bus, store } = await engineWith([]);
    assert.equal(engine.indexedAreas('r'), 0);
    // Another process created an area: only the store and the control message know.
    store.byRealm.set('r', [area('A', rect(-1, -1, 1, 1))]);
    engine.objectsChanged('r', [move('x', undefined, loc(0, 0, 1))]);
    await settle();
    assert.deepEqual(bus.flat(), ['loc x'], 'not told yet: the held index has no area');
    bus.published.length = 0;
    engine.hear({ kind: 'areas.changed', realm: 'r' });
    assert.equal(engine.indexedAreas('r'), null);
    engine.objectsChanged('r', [move('y', undefined, loc(0, 0, 2))]);
    await settle();
    assert.deepEqual(bus.flat(), ['loc y', 'ent y A']);
    engine.hear({ kind: 'areas.changed', realm: 'other' });
    assert.equal(engine.indexedAreas('r'), 1, 'another realm’s message leaves this index');
  });

  it('a message during a load starts it over: the queued changes meet the areas read after it', async () => {
    const bus = new CapturingBus();
    const areas: Area[] = [];
    const loads: { resolve: () => void }[] = [];
    // Each list reads the areas when asked and answers when the test says.
    const store = {
      list: (): Promise<Page<Area>> => {
        const snapshot = [...areas];
        return new Promise((resolve) => loads.push({ resolve: () => resolve({ items: snapshot, next: null }) }));
      },
    };
    const engine = writePath(store, bus);
    engine.objectsChanged('r', [move('x', undefined, loc(0, 0, 1))]);
    assert.equal(loads.length, 1);
    areas.push(area('A', rect(-1, -1, 1, 1)));
    engine.hear({ kind: 'areas.changed', realm: 'r' });
    assert.equal(loads.length, 2, 'a second load began');
    loads[0]?.resolve();
    await settle();
    assert.deepEqual(bus.crossings(), [], 'the first load is dropped');
    loads[1]?.resolve();
    await settle();
    assert.deepEqual(bus.flat(), ['loc x', 'ent x A']);
    assert.equal(engine.indexedAreas('r'), 1);
  });
});
