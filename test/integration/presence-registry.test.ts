/**
 * Presence (compat 6, decisions.md connectionStatus) with a real SQLite store, the real
 * in-process bus and pub/sub, and fake connections in place of sockets: which objects are
 * `con`, which `cst` events and `connectionStatusChanged` publications each transition makes.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/principal.js';
import type { ObjectChange, ObjectPatch } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { noChangeListener } from '../../internal/service/changes.js';
import { ObjectService } from '../../internal/service/objects.js';
import { coveringRanges, PresenceRegistry, type PresenceOptions } from '../../internal/service/presence-registry.js';
import { PubSub } from '../../internal/service/pubsub.js';
import { subscriptionEventsOf } from '../../internal/service/subscriptions.js';
import { compileGlob } from '../../internal/domain/id-glob.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { busTurn, FakeConnection, principalWith } from '../support/fake-connection.js';

const NOW = '2026-01-01T00:00:00.000Z';
const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

interface World {
  store: SqliteStore;
  bus: LocalEventBus;
  pubsub: PubSub;
  presence: PresenceRegistry;
  objects: ObjectService;
  /** `cst` events heard on the bus, as `realm id status`. */
  cst: string[];
  /** connectionStatusChanged deliveries to a `*` subscriber of realm fleet, as `id status`. */
  listener: FakeConnection;
  truncated: string[];
}

async function world(options: Partial<PresenceOptions> = {}): Promise<World> {
  const store = openSqliteStore(':memory:');
  const bus = new LocalEventBus((err) => assert.fail(String(err)));
  const pubsub = new PubSub(bus);
  const truncated: string[] = [];
  const presence = new PresenceRegistry({
    bus,
    objects: store.objects,
    resolveRealm: async (_principal: Principal, name: string) => ((await store.realms.get(name)) === null ? null : { key: name }),
    onError: (err) => assert.fail(String(err)),
    onTruncated: (realm, limit) => truncated.push(`${realm} ${limit}`),
    ...options,
  });
  const objects = new ObjectService(store, () => Date.parse(NOW), { maxBulk: 1000, maxPage: 10_000 }, noChangeListener, presence);
  for (const realm of ['fleet', 'other']) await store.realms.put(realm, SETTINGS, NOW);
  const cst: string[] = [];
  for (const realm of ['fleet', 'other']) {
    bus.subscribe(realm, (message) => {
      if (message.kind !== 'events') return;
      for (const event of message.events) if (event.kind === 'cst') cst.push(`${event.realm} ${event.object} ${event.status}`);
    });
  }
  const listener = new FakeConnection();
  pubsub.subscribe(listener, { key: 'fleet', name: 'fleet' }, { eve: 'connectionStatusChanged', idp: '*' });
  return { store, bus, pubsub, presence, objects, cst, listener, truncated };
}

async function put(w: World, realm: string, ...ids: string[]): Promise<void> {
  const patches: ObjectPatch[] = ids.map((id) => ({ id, location: { longitude: 1, latitude: 2, time: NOW } }));
  await w.store.objects.upsertMany(realm, patches, NOW);
}

/** Waits for the registry's transitions and the bus turn that delivers their events. */
async function settle(w: World): Promise<void> {
  await w.presence.idle();
  await busTurn();
}

/** The connectionStatusChanged deliveries the `*` listener got, as `id status`; checks their exact form. */
function changes(w: World): string[] {
  return w.listener.take().map((message) => {
    const m = message as { typ: string; act: string; rea: string; sid: string; dat: { eve: string; dat: { cst: string; id: string } } };
    assert.deepEqual(Object.keys(m), ['typ', 'act', 'rea', 'sid', 'dat']);
    assert.deepEqual([m.typ, m.act, m.rea, m.sid, m.dat.eve], ['rea', 'pub', 'fleet', '*', 'connectionStatusChanged']);
    assert.deepEqual(Object.keys(m.dat.dat), ['cst', 'id']);
    return `${m.dat.dat.id} ${m.dat.dat.cst}`;
  });
}

const provider = (claims: Record<string, string[]>, overrides: Partial<Principal> = {}): FakeConnection =>
  new FakeConnection(principalWith(claims, overrides));

