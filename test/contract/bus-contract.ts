/**
 * The event bus contract (internal/events/port.ts): what every adapter must do, run by
 * bus.test.ts against each of them. A factory gives two buses that stand for two processes
 * of one deployment (for the local bus: the same bus twice, one process).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ControlMessage, EventBus, LocusEvent, RealmChangedEvent, RealmMessage } from '../../internal/events/port.js';

export interface BusPair {
  /** Publishes. */
  a: EventBus;
  /** Receives (another process, or `a` itself for a one-process bus). */
  b: EventBus;
  /** Resolves once what was subscribed and published so far has reached the other side's server (NATS: flush). */
  settle: () => Promise<void>;
  close: () => Promise<void>;
}

export interface BusFactory {
  name: string;
  pair(): Promise<BusPair>;
}

/** Waits until `check` holds (polling), or fails with `what`. */
export async function eventually(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Collects what a realm subscription receives, events flattened in arrival order. */
export function collect(bus: EventBus, realm: string): { events: LocusEvent[]; deleted: number; messages: RealmMessage[]; stop(): void } {
  const out = { events: [] as LocusEvent[], deleted: 0, messages: [] as RealmMessage[], stop: () => undefined as void };
  const sub = bus.subscribe(realm, (message) => {
    out.messages.push(message);
    if (message.kind === 'events') out.events.push(...message.events);
    else out.deleted++;
  });
  out.stop = () => sub.unsubscribe();
  return out;
}

/**
 * A realm event numbered `n` (a pub/sub publication: its shape is the most stable of the
 * event kinds; what the bus carries is opaque JSON to it).
 */
export const loc = (realm: string, id: string, n: number): LocusEvent => ({ kind: 'pub', realm, eve: 'moved', idp: id, dat: { n } });

/** The number `loc` gave an event, or null for another event. */
export const numberOf = (event: LocusEvent): number | null => (event.kind === 'pub' ? (event.dat as { n: number }).n : null);

const ent = (realm: string, id: string, area: string): LocusEvent => ({ kind: 'entered', realm, object: id, area, time: '2024-01-01T00:00:00.000Z' });
const cst = (realm: string, id: string): LocusEvent => ({ kind: 'cst', realm, object: id, status: 'con' });
const realmChanged = (tenant: string, name: string): RealmChangedEvent => ({ kind: 'rea', act: 'cre', tenant, realm: `${tenant}/${name}`, name, record: { label: null, data: {} } });

const T = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/**
 * Change records as stores make them, with every optional part present somewhere: a create
 * with a full fix, nested data and task ids; a move with its history and an instruction's
 * origin; a delete; an area create, reshape and delete.
 */
export function changeRecords(realm: string): LocusEvent[] {
  const fix = { longitude: 13.4, latitude: 52.5, altitude: 34.5, speed: 3, heading: 270, accuracy: 4.5, altitudeAccuracy: 2, time: T(1) };
  const created = { id: 'van/1', label: 'Vän ✓', location: fix, data: { load: { pallets: [1, 2, { empty: null }] }, ok: true, n: -0.5 }, seen: T(2), tasks: ['t1', 't2'] };
  const moved = { ...created, label: null, location: { longitude: 13.5, latitude: 52.6, time: T(3) }, seen: T(4) };
  const depot = { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 250 }, data: { gates: 2 } };
  const reshaped = { ...depot, label: null, shape: { points: [[0, 0], [1, 0], [1, 1]] as [number, number][] }, data: {} };
  return [
    { kind: 'object', realm, change: { realm, id: 'van/1', old: null, new: created, history: [fix], time: T(2) } },
    {
      kind: 'object',
      realm,
      change: { realm, id: 'van/1', old: created, new: moved, history: [{ longitude: 13.45, latitude: 52.55, time: T(2) }, moved.location], time: T(4), origin: { instruction: 'ins-1', depth: 2 } },
    },
    { kind: 'object', realm, change: { realm, id: 'van/1', old: moved, new: null, history: [], time: T(5) } },
    { kind: 'area', realm, change: { realm, id: 'depot', old: null, new: depot } },
    { kind: 'area', realm, change: { realm, id: 'depot', old: depot, new: reshaped, origin: { instruction: 'ins-2', depth: 1 } } },
    { kind: 'area', realm, change: { realm, id: 'depot', old: reshaped, new: null } },
  ];
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function busContract(factory: BusFactory): void {
  describe(`event bus contract: ${factory.name}`, () => {
    let pair: BusPair;
    before(async () => {
      pair = await factory.pair();
    });
    after(async () => {
      await pair.close();
    });

    it('delivers a realm\'s events to its subscribers, in publish order, and not to other realms', async () => {
      const { a, b } = pair;
      const here = collect(b, 'r1');
      const other = collect(b, 'r2');
      const own = collect(a, 'r1');
      await pair.settle();
      const batch = [loc('r1', 'x', 1), loc('r1', 'y', 2), ent('r1', 'x', 'A'), cst('r1', 'x'), loc('r1', 'x', 3)];
      a.publish('r1', batch);
      a.publish('r1', [loc('r1', 'z', 4)]);
      a.publish('r1', []);
      await eventually(() => here.events.length === 6 && own.events.length === 6, 'six events on both sides');
      const expected = [...batch, loc('r1', 'z', 4)];
      assert.deepEqual(here.events, expected);
      assert.deepEqual(own.events, expected);
      await pause(50);
      assert.deepEqual(other.events, []);
      here.stop();
      other.stop();
      own.stop();
    });

    it('carries change records whole: an object\'s old, new, history, time and origin, an area\'s old and new', async () => {
      const { a, b } = pair;
      const here = collect(b, 'r-changes');
      await pair.settle();
      const events = changeRecords('r-changes');
      a.publish('r-changes', events);
      await eventually(() => here.events.length === events.length, 'the change records');
      // Compared with a copy made before publishing: a bus may not alter what it carries.
      assert.deepEqual(here.events, structuredClone(changeRecords('r-changes')));
      here.stop();
    });

    it('delivers a publish that joins an earlier one still queued in that one\'s message on the publishing process, in order everywhere', async () => {
      const { a, b } = pair;
      const own = collect(a, 'r-join');
      const here = collect(b, 'r-join');
      await pair.settle();
      const key = {};
      const records = [loc('r-join', 'x', 1), loc('r-join', 'y', 2)];
      a.publish('r-join', records, { as: key });
      a.publish('r-join', [loc('r-join', 'z', 3)]);
      a.publish('r-join', [ent('r-join', 'x', 'A')], { join: key });
      await eventually(() => own.events.length === 4 && here.events.length === 4, 'four events on both sides');
      const expected = [...records, ent('r-join', 'x', 'A'), loc('r-join', 'z', 3)];
      assert.deepEqual(own.messages, [
        { kind: 'events', events: expected.slice(0, 3) },
        { kind: 'events', events: expected.slice(3) },
      ]);
      assert.deepEqual(records.length, 2, 'the publisher\'s array is left as it was');
      // Another process gets every event once, each key's events in order.
      assert.deepEqual(
        here.events.filter((e) => e.kind !== 'pub' || e.idp === 'x'),
        [records[0], ent('r-join', 'x', 'A')],
      );
      // Once delivered, a publish cannot be joined: the next goes on its own.
      a.publish('r-join', [ent('r-join', 'y', 'A')], { join: key });
      await eventually(() => own.events.length === 5, 'the late event');
      assert.equal(own.messages.length, 3);
      own.stop();
      here.stop();
    });

    it('never delivers during publish: the writer goes on first', async () => {
      const { a } = pair;
      const got = collect(a, 'r-sync');
      await pair.settle();
      a.publish('r-sync', [loc('r-sync', 'x', 1)]);
      assert.equal(got.events.length, 0);
      await eventually(() => got.events.length === 1, 'the event on the next turn');
      got.stop();
    });

    it('keeps realms whose ids hold subject characters apart (. * > space %)', async () => {
      const { a, b } = pair;
      const names = ['a.b', 'a', 'a.*', 'a >', '%61', 'tenant', 'ctl'];
      const got = names.map((name) => collect(b, name));
      await pair.settle();
      for (const [i, name] of names.entries()) a.publish(name, [loc(name, `o${i}`, i)]);
      await eventually(() => got.every((g) => g.events.length >= 1), 'one event per realm');
      await pause(50);
      for (const [i, g] of got.entries()) assert.deepEqual(g.events, [loc(names[i] as string, `o${i}`, i)], names[i]);
      for (const g of got) g.stop();
    });

    it('tells subscribers that a realm was deleted', async () => {
      const { a, b } = pair;
      const got = collect(b, 'r-del');
      await pair.settle();
      a.publish('r-del', [loc('r-del', 'x', 1)]);
      a.publishRealmDeleted('r-del');
      await eventually(() => got.deleted === 1, 'the deletion');
      assert.deepEqual(
        got.messages.map((m) => m.kind),
        ['events', 'realm_deleted'],
      );
      got.stop();
    });

    it('delivers a tenant\'s realm changes to that tenant\'s subscribers only', async () => {
      const { a, b } = pair;
      const t1: RealmChangedEvent[] = [];
      const t2: RealmChangedEvent[] = [];
      const s1 = b.subscribeTenant('t1', (e) => t1.push(e));
      const s2 = b.subscribeTenant('t.2', (e) => t2.push(e));
      await pair.settle();
      a.publishTenant('t1', realmChanged('t1', 'one'));
      a.publishTenant('t1', realmChanged('t1', 'two'));
      await eventually(() => t1.length === 2, 'two realm changes');
      assert.deepEqual(t1, [realmChanged('t1', 'one'), realmChanged('t1', 'two')]);
      await pause(50);
      assert.deepEqual(t2, []);
      s1.unsubscribe();
      s2.unsubscribe();
    });

    it('delivers control messages to every process, the publisher\'s included, in order', async () => {
      const { a, b } = pair;
      const onA: ControlMessage[] = [];
      const onB: ControlMessage[] = [];
      const sa = a.subscribeControl((m) => onA.push(m));
      const sb = b.subscribeControl((m) => onB.push(m));
      await pair.settle();
      const sent: ControlMessage[] = [
        { kind: 'realm.changed', realm: 'r.1' },
        { kind: 'token.revoked', realm: 'r.1', hash: null },
        { kind: 'keys.changed', tenant: 't' },
        { kind: 'areas.changed', realm: 'r.1' },
      ];
      for (const m of sent) a.publishControl(m);
      await eventually(() => onA.length >= 4 && onB.length >= 4, 'four control messages on both sides');
      await pause(50);
      assert.deepEqual(onA, sent);
      assert.deepEqual(onB, a === b ? onA : sent);
      sa.unsubscribe();
      sb.unsubscribe();
    });

    it('stops delivering after unsubscribe (the other handlers still get theirs); unsubscribing twice is harmless', async () => {
      const { a, b } = pair;
      const first = collect(b, 'r-un');
      const second = collect(b, 'r-un');
      await pair.settle();
      first.stop();
      first.stop();
      a.publish('r-un', [loc('r-un', 'x', 1)]);
      await eventually(() => second.events.length === 1, 'the event for the remaining handler');
      await pause(50);
      assert.equal(first.events.length, 0);
      second.stop();
      await pair.settle();
      a.publish('r-un', [loc('r-un', 'x', 2)]);
      await pause(50);
      assert.equal(second.events.length, 1);
    });

    it('a handler that throws does not keep the message from the others', async () => {
      const { a, b } = pair;
      const bad = b.subscribe('r-throw', () => {
        throw new Error('handler failure (expected by the test)');
      });
      const good = collect(b, 'r-throw');
      await pair.settle();
      a.publish('r-throw', [loc('r-throw', 'x', 1)]);
      await eventually(() => good.events.length === 1, 'the event for the good handler');
      bad.unsubscribe();
      good.stop();
    });

    it('publishLocal reaches only this process\'s subscribers', async () => {
      const { a, b } = pair;
      const own = collect(a, 'r-local');
      const other = collect(b, 'r-local');
      await pair.settle();
      a.publishLocal('r-local', [loc('r-local', 'x', 1)]);
      await eventually(() => own.events.length === 1, 'the local event');
      await pause(50);
      assert.equal(other.events.length, a === b ? 1 : 0);
      own.stop();
      other.stop();
    });

    it('reports itself healthy while connected', () => {
      assert.equal(pair.a.health().ok, true);
      assert.equal(typeof pair.a.health().detail, 'string');
    });
  });

  describe(`event bus contract: ${factory.name}: close`, () => {
    it('close delivers what was published before it', async () => {
      const pair = await factory.pair();
      try {
        const got = collect(pair.b, 'r-close');
        const own = collect(pair.a, 'r-close');
        await pair.settle();
        pair.a.publish('r-close', [loc('r-close', 'x', 1), loc('r-close', 'x', 2)]);
        await pair.a.close();
        assert.equal(own.events.length, 2);
        await eventually(() => got.events.length === 2, 'both events after close');
      } finally {
        await pair.close();
      }
    });
  });
}
