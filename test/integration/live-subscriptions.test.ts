/**
 * Hivekit subscriptions (hivekit-compat.md section 5) on the real store, services, geofence
 * engine and bus, with fake connections that record each pushed frame (test/support/
 * live-fixture.ts). Socket-level cases are in live-subscriptions-ws.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { realmKey } from '../../internal/domain/realm-key.js';
import { RealmService } from '../../internal/service/realms.js';
import { FakeConnection, liveFixture, principal, sleep, type LiveFixture } from '../support/live-fixture.js';
import { createSubscription, updateSubscription } from '../../internal/transport/actions/subscription-options.js';

/** Longer than the 10 ms push cycle of the fixture plus the bus's turn. */
const settle = (): Promise<void> => sleep(60);

const lon0 = -0.140613;
const lat0 = 51.501866;

type Push = Record<string, unknown> & { obj?: Record<string, Record<string, unknown>> };

function keysOf(push: Push | undefined, map: 'cre' | 'upd' | 'del'): string[] {
  return Object.keys(push?.obj?.[map] ?? {}).sort();
}

describe('Hivekit subscriptions: the worked example of compat 5.11', () => {
  let f: LiveFixture;
  before(async () => {
    f = await liveFixture();
  });
  after(() => f.close());

  const put = (i: number, lon: number, lat: number, data?: Record<string, number>): Promise<unknown> =>
    f.objects.upsert(f.realm, `obj-id-${i}`, { location: { longitude: lon, latitude: lat }, ...(data === undefined ? {} : { data }) });

  it('runs steps 1 to 9 with exactly the pushes the client expects', async () => {
    const conn = new FakeConnection();
    // 1: a circle of 110 m, no exe: nothing pushed.
    await createSubscription(f.live, conn, 'S', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: lon0, cy: lat0, r: 110 } });
    await settle();
    assert.deepEqual(conn.take(), []);

    // 2: ten objects 0.001° (≈ 69 m) apart: one delta creating 0 and 1.
    await f.objects.bulk(f.realm, {
      objects: Array.from({ length: 10 }, (_, i) => ({ id: `obj-id-${i}`, location: { longitude: lon0 + i * 0.001, latitude: lat0 }, data: { testValue: i } })),
    });
    await settle();
    let pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.equal(conn.frames.length, 0);
    const [step2] = pushes;
    assert.deepEqual(Object.keys(step2 ?? {}), ['typ', 'id', 'uty', 'obj']);
    assert.equal(step2?.typ, 'sub');
    assert.equal(step2?.id, 'S');
    assert.equal(step2?.uty, 'dta');
    assert.deepEqual(Object.keys(step2?.obj ?? {}), ['cre']);
    assert.deepEqual(keysOf(step2, 'cre'), ['obj-id-0', 'obj-id-1']);
    const stored = await f.store.objects.get(f.realm.id, 'obj-id-1');
    assert.deepEqual(step2?.obj?.cre?.['obj-id-1'], {
      id: 'obj-id-1',
      loc: { gcs: '', lon: lon0 + 0.001, lat: lat0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0, tim: stored?.location?.time },
      dat: { testValue: 1 },
      cst: 'dis',
    });

    // 3: the centre moves by 0.002°: one full push of {1, 2, 3}, after the reply.
    await updateSubscription(f.live, conn, 'S', { typ: 'obj', sty: 'cir', sha: { cx: lon0 + 0.002, cy: lat0, r: 110 } });
    assert.deepEqual(conn.take(), [], 'the full push comes on a later cycle than the reply');
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'ful');
    assert.deepEqual(Object.keys(pushes[0]?.obj ?? {}), ['cre']);
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['obj-id-1', 'obj-id-2', 'obj-id-3']);

    // 4: object 2 moves far south: exactly one delta deleting it.
    await put(2, lon0 + 0.002, 50.5);
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'dta');
    assert.deepEqual(Object.keys(pushes[0]?.obj ?? {}), ['del']);
    assert.deepEqual(keysOf(pushes[0], 'del'), ['obj-id-2']);
    assert.equal((pushes[0]?.obj?.del?.['obj-id-2'] as { id?: string }).id, 'obj-id-2');

    // 5: object 4 moves to the centre: a delta creating it.
    await put(4, lon0 + 0.002, lat0);
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.deepEqual(Object.keys(pushes[0]?.obj ?? {}), ['cre']);
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['obj-id-4']);

    // 6: 5000 m and testValue>5: a full push of {6, 7, 8, 9}.
    await updateSubscription(f.live, conn, 'S', { typ: 'obj', sty: 'cir', sha: { cx: lon0 + 0.002, cy: lat0, r: 5000 }, atr: ['testValue>5'] });
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'ful');
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['obj-id-6', 'obj-id-7', 'obj-id-8', 'obj-id-9']);

    // 7: object 1 now has testValue 10: a delta creating it.
    await f.objects.upsert(f.realm, 'obj-id-1', { data: { testValue: 10 } });
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'dta');
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['obj-id-1']);
    assert.deepEqual((pushes[0]?.obj?.cre?.['obj-id-1'] as { dat?: unknown }).dat, { testValue: 10 });

    // 8: {"sty":"rea","atr":[]} clears the filter but keeps the 5000 m circle (obj 2 is ~111 km away).
    await updateSubscription(f.live, conn, 'S', { typ: 'obj', sty: 'rea', atr: [] });
    await settle();
    pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'ful');
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['obj-id-0', 'obj-id-1', 'obj-id-3', 'obj-id-4', 'obj-id-5', 'obj-id-6', 'obj-id-7', 'obj-id-8', 'obj-id-9']);

    // 9: deleted, then object 2 updated (and a member moved within the same cycle): nothing.
    await put(3, lon0 + 0.0031, lat0);
    f.live.delete(conn, 'S');
    await put(2, lon0 + 0.002, lat0);
    await settle();
    assert.deepEqual(conn.take(), []);
    assert.equal(f.live.count(), 0);
    assert.deepEqual(f.live.held(), { realms: 0, tenants: 0, connections: 1 });
  });
});

