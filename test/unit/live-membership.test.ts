/**
 * The membership logic of Hivekit subscriptions (service/live) with a store whose answers the
 * test releases by hand: events that arrive while a subscription's set is being loaded are
 * replayed on it, a target that moves during a load reloads once more, and the per-cycle
 * diff rules (entered → cre, changed → upd, left → del; nothing for no change).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Location, TrackedObject } from '../../internal/domain/types.js';
import { containsPoint } from '../../internal/geo/contains.js';
import { matchesFilter } from '../../internal/domain/filter.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { LiveSubscriptions } from '../../internal/service/live/live-subscriptions.js';
import type { ObjectListQuery, Page } from '../../internal/store/port.js';
import { FakeConnection, sleep } from '../support/live-fixture.js';
import { createSubscription, updateSubscription } from '../../internal/transport/actions/subscription-options.js';

const time = '2026-01-01T00:00:00.000Z';
const at = (longitude: number, latitude: number): Location => ({ longitude, latitude, time });
const obj = (id: string, location: Location | null, data: Record<string, string | number> = {}): TrackedObject => ({ id, label: null, location, data, seen: null });

/** A store of objects in memory whose list answers wait until `release()`. */
class GatedStore {
  readonly objects = new Map<string, TrackedObject>();
  private gates: (() => void)[] = [];
  gated = false;
  lists = 0;
  async list(_realm: string, query: ObjectListQuery): Promise<Page<TrackedObject>> {
    this.lists++;
    // The answer is what the store holds when the query runs (before the gate opens).
    const items = [...this.objects.values()].filter(
      (o) => (query.shape === undefined || (o.location !== null && containsPoint(query.shape, o.location.longitude, o.location.latitude))) && matchesFilter(o, query.filter ?? []),
    );
    if (this.gated) await new Promise<void>((resolve) => this.gates.push(resolve));
    return { items, next: null };
  }
  get(_realm: string, id: string): Promise<TrackedObject | null> {
    return Promise.resolve(this.objects.get(id) ?? null);
  }
  release(): void {
    for (const gate of this.gates.splice(0)) gate();
  }
  get waiting(): number {
    return this.gates.length;
  }
}

function setup(): { store: GatedStore; bus: LocalEventBus; live: LiveSubscriptions; write: (o: TrackedObject) => void; remove: (id: string) => void } {
  const store = new GatedStore();
  const bus = new LocalEventBus((err) => {
    throw err;
  });
  const live = new LiveSubscriptions(
    { bus, objects: store, areas: { list: () => Promise.resolve({ items: [], next: null }) }, tasks: { list: () => Promise.resolve([]) }, realms: { get: () => Promise.resolve(null) } },
    { maxVertices: 100, maxConditions: 10, cycleMs: 5 },
  );
  return {
    store,
    bus,
    live,
    write: (o) => {
      const old = store.objects.get(o.id) ?? null;
      store.objects.set(o.id, o);
      bus.publish('r', [{ kind: 'object', realm: 'r', change: { realm: 'r', id: o.id, old, new: o, history: [], time } }]);
    },
    remove: (id) => {
      const old = store.objects.get(id) ?? null;
      store.objects.delete(id);
      bus.publish('r', [{ kind: 'object', realm: 'r', change: { realm: 'r', id, old, new: null, history: [], time } }]);
    },
  };
}

async function until(ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(2);
  }
}

const ref = { key: 'r', name: 'r', tenant: 'default', label: null, data: {} };
type Push = { id: string; uty: string; obj?: Record<string, Record<string, unknown>> };
const summary = (pushes: Record<string, unknown>[]): [string, string, string[], string[], string[]][] =>
  (pushes as Push[]).map((p) => [p.id, p.uty, Object.keys(p.obj?.cre ?? {}).sort(), Object.keys(p.obj?.upd ?? {}).sort(), Object.keys(p.obj?.del ?? {}).sort()]);

