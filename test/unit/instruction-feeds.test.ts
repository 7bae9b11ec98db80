/**
 * `ins` and `log` subscriptions (service/live/instruction-feeds.ts through LiveSubscriptions)
 * with the real in-process bus, InstructionService publishing on it, and fake connections:
 * the pushes' exact form, `exe`, one push per burst, `per` filtering, `sub upd`, realm
 * deletion, resync after a bus outage, and the release of everything held.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parsePer } from '../../internal/auth/rights.js';
import type { Principal } from '../../internal/auth/principal.js';
import type { InstructionLogEvent } from '../../internal/domain/events.js';
import type { Realm } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { InstructionService } from '../../internal/service/instructions.js';
import type { LogEntry } from '../../internal/service/live/instruction-feeds.js';
import { LiveSubscriptions, type RealmRef } from '../../internal/service/live/live-subscriptions.js';
import { FakeConnection, principal, sleep } from '../support/live-fixture.js';
import { MemoryInstructions } from '../support/memory-instructions.js';
import { createSubscription, updateSubscription } from '../../internal/transport/actions/subscription-options.js';

const realm: Realm = { id: 'fleet', tenant: 'default', name: 'fleet', label: null, data: {}, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: '2026-01-01T00:00:00.000Z' };
const ref: RealmRef = { key: 'fleet', name: 'fleet', tenant: 'default', label: null, data: {} };
const source = 'when object(type="scooter") then delete()';
const cycleMs = 10;
/** Long enough for the bus turn, the store read and one push cycle. */
const settle = (): Promise<void> => sleep(cycleMs * 5);

const unused = (): Promise<never> => Promise.reject(new Error('not used by instruction subscriptions'));

function withPer(per: unknown): Principal {
  const parsed = parsePer(per);
  if (!('rights' in parsed)) throw new Error(parsed.invalid);
  return { ...principal(), rights: parsed.rights };
}

function logEvent(id: string, msg: string, lvl: LogEntry['lvl'] = 'error'): InstructionLogEvent {
  return { kind: 'log', realm: 'fleet', entry: { id, lvl, tim: '2026-11-28T10:00:00.000Z', msg } };
}