describe('presence registry', () => {
  let w: World;
  beforeEach(async () => {
    w = await world();
  });
  afterEach(async () => {
    await w.presence.idle();
    await w.bus.close();
    await w.store.close();
  });

  it('every object is dis without a provider, located or not', async () => {
    await put(w, 'fleet', 'car/1', 'truck/1');
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'dis');
    assert.equal((await w.objects.get({ id: 'fleet' } as never, 'car/1')).connectionStatus, 'dis');
  });

  it('a dpv connection makes matching objects con (reads and events), and dis again after close', async () => {
    await put(w, 'fleet', 'car/1', 'car/2', 'truck/1', 'car');
    await put(w, 'other', 'car/1');
    const device = provider({ fleet: ['car/*'] });
    w.presence.connectionOpened(device);
    await settle(w);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'con');
    assert.equal(w.presence.statusOf('fleet', 'car/2'), 'con');
    assert.equal(w.presence.statusOf('fleet', 'car/never-written'), 'con');
    assert.equal(w.presence.statusOf('fleet', 'truck/1'), 'dis');
    assert.equal(w.presence.statusOf('fleet', 'car'), 'dis');
    assert.equal(w.presence.statusOf('other', 'car/1'), 'dis');
    const realm = { id: 'fleet' } as never;
    assert.equal((await w.objects.get(realm, 'car/1')).connectionStatus, 'con');
    const page = await w.objects.list(realm, {});
    assert.deepEqual(
      page.entries.map((e) => `${e.id} ${e.connectionStatus}`),
      ['car dis', 'car/1 con', 'car/2 con', 'truck/1 dis'],
    );
    assert.deepEqual(w.cst, ['fleet car/1 con', 'fleet car/2 con']);
    assert.deepEqual(changes(w), ['car/1 con', 'car/2 con']);
    assert.deepEqual(device.pushed, [], 'the provider itself subscribed to nothing');

    device.close();
    await settle(w);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'dis');
    assert.equal((await w.objects.get(realm, 'car/2')).connectionStatus, 'dis');
    assert.deepEqual(w.cst, ['fleet car/1 con', 'fleet car/2 con', 'fleet car/1 dis', 'fleet car/2 dis']);
    assert.deepEqual(changes(w), ['car/1 dis', 'car/2 dis']);
  });

  it('announces only real transitions when claims overlap', async () => {
    await put(w, 'fleet', 'car/1', 'car/2', 'bus/1');
    const all = provider({ fleet: ['car/*'] });
    const one = provider({ fleet: ['car/1', 'bus/*'] });
    w.presence.connectionOpened(all);
    await settle(w);
    assert.deepEqual(changes(w), ['car/1 con', 'car/2 con']);
    w.presence.connectionOpened(one);
    await settle(w);
    assert.deepEqual(changes(w), ['bus/1 con'], 'car/1 was con already');
    all.close();
    await settle(w);
    assert.deepEqual(changes(w), ['car/2 dis'], 'car/1 is still claimed');
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'con');
    one.close();
    await settle(w);
    assert.deepEqual(changes(w).sort(), ['bus/1 dis', 'car/1 dis']);
    assert.deepEqual(w.cst.slice(-2).sort(), ['fleet bus/1 dis', 'fleet car/1 dis']);
  });

  it('two connections with the same claim: the object stays con until both are gone', async () => {
    await put(w, 'fleet', 'car/1');
    const a = provider({ fleet: ['car/1'] });
    const b = provider({ fleet: ['car/1'] });
    w.presence.connectionOpened(a);
    w.presence.connectionOpened(b);
    await settle(w);
    assert.deepEqual(changes(w), ['car/1 con']);
    a.close();
    await settle(w);
    assert.deepEqual(changes(w), []);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'con');
    b.close();
    await settle(w);
    assert.deepEqual(changes(w), ['car/1 dis']);
  });

  it('creating or locating an object publishes nothing; it reads con when claimed', async () => {
    const device = provider({ fleet: ['car/*'] });
    w.presence.connectionOpened(device);
    await settle(w);
    assert.deepEqual(changes(w), []);
    await w.objects.upsert({ id: 'fleet' } as never, 'car/9', { location: { longitude: 1, latitude: 2 } });
    await w.objects.upsert({ id: 'fleet' } as never, 'truck/9', { location: { longitude: 1, latitude: 2 } });
    await settle(w);
    assert.deepEqual(changes(w), []);
    assert.deepEqual(w.cst, []);
    assert.equal((await w.objects.get({ id: 'fleet' } as never, 'car/9')).connectionStatus, 'con');
    assert.equal((await w.objects.get({ id: 'fleet' } as never, 'truck/9')).connectionStatus, 'dis');
  });

  it('ignores connections without claims, unknown realms, and realms a realm-bound principal is not bound to', async () => {
    await put(w, 'fleet', 'car/1');
    await put(w, 'other', 'car/1');
    w.presence.connectionOpened(new FakeConnection(principalWith(null)));
    w.presence.connectionOpened(provider({}));
    w.presence.connectionOpened(provider({ nowhere: ['*'], fleet: [] }));
    w.presence.connectionOpened(provider({ fleet: ['car/*'], other: ['car/*'] }, { realm: 'other' }));
    await settle(w);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'dis');
    assert.equal(w.presence.statusOf('other', 'car/1'), 'con');
    assert.deepEqual(w.cst, ['other car/1 con']);
  });

  it('a connection that closes before its claims are worked out leaves no trace', async () => {
    await put(w, 'fleet', 'car/1');
    const device = provider({ fleet: ['*'] });
    w.presence.connectionOpened(device);
    device.close();
    await settle(w);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'dis');
    assert.deepEqual(changes(w), []);
    assert.deepEqual(w.cst, []);
  });

  it('counts a connection opened twice once', async () => {
    await put(w, 'fleet', 'car/1');
    const device = provider({ fleet: ['car/1'] });
    w.presence.connectionOpened(device);
    w.presence.connectionOpened(device);
    await settle(w);
    device.close();
    await settle(w);
    assert.equal(w.presence.statusOf('fleet', 'car/1'), 'dis');
    assert.deepEqual(changes(w), ['car/1 con', 'car/1 dis']);
  });

  it('reads every page of a large realm, and only the id ranges of literal prefixes', async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `car/${String(i).padStart(4, '0')}`);
    await put(w, 'fleet', ...ids, 'bus/1', 'dog/1');
    let reads = 0;
    const counting = { list: (realm: string, query: Parameters<SqliteStore['objects']['list']>[1]) => (reads++, w.store.objects.list(realm, query)) };
    const presence = new PresenceRegistry({ bus: w.bus, objects: counting, resolveRealm: () => Promise.resolve({ key: 'fleet' }) });
    presence.connectionOpened(provider({ fleet: ['car/*', 'car/00*', 'dog/1'] }));
    await presence.idle();
    await busTurn();
    const announced = changes(w);
    assert.equal(announced.length, 2501);
    assert.deepEqual(announced.slice(0, 2), ['car/0000 con', 'car/0001 con']);
    assert.equal(announced.at(-1), 'dog/1 con');
    // car/ in three pages of 1000, dog/1 in one exact read: bus/1 was never read.
    assert.equal(reads, 4);
  });

  it('announces at most maxTransitionObjects objects per realm and says so; reads stay exact', async () => {
    const small = await world({ maxTransitionObjects: 2 });
    try {
      await put(small, 'fleet', 'a', 'b', 'c');
      small.presence.connectionOpened(provider({ fleet: ['*'] }));
      await settle(small);
      assert.deepEqual(changes(small), ['a con', 'b con']);
      assert.deepEqual(small.truncated, ['fleet 2']);
      assert.equal(small.presence.statusOf('fleet', 'c'), 'con');
    } finally {
      await small.presence.idle();
      await small.bus.close();
      await small.store.close();
    }
  });
});