describe('live membership', () => {
  it('replays the events that arrive while the initial set loads', async () => {
    const { store, live, write, remove } = setup();
    store.objects.set('a', obj('a', at(1, 1)));
    store.objects.set('b', obj('b', at(1, 1)));
    store.gated = true;
    const conn = new FakeConnection();
    const created = createSubscription(live, conn, 's', ref, { typ: 'obj', sty: 'rec', sha: { x1: 0, y1: 0, x2: 2, y2: 2 }, exe: true });
    await sleep(5);
    assert.equal(store.waiting, 1);
    // While loading: b leaves, c enters, a is deleted; the loaded set still holds a and b.
    write(obj('b', at(5, 5)));
    write(obj('c', at(1.5, 1.5)));
    remove('a');
    await sleep(5);
    store.release();
    await created;
    await sleep(30);
    // exe: one full push of the set after the replay.
    assert.deepEqual(summary(conn.take()), [['s', 'ful', ['c'], [], []]]);
  });

  it('a target that moves during its reload reloads once more and ends on its latest location', async () => {
    const { store, live, write } = setup();
    write(obj('t', at(10, 10)));
    write(obj('near-first', at(10.001, 10)));
    write(obj('near-last', at(20.001, 10)));
    const conn = new FakeConnection();
    await createSubscription(live, conn, 'tar', ref, { typ: 'obj', sty: 'tar', sta: { id: 't', r: 500 }, atr: ['$id!="t"'] });
    await sleep(20);
    assert.deepEqual(conn.take(), []);
    store.gated = true;
    const before = store.lists;
    write(obj('t', at(15, 10)));
    await sleep(5);
    write(obj('t', at(20, 10)));
    await sleep(5);
    store.release();
    // The first reload's diff is pushed while the second waits at the gate.
    await until(() => conn.frames.length === 1 && store.waiting === 1);
    store.release();
    await until(() => conn.frames.length === 2);
    await sleep(20);
    assert.equal(store.lists - before, 2, 'one reload for the first move, one more for the moves during it');
    // The first reload (circle at lon 15) empties the set; the second (lon 20) finds near-last.
    assert.deepEqual(summary(conn.take()), [
      ['tar', 'dta', [], [], ['near-first']],
      ['tar', 'dta', ['near-last'], [], []],
    ]);
  });

  it('an update during the initial load wins: one full push of the new scope, indexed once', async () => {
    const { store, live, write } = setup();
    store.objects.set('west', obj('west', at(1, 1)));
    store.objects.set('east', obj('east', at(50, 1)));
    store.gated = true;
    const conn = new FakeConnection();
    const created = createSubscription(live, conn, 's', ref, { typ: 'obj', sty: 'rec', sha: { x1: 0, y1: 0, x2: 2, y2: 2 }, exe: true });
    await until(() => store.waiting === 1);
    const updated = updateSubscription(live, conn, 's', { typ: 'obj', sty: 'cir', sha: { cx: 50, cy: 1, r: 1000 } });
    await until(() => store.waiting === 2);
    store.release();
    await Promise.all([created, updated]);
    await sleep(30);
    assert.deepEqual(summary(conn.take()), [['s', 'ful', ['east'], [], []]]);
    store.gated = false;
    write(obj('east2', at(50.001, 1)));
    write(obj('west2', at(1.5, 1)));
    await sleep(30);
    assert.deepEqual(summary(conn.take()), [['s', 'dta', ['east2'], [], []]]);
    // Another subscription keeps the realm's index alive; after the delete, nothing of "s" is left in it.
    const other = new FakeConnection();
    await createSubscription(live, other, 'keep', ref, { typ: 'obj', sty: 'rec', sha: { x1: 60, y1: 0, x2: 61, y2: 1 } });
    live.delete(conn, 's');
    write(obj('east3', at(50.002, 1)));
    await sleep(30);
    assert.deepEqual(conn.take(), []);
    live.delete(other, 'keep');
    assert.deepEqual(live.held(), { realms: 0, tenants: 0, connections: 2 });
  });

  it('pushes nothing for a write that changes nothing, upd for one that does', async () => {
    const { live, write } = setup();
    const conn = new FakeConnection();
    write(obj('x', at(1, 1), { n: 1 }));
    await sleep(5);
    await createSubscription(live, conn, 'all', ref, { typ: 'obj' });
    write(obj('x', at(1, 1), { n: 1 }));
    await sleep(20);
    assert.deepEqual(conn.take(), []);
    write(obj('x', at(1, 1), { n: 2 }));
    await sleep(20);
    assert.deepEqual(summary(conn.take()), [['all', 'dta', [], ['x'], []]]);
    // A whole-realm subscription holds objects without a location too.
    write(obj('nowhere', null));
    await sleep(20);
    const [push] = conn.take() as Push[];
    assert.deepEqual(push?.obj?.cre?.nowhere, { id: 'nowhere', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, cst: 'dis' });
  });

  it('a change of the task ids alone is an upd carrying tds; the same ids again push nothing; cleared: no tds', async () => {
    const { live, write } = setup();
    const conn = new FakeConnection();
    write(obj('x', at(1, 1)));
    await sleep(5);
    await createSubscription(live, conn, 'all', ref, { typ: 'obj' });
    write({ ...obj('x', at(1, 1)), tasks: ['t1'] });
    await sleep(20);
    const updated = (pushes: Record<string, unknown>[]): Record<string, unknown> | undefined => (pushes as Push[])[0]?.obj?.upd?.x as Record<string, unknown> | undefined;
    assert.deepEqual(updated(conn.take())?.tds, ['t1']);
    write({ ...obj('x', at(1, 1)), tasks: ['t1'] });
    await sleep(20);
    assert.deepEqual(conn.take(), []);
    write(obj('x', at(1, 1)));
    await sleep(20);
    const cleared = updated(conn.take());
    assert.ok(cleared !== undefined, 'clearing the task ids is an update');
    assert.equal('tds' in cleared, false);
  });

  it('a nested value never equals a condition: the member leaves on `=`, joins on `!=`, and a scalar brings it back', async () => {
    const { live, write } = setup();
    const equal = new FakeConnection();
    const differ = new FakeConnection();
    // A whole-realm `=` condition: the subscription is indexed by the value it wants.
    await createSubscription(live, equal, 'eq', ref, { typ: 'obj', sty: 'rea', atr: ['type="car"'] });
    await createSubscription(live, differ, 'ne', ref, { typ: 'obj', sty: 'rea', atr: ['type!="car"'] });
    await sleep(10);
    const nested = (value: unknown): TrackedObject => ({ id: 'a', label: null, location: null, data: { type: value as never }, seen: null });
    write(nested('car'));
    await sleep(20);
    write(nested(['car']));
    await sleep(20);
    write(nested({ car: true }));
    await sleep(20);
    write(nested('car'));
    await sleep(20);
    assert.deepEqual(summary(equal.take()), [
      ['eq', 'dta', ['a'], [], []],
      ['eq', 'dta', [], [], ['a']],
      ['eq', 'dta', ['a'], [], []],
    ]);
    assert.deepEqual(summary(differ.take()), [
      ['ne', 'dta', ['a'], [], []],
      ['ne', 'dta', [], ['a'], []],
      ['ne', 'dta', [], [], ['a']],
    ]);
  });

  it('a rewrite with equal nested values (new objects, same JSON) pushes nothing; a changed or reordered one is an upd', async () => {
    const { live, write } = setup();
    const conn = new FakeConnection();
    await createSubscription(live, conn, 's', ref, { typ: 'obj', sty: 'rea' });
    await sleep(10);
    const icon = (json: string): TrackedObject => ({ id: 'a', label: null, location: null, data: JSON.parse(json) as TrackedObject['data'], seen: null });
    write(icon('{"icon":{"c":"red","n":[1,{"x":null}]}}'));
    await sleep(20);
    write(icon('{"icon":{"c":"red","n":[1,{"x":null}]}}'));
    await sleep(20);
    write(icon('{"icon":{"n":[1,{"x":null}],"c":"red"}}'));
    await sleep(20);
    write(icon('{"icon":{"n":[1,{"x":0}],"c":"red"}}'));
    await sleep(20);
    assert.deepEqual(summary(conn.take()), [
      ['s', 'dta', ['a'], [], []],
      ['s', 'dta', [], ['a'], []],
      ['s', 'dta', [], ['a'], []],
    ]);
  });
});