describe('Hivekit subscriptions: create, exe, membership, delete', () => {
  // A long push cycle: the writes of one step fall into one cycle even on a loaded machine.
  let f: LiveFixture;
  const settle = (): Promise<void> => sleep(300);
  before(async () => {
    f = await liveFixture({ cycleMs: 150 });
  });
  after(() => f.close());

  it('exe pushes the current set once, after the create resolved, {"obj":{"cre":{}}} when empty; without exe nothing', async () => {
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 'empty', f.ref, { typ: 'obj', sty: 'rea', atr: ['kind="none"'], exe: true });
    await createSubscription(f.live, conn, 'quiet', f.ref, { typ: 'obj', sty: 'rea', atr: ['kind="none"'] });
    assert.equal(conn.frames.length, 0, 'never in the turn of the reply');
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'empty', uty: 'ful', obj: { cre: {} } }]);
    await f.objects.upsert(f.realm, 'n1', { location: { longitude: 1, latitude: 1 }, data: { kind: 'none' } });
    await settle();
    const pushes = conn.take() as Push[];
    // One frame holds both subscriptions' deltas; quiet started from the (empty) current set.
    assert.deepEqual(
      pushes.map((p) => [p.id, p.uty, keysOf(p, 'cre')]),
      [
        ['empty', 'dta', ['n1']],
        ['quiet', 'dta', ['n1']],
      ],
    );
    f.live.delete(conn, 'empty');
    f.live.delete(conn, 'quiet');
  });

  it('membership starts as the current set: a member that changes arrives as upd, a new one as cre (12.1)', async () => {
    await f.objects.upsert(f.realm, 'm1', { location: { longitude: 10, latitude: 10 }, data: { team: 'a' } });
    await settle();
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 'team', f.ref, { typ: 'obj', sty: 'rec', sha: { x1: 9, y1: 9, x2: 11, y2: 11 }, atr: ['team="a"'] });
    await settle();
    assert.deepEqual(conn.take(), []);
    await f.objects.upsert(f.realm, 'm1', { location: { longitude: 10.5, latitude: 10 } });
    await f.objects.upsert(f.realm, 'm2', { location: { longitude: 10.1, latitude: 10 }, data: { team: 'a' } });
    // Outside the rectangle, and of another team: nothing.
    await f.objects.upsert(f.realm, 'm3', { location: { longitude: 20, latitude: 10 }, data: { team: 'a' } });
    await f.objects.upsert(f.realm, 'm4', { location: { longitude: 10, latitude: 10 }, data: { team: 'b' } });
    await settle();
    const pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.deepEqual(Object.keys(pushes[0]?.obj ?? {}), ['cre', 'upd']);
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['m2']);
    assert.deepEqual(keysOf(pushes[0], 'upd'), ['m1']);
    // A write that changes nothing pushes nothing.
    await f.objects.upsert(f.realm, 'm1', { data: { team: 'a' } });
    await settle();
    assert.deepEqual(conn.take(), []);
    // The filter fails now: del. Then deleted while a member: del.
    await f.objects.upsert(f.realm, 'm1', { data: { team: 'c' } });
    await settle();
    assert.deepEqual(keysOf(conn.take()[0] as Push, 'del'), ['m1']);
    await f.objects.delete(f.realm, 'm2');
    await settle();
    const [gone] = conn.take() as Push[];
    assert.deepEqual(keysOf(gone, 'del'), ['m2']);
    assert.equal((gone?.obj?.del?.m2 as { id: string }).id, 'm2');
    f.live.delete(conn, 'team');
  });

  it('whole-realm subscriptions with an equality condition see objects come and go by that value', async () => {
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 'blue', f.ref, { typ: 'obj', sty: 'rea', atr: ['colour="blue"', 'size>1'] });
    await createSubscription(f.live, conn, 'one', f.ref, { typ: 'obj', sty: 'rea', atr: ['$id="k/1"'] });
    await f.objects.upsert(f.realm, 'k/1', { data: { colour: 'blue', size: 2 } });
    await f.objects.upsert(f.realm, 'k/2', { data: { colour: 'blue', size: 1 } });
    await f.objects.upsert(f.realm, 'k/3', { data: { colour: 'red', size: 5 } });
    await settle();
    let pushes = (conn.take() as Push[]).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    assert.deepEqual(
      pushes.map((p) => [p.id, keysOf(p, 'cre'), keysOf(p, 'upd'), keysOf(p, 'del')]),
      [
        ['blue', ['k/1'], [], []],
        ['one', ['k/1'], [], []],
      ],
    );
    // k/1 turns red: it leaves "blue" (found through the members index), stays in "one";
    // k/3 turns blue; k/2 grows (now size 2).
    await f.objects.upsert(f.realm, 'k/1', { data: { colour: 'red' } });
    await f.objects.upsert(f.realm, 'k/3', { data: { colour: 'blue' } });
    await f.objects.upsert(f.realm, 'k/2', { data: { size: 2 } });
    await settle();
    pushes = (conn.take() as Push[]).sort((a, b) => String(a.id).localeCompare(String(b.id)));
    assert.deepEqual(
      pushes.map((p) => [p.id, keysOf(p, 'cre'), keysOf(p, 'upd'), keysOf(p, 'del')]),
      [
        ['blue', ['k/2', 'k/3'], [], ['k/1']],
        ['one', [], ['k/1'], []],
      ],
    );
    f.live.delete(conn, 'blue');
    f.live.delete(conn, 'one');
  });

  it('changes within one cycle share one push: entered and left again is nothing; left and back is upd', async () => {
    const conn = new FakeConnection();
    await f.objects.upsert(f.realm, 'c1', { location: { longitude: 30, latitude: 30 } });
    await settle();
    await createSubscription(f.live, conn, 'box', f.ref, { typ: 'obj', sty: 'rec', sha: { x1: 29, y1: 29, x2: 31, y2: 31 } });
    // c2 enters and leaves; c1 leaves and comes back; in one cycle.
    await f.objects.upsert(f.realm, 'c2', { location: { longitude: 30, latitude: 30 } });
    await f.objects.upsert(f.realm, 'c2', { location: { longitude: 40, latitude: 30 } });
    await f.objects.upsert(f.realm, 'c1', { location: { longitude: 40, latitude: 30 } });
    await f.objects.upsert(f.realm, 'c1', { location: { longitude: 30.5, latitude: 30 } });
    await settle();
    const pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.deepEqual(Object.keys(pushes[0]?.obj ?? {}), ['upd']);
    assert.deepEqual(keysOf(pushes[0], 'upd'), ['c1']);
    f.live.delete(conn, 'box');
  });

  it('a target subscription follows its target: the circle moves with it, $id leaves it out', async () => {
    const conn = new FakeConnection();
    await f.objects.upsert(f.realm, 't/target', { location: { longitude: 50, latitude: 0 } });
    await f.objects.upsert(f.realm, 't/near', { location: { longitude: 50.01, latitude: 0 } });
    await f.objects.upsert(f.realm, 't/far', { location: { longitude: 51, latitude: 0 } });
    await settle();
    await createSubscription(f.live, conn, 'tar', f.ref, { typ: 'obj', sty: 'tar', sta: { id: 't/target', r: 2000 }, atr: ['$id!="t/target"'], exe: true });
    await settle();
    let pushes = conn.take() as Push[];
    assert.deepEqual(
      pushes.map((p) => [p.uty, keysOf(p, 'cre')]),
      [['ful', ['t/near']]],
    );
    // A new object near the target: cre of it only.
    await f.objects.upsert(f.realm, 't/new', { location: { longitude: 49.99, latitude: 0 } });
    await settle();
    pushes = conn.take();
    assert.deepEqual(
      pushes.map((p) => [p.uty, keysOf(p, 'cre'), keysOf(p, 'del')]),
      [['dta', ['t/new'], []]],
    );
    // The target moves next to t/far: near and new leave, far enters.
    await f.objects.upsert(f.realm, 't/target', { location: { longitude: 50.995, latitude: 0 } });
    await settle();
    pushes = conn.take();
    assert.deepEqual(
      pushes.map((p) => [p.uty, keysOf(p, 'cre'), keysOf(p, 'del')]),
      [['dta', ['t/far'], ['t/near', 't/new']]],
    );
    // The target is deleted: the circle is gone, and so is every member.
    await f.objects.delete(f.realm, 't/target');
    await settle();
    pushes = conn.take();
    assert.deepEqual(
      pushes.map((p) => [p.uty, keysOf(p, 'cre'), keysOf(p, 'del')]),
      [['dta', [], ['t/far']]],
    );
    f.live.delete(conn, 'tar');
  });

  it('a presence change is an upd of that object where it is a member', async () => {
    const conn = new FakeConnection();
    await f.objects.upsert(f.realm, 'car/1', { location: { longitude: 60, latitude: 0 } });
    await settle();
    await createSubscription(f.live, conn, 'cars', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: 60, cy: 0, r: 1000 } });
    f.status.set('car/1', 'con');
    f.bus.publish(f.realm.id, [
      { kind: 'cst', realm: f.realm.id, object: 'car/1', status: 'con' },
      { kind: 'cst', realm: f.realm.id, object: 'car/2', status: 'con' },
    ]);
    await settle();
    const pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.deepEqual(keysOf(pushes[0], 'upd'), ['car/1']);
    assert.equal((pushes[0]?.obj?.upd?.['car/1'] as { cst: string }).cst, 'con');
    f.live.delete(conn, 'cars');
  });

  it('the same id on two connections is two subscriptions; del and close end only their own', async () => {
    const a = new FakeConnection();
    const b = new FakeConnection();
    const dat = { typ: 'obj', sty: 'cir', sha: { cx: 70, cy: 0, r: 1000 } };
    await createSubscription(f.live, a, 'same', f.ref, dat);
    await createSubscription(f.live, b, 'same', f.ref, dat);
    f.live.delete(a, 'same');
    assert.throws(() => f.live.delete(a, 'same'), { message: 'unknown subscription same', status: 404 });
    await f.objects.upsert(f.realm, 'd1', { location: { longitude: 70, latitude: 0 } });
    await settle();
    assert.deepEqual(a.take(), []);
    assert.deepEqual(keysOf(b.take()[0] as Push, 'cre'), ['d1']);
    // Queued changes of a closing connection are dropped with it.
    const connections = f.live.held().connections;
    await f.objects.upsert(f.realm, 'd1', { location: { longitude: 70.001, latitude: 0 } });
    b.close();
    await settle();
    assert.deepEqual(b.take(), []);
    assert.equal(f.live.count(), 0);
    assert.deepEqual(f.live.held(), { realms: 0, tenants: 0, connections: connections - 1 });
  });

  it('a second create of an id on the same connection replaces the first', async () => {
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 'again', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: 80, cy: 0, r: 1000 } });
    await createSubscription(f.live, conn, 'again', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: 81, cy: 0, r: 1000 } });
    assert.equal(f.live.count(), 1);
    await f.objects.upsert(f.realm, 'e1', { location: { longitude: 80, latitude: 0 } });
    await f.objects.upsert(f.realm, 'e2', { location: { longitude: 81, latitude: 0 } });
    await settle();
    const pushes = conn.take() as Push[];
    assert.equal(pushes.length, 1);
    assert.deepEqual(keysOf(pushes[0], 'cre'), ['e2']);
    f.live.delete(conn, 'again');
  });

  it('refuses bad options with a clear 400 and creates nothing; instructions and logs with 501', async () => {
    const conn = new FakeConnection();
    const bad: [unknown, RegExp][] = [
      [{ typ: 'obj', sty: 'cir' }, /dat\.sty "cir" needs the shape data in dat\.sha/],
      [{ typ: 'obj', sty: 'cir', sha: { cx: 1, cy: 2 } }, /dat\.sha lacks r/],
      [{ typ: 'obj', sty: 'rec', sha: { x1: 1, y1: 2, x2: 3, y2: 1 } }, /south edge/],
      [{ typ: 'obj', sty: 'pol', sha: { points: [{ x: 1, y: 1 }] } }, /at least 3 distinct vertices/],
      [{ typ: 'obj', sty: 'zzz' }, /dat\.sty must be "rea", "rec", "cir", "pol" or "tar"/],
      [{ typ: 'obj', sty: 'tar', sta: { id: 'x' } }, /dat\.sta\.r must be a radius in metres/],
      [{ typ: 'obj', sty: 'tar' }, /dat\.sta must be the target/],
      [{ typ: 'obj', atr: 'type="car"' }, /dat\.atr must be an array/],
      [{ typ: 'obj', atr: ['$nope=1'] }, /unknown field \$nope/],
      [{ typ: 'obj', sty: 'rea', sha: { cx: 1, cy: 1, r: 1 } }, /dat\.sha was given with dat\.sty "rea"/],
      [{ typ: 'zzz' }, /dat\.typ must be "obj"/],
      [{ sty: 'rea' }, /dat\.typ must be "obj"/],
      ['text', /dat must be a JSON object/],
    ];
    for (const [dat, message] of bad) {
      await assert.rejects(createSubscription(f.live, conn, 'bad', f.ref, dat), (err: Error & { status?: number }) => {
        assert.match(err.message, message);
        assert.equal(err.status, 400);
        return true;
      });
    }
    for (const typ of ['ins', 'log']) {
      await assert.rejects(createSubscription(f.live, conn, 'bad', f.ref, { typ, sty: 'rea' }), { status: 501, message: new RegExp(`dat.typ "${typ}"`) });
    }
    assert.equal(f.live.count(), 0);
    // A bad update leaves the subscription as it was.
    await createSubscription(f.live, conn, 'ok', f.ref, { typ: 'obj', sty: 'cir', sha: { cx: 90, cy: 0, r: 1000 } });
    await assert.rejects(updateSubscription(f.live, conn, 'ok', { typ: 'obj', sty: 'cir', sha: { cx: 900, cy: 0, r: 1 } }), { status: 400 });
    await assert.rejects(updateSubscription(f.live, conn, 'ok', { typ: 'are' }), { status: 400, message: /differs from the subscription's kind "obj"/ });
    await assert.rejects(updateSubscription(f.live, conn, 'nope', { typ: 'obj' }), { status: 404, message: 'unknown subscription nope' });
    await settle();
    assert.deepEqual(conn.take(), []);
    await f.objects.upsert(f.realm, 'g1', { location: { longitude: 90, latitude: 0 } });
    await settle();
    assert.deepEqual(keysOf(conn.take()[0] as Push, 'cre'), ['g1']);
    f.live.delete(conn, 'ok');
  });

  it('limits the subscriptions of one connection', async () => {
    const g = await liveFixture({ maxPerConnection: 2 });
    try {
      const conn = new FakeConnection();
      await createSubscription(g.live, conn, 'a', g.ref, { typ: 'are' });
      await createSubscription(g.live, conn, 'b', g.ref, { typ: 'are' });
      await assert.rejects(createSubscription(g.live, conn, 'c', g.ref, { typ: 'are' }), { status: 413, message: /at most 2 subscriptions/ });
      // Replacing an existing id is no new subscription.
      await createSubscription(g.live, conn, 'b', g.ref, { typ: 'obj' });
      assert.equal(g.live.count(), 2);
    } finally {
      await g.close();
    }
  });
});

