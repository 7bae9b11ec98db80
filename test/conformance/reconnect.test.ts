/**
 * Conformance (hivekit-compat.md 9, 3.7, 5.1): after the socket drops, the client
 * reconnects, signs in again and re-sends its live subscriptions (same ids, same options)
 * and pub/sub subscriptions in one frame; afterwards exactly one push per change reaches
 * the surviving subscriptions and nothing reaches cancelled ones.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyObjectPushes,
  assertSuc,
  connectWire,
  createRealm,
  heartbeatCid,
  openWs,
  sleep,
  sortedKeys,
  startConformance,
  uniqueId,
  type HivekitWire,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: reconnect and resubscribe (compat 9)', () => {
  const c = conformanceSuite('reconnect');

  async function freshRealm(): Promise<string> {
    const realm = uniqueId('reconnect');
    await createRealm(c.url, c.token, realm, { lab: 'Reconnect', dat: { v: 0 } });
    return realm;
  }

  /** No error replies and no cid-less errors on `w` (the client counts each as an error event). */
  function assertNoErrors(w: HivekitWire): void {
    const errors = [...w.replies.values()].flat().filter((r) => r.el.res === 'err');
    assert.equal(errors.length, 0, JSON.stringify(errors));
    const unsolicited = w.unsolicited.filter((r) => r.el.res === 'err');
    assert.equal(unsolicited.length, 0, JSON.stringify(unsolicited));
  }

  it('9: drop, reconnect, sign in, re-send subscriptions with the same ids in one frame: exactly one push per change, none for cancelled ones', async () => {
    const realm = await freshRealm();
    assertSuc(await c.wire.request({ typ: 'obj', act: 'cre', id: 'car-1', rea: realm, lab: 'Car', loc: { lon: 13.4, lat: 52.5 }, dat: { type: 'car' } }));
    const carSub = `object-subscription-${uniqueId('car')}`;
    const cancelled = `object-subscription-${uniqueId('gone')}`;
    const realmSub = `realm-data-${realm}-${uniqueId('r')}`;
    const eve = 'reconnect-event';
    const live: Msg[] = [
      { typ: 'sub', act: 'cre', id: carSub, rea: realm, dat: { typ: 'obj', sty: 'rea', atr: ['type="car"'] } },
      { typ: 'sub', act: 'cre', id: realmSub, rea: realm, dat: { typ: 'rea', sty: 'rea' } },
      { typ: 'rea', act: 'sub', id: realm, dat: { eve, idp: '*' } },
    ];

    const first = await connectWire(c.url, c.token);
    for (const r of await first.batch([...live, { typ: 'sub', act: 'cre', id: cancelled, rea: realm, dat: { typ: 'obj', sty: 'rea', atr: ['type="bike"'] } }])) assertSuc(r);
    assertSuc(await first.request({ typ: 'sub', act: 'del', id: cancelled, rea: realm }));

    // The socket drops; the client reconnects at once (10 ms in the suite), without waiting
    // for the server to notice the old connection is gone.
    first.drop();
    const second = await openWs(c.url);
    await second.signIn(c.token);
    const replies = await second.batch(live);
    for (const r of replies) assertSuc(r);
    const cars = second.watch(carSub);
    const realmPushes = second.watch(realmSub);
    const events = second.watchDeliveries(eve, '*');
    await cars.exactly(0, 300);
    assert.equal(realmPushes.got.length, 0, 'a re-created subscription without exe gets no initial push');

    assertSuc(await c.wire.request({ typ: 'obj', act: 'upd', id: 'car-1', rea: realm, loc: { lon: 13.5, lat: 52.5 } }));
    assertSuc(await c.wire.request({ typ: 'obj', act: 'cre', id: 'bike-1', rea: realm, dat: { type: 'bike' } }));
    assertSuc(await c.wire.request({ typ: 'rea', act: 'upd', id: realm, dat: { v: 1 } }));
    assertSuc(await c.wire.request({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp: 'car-1', dat: { hello: 'again' } } }));

    const [carPush] = await cars.exactly(1, 400);
    assert.deepEqual(Object.keys(carPush.obj.upd as object), ['car-1']);
    assert.equal(carPush.obj.upd['car-1'].loc.lon, 13.5);
    const [realmPush] = await realmPushes.exactly(1, 0);
    assert.deepEqual(realmPush.rea.dat, { v: 1 });
    assert.deepEqual(await events.exactly(1, 0), [{ typ: 'rea', act: 'pub', rea: realm, sid: '*', dat: { eve, dat: { hello: 'again' } } }]);
    assert.equal(second.pushesOf(cancelled).length, 0);
    assert.equal(first.pushes.length, 0, 'subscriptions without exe got no initial push (compat 5.4)');
    assertNoErrors(second);
    await second.close();
  });

  it('9: a re-created subscription with exe gets a new full push that replaces the client’s state', async () => {
    const realm = await freshRealm();
    await c.wire.batch([
      { typ: 'obj', act: 'cre', id: 'a', rea: realm },
      { typ: 'obj', act: 'cre', id: 'b', rea: realm },
    ]);
    const sid = `object-subscription-${uniqueId('exe')}`;
    const create: Msg = { typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea', exe: true } };
    const first = await connectWire(c.url, c.token);
    const before = first.watch(sid);
    assertSuc(await first.request(create));
    await before.exactly(1, 300);
    first.drop();
    assertSuc(await c.wire.request({ typ: 'obj', act: 'del', id: 'a', rea: realm }));
    assertSuc(await c.wire.request({ typ: 'obj', act: 'cre', id: 'c', rea: realm }));
    const second = await connectWire(c.url, c.token);
    const pushes = second.watch(sid);
    assertSuc(await second.request(create));
    const [full] = await pushes.exactly(1, 300);
    assert.equal(full.uty, 'ful');
    assert.deepEqual(sortedKeys(applyObjectPushes([full], applyObjectPushes(before.got))), ['b', 'c']);
    assertNoErrors(second);
    await second.close();
  });

  it('9/3.6: the default idle timeout outlasts the client’s 60 s heartbeat, and heartbeats keep a connection open', async () => {
    const idle = c.h.config.idleTimeoutMs;
    assert.ok(idle === 0 || idle > 60_000, `idle timeout ${idle} ms would close a Hivekit client between heartbeats (compat 9)`);
    const short = await startConformance('idle', { idleTimeoutMs: 400 });
    try {
      const wire = await connectWire(short.url, short.token);
      for (let i = 0; i < 8; i++) {
        await sleep(150);
        const cid = heartbeatCid();
        assert.deepEqual((await wire.batch([{ typ: 'sys', act: 'hbt', cid }]))[0], { typ: 'sys', act: 'hbt', res: 'suc', cid });
      }
      assert.equal(wire.isClosed, false, 'heartbeats count as activity');
    } finally {
      await short.stop();
    }
  });

  it('9/3.7: subscription ids of a connection the server still holds open are accepted on a new one; both get their pushes', async () => {
    const realm = await freshRealm();
    const sid = `object-subscription-${uniqueId('both')}`;
    const create: Msg = { typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea' } };
    const old = await connectWire(c.url, c.token);
    const fresh = await connectWire(c.url, c.token);
    assertSuc(await old.request(create));
    assertSuc(await fresh.request(create));
    const o = old.watch(sid);
    const f = fresh.watch(sid);
    assertSuc(await c.wire.request({ typ: 'obj', act: 'cre', id: 'x', rea: realm }));
    await f.exactly(1, 400);
    assert.equal(o.got.length, 1);
    await old.close();
    assertSuc(await c.wire.request({ typ: 'obj', act: 'upd', id: 'x', rea: realm, lab: 'X' }));
    await f.exactly(2, 400);
    assertNoErrors(fresh);
    await fresh.close();
  });
});