describe('covering id ranges', () => {
  const ranges = (...patterns: string[]): string[] =>
    coveringRanges(patterns.map(compileGlob)).map(({ prefix, exact }) => `${prefix}${exact ? ' =' : ''}`);
  it('merges nested prefixes and reads literals exactly', () => {
    assert.deepEqual(ranges('car/*', 'car/1', 'car/1*'), ['car/']);
    assert.deepEqual(ranges('car/1', 'bus/2'), ['bus/2 =', 'car/1 =']);
    assert.deepEqual(ranges('car/1', 'car/1*'), ['car/1']);
    assert.deepEqual(ranges('car/1*', 'car/1'), ['car/1']);
    assert.deepEqual(ranges('car/1', 'car/12'), ['car/1']);
    assert.deepEqual(ranges('x', '*y'), ['']);
  });
});

describe('legacy evt loc events (locus extension)', () => {
  it('carry the presence status, not con for every fix', async () => {
    const w = await world();
    try {
      const fix = { longitude: 1, latitude: 2, time: NOW };
      const change = (id: string): ObjectChange => ({
        realm: 'fleet',
        id,
        old: null,
        new: { id, label: null, location: fix, data: {}, seen: NOW },
        history: [fix],
        time: NOW,
      });
      const statusIn = (id: string): unknown => {
        const [event] = subscriptionEventsOf([{ kind: 'object', realm: 'fleet', change: change(id) }], w.presence);
        assert.equal(event?.kind, 'location');
        return event.kind === 'location' ? event.connectionStatus : null;
      };
      assert.equal(statusIn('car/1'), 'dis');
      w.presence.connectionOpened(provider({ fleet: ['car/*'] }));
      await settle(w);
      assert.equal(statusIn('car/1'), 'con');
      assert.equal(statusIn('truck/1'), 'dis');
    } finally {
      await w.presence.idle();
      await w.bus.close();
      await w.store.close();
    }
  });
});