describe('Hivekit subscriptions: areas, realm data, realm events, realm deletion', () => {
  let f: LiveFixture;
  before(async () => {
    f = await liveFixture();
  });
  after(() => f.close());

  it('areas: exactly one initial push with exe, then a full set after each area write', async () => {
    await f.areas.create(f.realm, 'A', { label: 'Area A', shape: { w: 1, s: 1, e: 2, n: 2 }, data: { k: 1 } });
    await settle();
    const conn = new FakeConnection();
    // sty/sha/atr are not applied to areas (12.5).
    await createSubscription(f.live, conn, 'areas', f.ref, { typ: 'are', sty: 'cir', sha: { cx: 50, cy: 50, r: 1 }, atr: ['k=2'], exe: true });
    await settle();
    assert.deepEqual(conn.take(), [
      { typ: 'sub', id: 'areas', uty: 'ful', are: { A: { id: 'A', lab: 'Area A', sty: 'rec', sha: { x1: 1, y1: 1, x2: 2, y2: 2 }, dat: { k: 1 } } } },
    ]);
    await sleep(100);
    assert.deepEqual(conn.take(), [], 'no further pushes without changes');
    await f.areas.create(f.realm, 'B', { label: 'Area B', shape: { cx: 13.4, cy: 52.5, r: 300 } });
    await settle();
    let pushes = conn.take();
    assert.equal(pushes.length, 1);
    assert.deepEqual(Object.keys(pushes[0]?.are as object), ['A', 'B']);
    assert.deepEqual((pushes[0]?.are as Record<string, unknown>).B, { id: 'B', lab: 'Area B', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 300 }, dat: {} });
    await f.areas.delete(f.realm, 'A');
    await settle();
    pushes = conn.take();
    assert.deepEqual(pushes.map((p) => [p.uty, Object.keys(p.are as object)]), [['ful', ['B']]]);
    // An object write is no area change.
    await f.objects.upsert(f.realm, 'x', { location: { longitude: 13.4, latitude: 52.5 } });
    await settle();
    assert.deepEqual(conn.take(), []);
    f.live.delete(conn, 'areas');
  });

  it('realm events: the sequence of compat 8.1, exactly {typ,id,act} per realm create, update and delete', async () => {
    const conn = new FakeConnection();
    const events = (): unknown[] => conn.take().map((p) => p.dat);
    await createSubscription(f.live, conn, 'realm-subscription--1', null, { typ: 'sys', sty: 'rea' });
    const change = (act: 'cre' | 'upd' | 'del', name: string, tenant = 'default'): void =>
      f.bus.publishTenant(tenant, { kind: 'rea', act, tenant, realm: name, name, record: act === 'del' ? null : { label: name, data: {} } });
    change('cre', 'A');
    change('cre', 'B');
    await settle();
    let frames = conn.frames.length;
    assert.deepEqual(events(), [
      { typ: 'rea', id: 'A', act: 'cre' },
      { typ: 'rea', id: 'B', act: 'cre' },
    ]);
    assert.equal(frames, 1, 'one cycle, one frame');
    change('upd', 'B');
    change('upd', 'B');
    await settle();
    change('upd', 'B');
    change('upd', 'zzz', 'another-tenant');
    await settle();
    change('del', 'B');
    await settle();
    const pushes = conn.take();
    assert.equal(pushes.length, 4);
    for (const push of pushes) assert.deepEqual(Object.keys(push), ['typ', 'id', 'uty', 'dat']);
    assert.deepEqual(
      pushes.map((p) => p.dat),
      [
        { typ: 'rea', id: 'B', act: 'upd' },
        { typ: 'rea', id: 'B', act: 'upd' },
        { typ: 'rea', id: 'B', act: 'upd' },
        { typ: 'rea', id: 'B', act: 'del' },
      ],
    );
    f.live.delete(conn, 'realm-subscription--1');
    change('del', 'A');
    await settle();
    frames = conn.frames.length;
    assert.equal(frames, 0);
  });

  it('a confined principal (opaque realm token) hears of its own realm only', async () => {
    const conn = new FakeConnection(principal('default', 'mine'));
    await createSubscription(f.live, conn, 'sys', null, { typ: 'sys' });
    for (const name of ['other', 'mine']) f.bus.publishTenant('default', { kind: 'rea', act: 'upd', tenant: 'default', realm: name, name, record: { label: null, data: {} } });
    await settle();
    assert.deepEqual(conn.take().map((p) => p.dat), [{ typ: 'rea', id: 'mine', act: 'upd' }]);
    f.live.delete(conn, 'sys');
  });

  it('realm data: one full push per update of that realm, none for other realms; a delete ends it silently', async () => {
    const conn = new FakeConnection();
    await createSubscription(f.live, conn, 'realm-data-r', f.ref, { typ: 'rea', sty: 'rea' });
    const upd = (realm: string, data: Record<string, unknown>): void =>
      f.bus.publishTenant('default', { kind: 'rea', act: 'upd', tenant: 'default', realm, name: realm, record: { label: 'L', data: data as never } });
    upd(f.realm.id, { a: 1 });
    upd('elsewhere', { b: 1 });
    await settle();
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'realm-data-r', uty: 'ful', rea: { id: f.realm.id, lab: 'L', dat: { a: 1 } } }]);
    f.bus.publishTenant('default', { kind: 'rea', act: 'del', tenant: 'default', realm: f.realm.id, name: f.realm.id, record: null });
    await settle();
    assert.deepEqual(conn.take(), []);
    assert.equal(f.live.count(), 0);
  });

  it('a deleted realm drops its object and area subscriptions silently', async () => {
    const g = await liveFixture();
    try {
      const conn = new FakeConnection();
      await createSubscription(g.live, conn, 'o', g.ref, { typ: 'obj' });
      await createSubscription(g.live, conn, 'a', g.ref, { typ: 'are' });
      await g.objects.upsert(g.realm, 'z', { location: { longitude: 1, latitude: 1 } });
      g.bus.publishRealmDeleted(g.realm.id);
      await settle();
      assert.equal(g.live.count(), 0);
      assert.deepEqual(g.live.held().realms, 0);
      assert.throws(() => g.live.delete(conn, 'o'), { status: 404 });
    } finally {
      await g.close();
    }
  });
});

