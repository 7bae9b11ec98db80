/**
 * Level-based repair of Hivekit subscriptions (LiveSubscriptions.resync): writes whose bus
 * messages were lost (made here by services whose change listener publishes nothing, as
 * another process's writes during a bus outage) reach the subscribers once the bus says it
 * may have lost messages, as the differences from what each client holds.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { AreaService } from '../../internal/service/areas.js';
import { noChangeListener } from '../../internal/service/changes.js';
import { LiveSubscriptions } from '../../internal/service/live/live-subscriptions.js';
import { ObjectService } from '../../internal/service/objects.js';
import { FakeConnection, liveFixture, sleep, type LiveFixture } from '../support/live-fixture.js';
import { createSubscription } from '../../internal/transport/actions/subscription-options.js';

type Push = { typ: string; id: string; uty: string; obj?: Record<string, Record<string, { loc?: { lon: number }; dat?: Record<string, unknown> }>>; are?: Record<string, unknown>; rea?: unknown };

const settle = (): Promise<void> => sleep(40);
const keys = (o: object | undefined): string[] => Object.keys(o ?? {}).sort();

describe('live subscriptions: resync after lost bus messages', () => {
  let f: LiveFixture;
  /** Writes whose bus messages are lost. */
  let lostObjects: ObjectService;
  let lostAreas: AreaService;
  let conn: FakeConnection;

  before(async () => {
    f = await liveFixture();
    lostObjects = new ObjectService(f.store, Date.now, { maxBulk: 1000, maxPage: 1000, maxFilterConditions: 10, maxVertices: 100, maxFutureSkewS: 300 }, noChangeListener);
    lostAreas = new AreaService(f.store, { maxPage: 1000, maxVertices: 100 }, noChangeListener);
  });
  after(() => f.close());
  beforeEach(async () => {
    conn = new FakeConnection();
    for (const id of ['a', 'b', 'c', 'd', 'far', 'target']) await f.objects.delete(f.realm, id).catch(() => undefined);
    for (const id of ['zone', 'other']) await f.areas.delete(f.realm, id).catch(() => undefined);
    await settle();
  });
  afterEach(() => conn.close());

  const at = (lon: number, lat: number, data?: Record<string, number | string>): object => ({ location: { longitude: lon, latitude: lat }, ...(data === undefined ? {} : { data }) });

  it('pushes what changed while messages were lost as cre, upd and del (dta), and nothing when nothing did', async () => {
    await f.objects.upsert(f.realm, 'a', at(1, 1, { n: 1 }));
    await f.objects.upsert(f.realm, 'b', at(1, 1.001));
    await f.objects.upsert(f.realm, 'c', at(1, 1.002));
    await createSubscription(f.live, conn, 'all', f.ref, { typ: 'obj', sty: 'rea' });
    await createSubscription(f.live, conn, 'near', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: 1, cy: 1, r: 1000 } });
    await settle();
    assert.deepEqual(conn.take(), []);

    await lostObjects.upsert(f.realm, 'a', at(1, 1, { n: 2 }));
    await lostObjects.delete(f.realm, 'b');
    await lostObjects.upsert(f.realm, 'c', at(5, 5));
    await lostObjects.upsert(f.realm, 'd', at(1, 1.003));
    await settle();
    assert.deepEqual(conn.take(), [], 'lost messages push nothing by themselves');

    assert.equal(await f.live.resync(), 2);
    await settle();
    const pushes = conn.take() as Push[];
    const all = pushes.find((p) => p.id === 'all');
    const near = pushes.find((p) => p.id === 'near');
    assert.equal(pushes.length, 2);
    assert.equal(all?.uty, 'dta');
    assert.deepEqual([keys(all?.obj?.cre), keys(all?.obj?.upd), keys(all?.obj?.del)], [['d'], ['a', 'c'], ['b']]);
    assert.deepEqual(all?.obj?.upd?.a?.dat, { n: 2 });
    assert.equal(all?.obj?.upd?.c?.loc?.lon, 5);
    assert.equal(near?.uty, 'dta');
    assert.deepEqual([keys(near?.obj?.cre), keys(near?.obj?.upd), keys(near?.obj?.del)], [['d'], ['a'], ['b', 'c']]);

    // Events flow as before, and a second resync with nothing lost pushes nothing.
    await f.live.resync();
    await settle();
    assert.deepEqual(conn.take(), []);
    await f.objects.upsert(f.realm, 'a', at(1, 1, { n: 3 }));
    await settle();
    const after = conn.take() as Push[];
    assert.deepEqual(after.map((p) => [p.id, keys(p.obj?.upd)]).sort(), [['all', ['a']], ['near', ['a']]]);
  });

  it('a target subscription reads its target again: the circle follows where the store says it is', async () => {
    await f.objects.upsert(f.realm, 'target', at(10, 10));
    await f.objects.upsert(f.realm, 'a', at(10, 10.001));
    await f.objects.upsert(f.realm, 'far', at(20, 20.001));
    await createSubscription(f.live, conn, 'tar', f.ref, { typ: 'obj', sty: 'tar', sta: { id: 'target', r: 500 } });
    await settle();
    conn.take();
    await lostObjects.upsert(f.realm, 'target', at(20, 20));
    await f.live.resync();
    await settle();
    const [push] = conn.take() as Push[];
    assert.deepEqual([keys(push?.obj?.cre), keys(push?.obj?.del)], [['far'], ['a']]);
  });

  it('areas: one full set when a readable area differs; none when none does', async () => {
    await f.areas.create(f.realm, 'zone', { label: 'Zone', shape: { w: 1, s: 1, e: 2, n: 2 } });
    await createSubscription(f.live, conn, 'areas', f.ref, { typ: 'are' });
    await settle();
    conn.take();
    await f.live.resync();
    await settle();
    assert.deepEqual(conn.take(), [], 'nothing differs');
    await lostAreas.create(f.realm, 'other', { label: 'Other', shape: { w: 3, s: 3, e: 4, n: 4 } });
    await lostAreas.update(f.realm, 'zone', { label: 'Zone 2' });
    await f.live.resync();
    await settle();
    const pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'ful');
    assert.deepEqual(keys(pushes[0]?.are), ['other', 'zone']);
    assert.equal((pushes[0]?.are?.zone as { lab: string }).lab, 'Zone 2');
  });

  it('realm data is pushed when it differs; a realm deleted meanwhile ends its subscriptions silently', async () => {
    const g = await liveFixture();
    try {
      const c = new FakeConnection();
      await createSubscription(g.live, c, 'data', g.ref, { typ: 'rea', sty: 'rea' });
      await createSubscription(g.live, c, 'objects', g.ref, { typ: 'obj' });
      await createSubscription(g.live, c, 'areas', g.ref, { typ: 'are' });
      await g.live.resync();
      await settle();
      assert.deepEqual(c.take(), []);
      await g.store.realms.update(g.realm.id, { label: 'Renamed', data: { k: 1 } });
      await g.live.resync();
      await settle();
      assert.deepEqual(c.take(), [{ typ: 'sub', id: 'data', uty: 'ful', rea: { id: g.realm.id, lab: 'Renamed', dat: { k: 1 } } }]);
      await g.store.realms.delete(g.realm.id);
      await g.live.resync();
      await settle();
      assert.deepEqual(c.take(), []);
      assert.equal(g.live.count(), 0);
      assert.deepEqual(g.live.held(), { realms: 0, tenants: 0, connections: 1 });
    } finally {
      await g.close();
    }
  });

  it('calls while one runs share one more run after it; its reads begin after the calls', async () => {
    let reads = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const live = new LiveSubscriptions(
      {
        bus: f.bus,
        objects: f.store.objects,
        areas: f.store.areas,
        tasks: f.store.tasks,
        realms: {
          get: async (id) => {
            reads++;
            await gate;
            return f.store.realms.get(id);
          },
        },
      },
      { maxVertices: 100, maxConditions: 10, cycleMs: 10 },
    );
    const c = new FakeConnection();
    try {
      await createSubscription(live, c, 'all', f.ref, { typ: 'obj' });
      const first = live.resync();
      await sleep(5);
      assert.equal(reads, 1);
      const second = live.resync();
      const third = live.resync();
      assert.equal(second, third, 'calls while one runs share the next run');
      await sleep(5);
      assert.equal(reads, 1, 'the next run waits for the one under way');
      release();
      assert.deepEqual(await Promise.all([first, second]), [1, 1]);
      assert.equal(reads, 2);
    } finally {
      c.close();
    }
  });
});