describe('ins and log subscriptions', () => {
  let bus: LocalEventBus;
  let records: MemoryInstructions;
  let service: InstructionService;
  let live: LiveSubscriptions;
  let recent: LogEntry[];
  /** The realms whose log history is kept (held listen handles). */
  let listening: string[];

  beforeEach(() => {
    bus = new LocalEventBus((err) => {
      throw err;
    });
    records = new MemoryInstructions();
    service = new InstructionService(records, () => ({}), bus, () => Date.now(), { maxSourceChars: 10_000, maxPerRealm: 1000 });
    recent = [];
    listening = [];
    live = new LiveSubscriptions(
      {
        bus,
        objects: { list: unused, get: unused },
        areas: { list: unused },
        tasks: { list: unused },
        realms: { get: (key) => Promise.resolve(key === realm.id ? realm : null) },
        instructions: records,
        logHistory: {
          listen: (key) => {
            listening.push(key);
            return { unsubscribe: () => listening.splice(listening.indexOf(key), 1) };
          },
          recent: () => recent,
        },
      },
      { maxVertices: 1000, maxConditions: 100, cycleMs },
    );
  });
  afterEach(async () => {
    await bus.close();
  });

  it('ins without exe: nothing at first; then one `ful` push of the whole map per change, deletions included', async () => {
    const conn = new FakeConnection();
    await createSubscription(live, conn, 'sub-ins', ref, { typ: 'ins', sty: 'rea' });
    await settle();
    assert.deepEqual(conn.take(), [], 'no initial push without exe');

    await service.create(realm, 'a', { label: 'A', instruction: source, data: { some: 'Value' } });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'sub-ins', uty: 'ful', ins: { a: { id: 'a', lab: 'A', dat: { some: 'Value' } } } }]);

    await service.create(realm, 'b', { instruction: source, data: { letter: 'B' } });
    await service.update(realm, 'b', { data: { charge: 0.5 } });
    await settle();
    assert.deepEqual(conn.take(), [
      { typ: 'sub', id: 'sub-ins', uty: 'ful', ins: { a: { id: 'a', lab: 'A', dat: { some: 'Value' } }, b: { id: 'b', dat: { letter: 'B', charge: 0.5 } } } },
    ], 'two changes in one burst: one push with both');

    await service.delete(realm, 'b');
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'sub-ins', uty: 'ful', ins: { a: { id: 'a', lab: 'A', dat: { some: 'Value' } } } }]);
    await settle();
    assert.deepEqual(conn.take(), [], 'no push without a change');
  });

  it('ins with exe: the current map once after the reply (an empty realm: {}), as its own frame', async () => {
    const empty = new FakeConnection();
    await createSubscription(live, empty, 'e', ref, { typ: 'ins', sty: 'rea', exe: true });
    assert.deepEqual(empty.frames, [], 'never in the turn of the reply');
    await settle();
    assert.deepEqual(empty.take(), [{ typ: 'sub', id: 'e', uty: 'ful', ins: {} }]);

    await service.create(realm, 'a', { instruction: source });
    await settle();
    const conn = new FakeConnection();
    await createSubscription(live, conn, 'x', ref, { typ: 'ins', sty: 'rea', exe: true });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'x', uty: 'ful', ins: { a: { id: 'a', dat: {} } } }]);
  });

  it('a suspended instruction shows `sus` in the push; `sub upd` pushes the whole map again', async () => {
    await service.create(realm, 'a', { instruction: source });
    const conn = new FakeConnection();
    await createSubscription(live, conn, 's', ref, { typ: 'ins', sty: 'rea' });
    await records.update('fleet', 'a', { suspended: 'failed 10 times in a row' }, 'now');
    await updateSubscription(live, conn, 's', { typ: 'ins' });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 's', uty: 'ful', ins: { a: { id: 'a', dat: {}, sus: 'failed 10 times in a row' } } }]);
  });

  it('per: a subscriber sees only the instructions it may read, and hears nothing of the others', async () => {
    const conn = new FakeConnection(withPer({ fleet: { 'public/*': 'R' } }));
    await createSubscription(live, conn, 'p', ref, { typ: 'ins', exe: true });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'p', uty: 'ful', ins: {} }]);
    await service.create(realm, 'secret/1', { instruction: source });
    await settle();
    assert.deepEqual(conn.take(), [], 'a change it may not read is not pushed');
    await service.create(realm, 'public/1', { instruction: source });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'p', uty: 'ful', ins: { 'public/1': { id: 'public/1', dat: {} } } }]);
  });

  it('log: the events published on the bus, as an array per push (`ful`), filtered by per; exe starts with the recent ones', async () => {
    const all = new FakeConnection();
    const some = new FakeConnection(withPer({ fleet: { 'public/*': 'R' } }));
    recent = [{ id: 'public/1', lvl: 'warn', tim: '2026-11-28T09:00:00.000Z', msg: 'earlier' }, { id: 'secret/1', lvl: 'info', tim: '2026-11-28T09:00:01.000Z', msg: 'hidden' }];
    await createSubscription(live, all, 'l', ref, { typ: 'log', sty: 'rea' });
    assert.deepEqual(listening, ['fleet'], "the realm's log history is kept while it has log subscribers");
    await createSubscription(live, some, 'l', ref, { typ: 'log', sty: 'rea', exe: true });
    await settle();
    assert.deepEqual(all.take(), []);
    assert.deepEqual(some.take(), [{ typ: 'sub', id: 'l', uty: 'ful', log: [recent[0]] }]);

    bus.publish('fleet', [logEvent('public/1', 'sendToUrl failed: 503'), logEvent('secret/1', 'depth limit')]);
    bus.publish('fleet', [logEvent('public/1', 'second', 'warn')]);
    await settle();
    assert.deepEqual(all.take(), [
      {
        typ: 'sub',
        id: 'l',
        uty: 'ful',
        log: [logEvent('public/1', 'sendToUrl failed: 503').entry, logEvent('secret/1', 'depth limit').entry, logEvent('public/1', 'second', 'warn').entry],
      },
    ]);
    assert.deepEqual(some.take(), [{ typ: 'sub', id: 'l', uty: 'ful', log: [logEvent('public/1', 'sendToUrl failed: 503').entry, logEvent('public/1', 'second', 'warn').entry] }]);
    bus.publish('fleet', [logEvent('secret/1', 'only secret')]);
    await settle();
    assert.deepEqual(some.take(), [], 'nothing it may read: no push');
    assert.equal(all.take().length, 1);
    live.delete(all, 'l');
    assert.deepEqual(listening, ['fleet']);
    live.delete(some, 'l');
    assert.deepEqual(listening, [], 'released with the last log subscriber');
  });

  it('log subscribers do not hear instruction changes and ins subscribers do not hear log events', async () => {
    const ins = new FakeConnection();
    const log = new FakeConnection();
    await createSubscription(live, ins, 'i', ref, { typ: 'ins' });
    await createSubscription(live, log, 'l', ref, { typ: 'log' });
    bus.publish('fleet', [logEvent('a', 'x')]);
    await service.create(realm, 'a', { instruction: source });
    await settle();
    assert.deepEqual(ins.take().map((p) => Object.keys(p)), [['typ', 'id', 'uty', 'ins']]);
    assert.deepEqual(log.take().map((p) => Object.keys(p)), [['typ', 'id', 'uty', 'log']]);
  });

  it('sub del, closing the connection, and deleting the realm end them silently and release the bus', async () => {
    const a = new FakeConnection();
    const b = new FakeConnection();
    await createSubscription(live, a, 'i', ref, { typ: 'ins' });
    await createSubscription(live, a, 'l', ref, { typ: 'log' });
    await createSubscription(live, b, 'i', ref, { typ: 'ins' });
    assert.equal(live.held().realms, 1);
    live.delete(a, 'i');
    a.close();
    await service.create(realm, 'a', { instruction: source });
    bus.publish('fleet', [logEvent('a', 'x')]);
    await settle();
    assert.deepEqual(a.take(), []);
    assert.equal(b.take().length, 1);
    bus.publishRealmDeleted('fleet');
    await settle();
    assert.equal(live.count(), 0);
    assert.equal(live.held().realms, 0);
    await service.create(realm, 'b', { instruction: source });
    await settle();
    assert.deepEqual(b.take(), []);
  });

  it('resync: the map is read again and pushed only where it differs from what was sent', async () => {
    await service.create(realm, 'a', { instruction: source });
    const same = new FakeConnection();
    await createSubscription(live, same, 'i', ref, { typ: 'ins', exe: true });
    await settle();
    same.take();
    assert.equal(await live.resync(), 1);
    await settle();
    assert.deepEqual(same.take(), [], 'nothing changed: no push');
    // A change whose event was lost.
    await records.update('fleet', 'a', { label: 'changed meanwhile' }, 'now');
    await live.resync();
    await settle();
    assert.deepEqual(same.take(), [{ typ: 'sub', id: 'i', uty: 'ful', ins: { a: { id: 'a', lab: 'changed meanwhile', dat: {} } } }]);
    // The realm deleted during an outage: its subscriptions end silently at the resync, as the others do.
    const gone = new FakeConnection();
    const goneRef: RealmRef = { ...ref, key: 'gone', name: 'gone' };
    await createSubscription(live, gone, 'i', goneRef, { typ: 'ins' });
    await createSubscription(live, gone, 'l', goneRef, { typ: 'log' });
    assert.equal(live.count(), 3);
    await live.resync();
    await settle();
    assert.equal(live.count(), 1);
    assert.deepEqual(gone.take(), []);
  });

  it('without an instruction store, ins and log subscriptions are refused with 501 and nothing is held', async () => {
    const bare = new LiveSubscriptions({ bus, objects: { list: unused, get: unused }, areas: { list: unused }, tasks: { list: unused }, realms: { get: () => Promise.resolve(null) } }, { maxVertices: 1000, maxConditions: 100, cycleMs });
    const conn = new FakeConnection();
    for (const typ of ['ins', 'log']) await assert.rejects(createSubscription(bare, conn, 'x', ref, { typ }), { status: 501 });
    assert.equal(bare.count(), 0);
  });
});