describe('Hivekit subscriptions: realm changes through the real RealmService (tenant acme)', () => {
  it('realm events show names, realm data follows updates, a realm delete ends its subscriptions silently', async () => {
    const f = await liveFixture();
    try {
      await f.store.tenants.create({ id: 'acme', label: null, created: new Date().toISOString() });
      const realms = new RealmService(f.store, () => Date.now(), f.engine, f.bus);
      const conn = new FakeConnection(principal('acme'));
      await createSubscription(f.live, conn, 'realm-subscription--a', null, { typ: 'sys', sty: 'rea' });
      // The default tenant's realm events do not reach acme.
      const other = new FakeConnection(principal('default'));
      await createSubscription(f.live, other, 'realm-subscription--d', null, { typ: 'sys', sty: 'rea' });
      const fleet = await realms.create('acme', 'fleet', { label: 'Fleet', data: { a: 1 } });
      assert.equal(fleet.id, realmKey('acme', 'fleet'));
      assert.notEqual(fleet.id, 'fleet', 'a storage key that is not the name');
      await sleep(60);
      assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'realm-subscription--a', uty: 'ful', dat: { typ: 'rea', id: 'fleet', act: 'cre' } }]);
      const ref = { key: fleet.id, name: fleet.name, tenant: fleet.tenant, label: fleet.label, data: fleet.data };
      await createSubscription(f.live, conn, 'realm-data-fleet', ref, { typ: 'rea', sty: 'rea' });
      await createSubscription(f.live, conn, 'objects', ref, { typ: 'obj', sty: 'rea' });
      await realms.update('acme', 'fleet', { data: { a: 2, b: { nested: true } } });
      await sleep(60);
      const pushes = conn.take();
      assert.deepEqual(
        pushes.sort((a, b) => String(a.id).localeCompare(String(b.id))),
        [
          { typ: 'sub', id: 'realm-data-fleet', uty: 'ful', rea: { id: 'fleet', lab: 'Fleet', dat: { a: 2, b: { nested: true } } } },
          { typ: 'sub', id: 'realm-subscription--a', uty: 'ful', dat: { typ: 'rea', id: 'fleet', act: 'upd' } },
        ],
      );
      await realms.delete('acme', 'fleet');
      await sleep(60);
      assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'realm-subscription--a', uty: 'ful', dat: { typ: 'rea', id: 'fleet', act: 'del' } }]);
      // The realm's data and object subscriptions ended without a message; realm events go on.
      assert.throws(() => f.live.delete(conn, 'objects'), { status: 404 });
      assert.throws(() => f.live.delete(conn, 'realm-data-fleet'), { status: 404 });
      assert.deepEqual(other.take(), []);
      f.live.delete(conn, 'realm-subscription--a');
      f.live.delete(other, 'realm-subscription--d');
      assert.deepEqual(f.live.held(), { realms: 0, tenants: 0, connections: 2 });
    } finally {
      await f.close();
    }
  });
});
