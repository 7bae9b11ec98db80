/**
 * Conformance (hivekit-compat.md 4.8, 6, 12.8, 12.11): realm pub/sub with id patterns and
 * its delivery form; presence from `dpv` data-provider connections (`cst`, the
 * `connectionStatusChanged` publication, `upd` pushes).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  connectWire,
  createRealm,
  signToken,
  sleep,
  uniqueId,
  type HivekitWire,
  type Json,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: pub/sub and presence (compat 4.8, 6)', () => {
  const c = conformanceSuite('pubsub', { wire: false });
  let a: HivekitWire;
  let b: HivekitWire;

  before(async () => {
    a = await connectWire(c.url, c.token);
    b = await connectWire(c.url, await signToken({ sub: 'userB' }));
  });

  async function freshRealm(): Promise<string> {
    const realm = uniqueId('pubsub');
    await createRealm(c.url, c.token, realm);
    return realm;
  }
  const sub = (w: HivekitWire, realm: string, eve: string, idp: string): Promise<Json> => w.request({ typ: 'rea', act: 'sub', id: realm, dat: { eve, idp } });
  const uns = (w: HivekitWire, realm: string, eve: string, idp: string): Promise<Json> => w.request({ typ: 'rea', act: 'uns', id: realm, dat: { eve, idp } });
  const pub = (w: HivekitWire, realm: string, eve: string, idp: string, dat: unknown): Promise<Json> =>
    w.request({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp, dat } });
  const delivery = (realm: string, sid: string, eve: string, dat: unknown) => ({ typ: 'rea', act: 'pub', rea: realm, sid, dat: { eve, dat } });

  describe('pub/sub (4.8)', () => {
    it('4.8: sub, uns and pub are acknowledged with res suc and their cid', async () => {
      const realm = await freshRealm();
      for (const reply of [await sub(a, realm, 'ack', '*'), await pub(a, realm, 'ack', '*', 1), await uns(a, realm, 'ack', '*')]) {
        assertSuc(reply);
        assert.equal(reply.typ, 'rea');
      }
    });

    it('4.8: patterns `*` and `some-id`: a publish to some-id reaches both, exactly once each, in the exact delivery form; another-id reaches only `*`', async () => {
      const realm = await freshRealm();
      const star = a.watchDeliveries('multi', '*');
      const some = a.watchDeliveries('multi', 'some-id');
      assertSuc(await sub(a, realm, 'multi', '*'));
      assertSuc(await sub(a, realm, 'multi', 'some-id'));
      const payload = { some: 'data', n: 1 };
      assertSuc(await pub(b, realm, 'multi', 'some-id', payload));
      assert.deepEqual(await star.exactly(1, 400), [delivery(realm, '*', 'multi', payload)]);
      assert.deepEqual(some.got, [delivery(realm, 'some-id', 'multi', payload)]);
      assertSuc(await pub(b, realm, 'multi', 'another-id', 'second'));
      const starGot = await star.exactly(2, 400);
      assert.deepEqual(starGot[1], delivery(realm, '*', 'multi', 'second'));
      assert.equal(some.got.length, 1);
      assert.equal(b.deliveries.length, 0, 'a connection without subscriptions receives nothing');
    });

    it('4.8: the publisher’s own subscription receives its publication; other events are not delivered', async () => {
      const realm = await freshRealm();
      const own = a.watchDeliveries('self', '*');
      assertSuc(await sub(a, realm, 'self', '*'));
      assertSuc(await pub(a, realm, 'self', 'x', { hello: true }));
      assertSuc(await pub(a, realm, 'other-event', 'x', { hello: false }));
      assert.deepEqual(await own.exactly(1, 400), [delivery(realm, '*', 'self', { hello: true })]);
      assert.equal(a.deliveriesOf('other-event', '*').length, 0);
    });

    it('4.8/12.8: glob patterns: `car/*` matches car/123, not bike/1; after uns nothing more arrives', async () => {
      const realm = await freshRealm();
      const cars = b.watchDeliveries('glob', 'car/*');
      assertSuc(await sub(b, realm, 'glob', 'car/*'));
      assertSuc(await pub(a, realm, 'glob', 'car/123', 1));
      assertSuc(await pub(a, realm, 'glob', 'bike/1', 2));
      assert.deepEqual(await cars.exactly(1, 400), [delivery(realm, 'car/*', 'glob', 1)]);
      assertSuc(await uns(b, realm, 'glob', 'car/*'));
      assertSuc(await pub(a, realm, 'glob', 'car/456', 3));
      await cars.exactly(1, 400);
    });

    it('12.6: pub/sub naming a missing realm is `unknown realm <id>`, 404', async () => {
      const missing = uniqueId('nowhere');
      assertError(await sub(a, missing, 'e', '*'), `unknown realm ${missing}`, 404);
      assertError(await pub(a, missing, 'e', '*', 1), `unknown realm ${missing}`, 404);
    });
  });

  describe('presence (6)', () => {
    const provider = (realm: string, patterns: string[]): Promise<string> => signToken({ sub: 'dataProviderClient' }, { claims: { dpv: { [realm]: patterns } } });

    it('6/0#9: objects written by ordinary clients read and list as `dis`; creating an object publishes no connectionStatusChanged', async () => {
      const realm = await freshRealm();
      const events = a.watchDeliveries('connectionStatusChanged', '*');
      assertSuc(await sub(a, realm, 'connectionStatusChanged', '*'));
      const id = `car/-${uniqueId('x')}`;
      assertSuc(await a.request({ typ: 'obj', act: 'cre', id, rea: realm, loc: { lon: 13.4, lat: 52.5 } }));
      assertSuc(await a.request({ typ: 'obj', act: 'upd', id, rea: realm, loc: { lon: 13.5, lat: 52.5 } }));
      assert.equal((await a.request({ typ: 'obj', act: 'rea', id, rea: realm })).dat.cst, 'dis');
      assert.equal((await a.request({ typ: 'obj', act: 'lis', rea: realm })).dat[id].cst, 'dis');
      await events.exactly(0, 400);
    });

    it('6: a dpv connection makes its objects `con` within 400 ms (read, list, upd push, connectionStatusChanged), and `dis` again when it closes', async () => {
      const realm = await freshRealm();
      const car = `car/-${uniqueId('x')}`;
      const bike = `bike/-${uniqueId('y')}`;
      await a.batch([
        { typ: 'obj', act: 'cre', id: car, rea: realm, loc: { lon: 13.4, lat: 52.5 } },
        { typ: 'obj', act: 'cre', id: bike, rea: realm, loc: { lon: 13.4, lat: 52.5 } },
      ]);
      const events = a.watchDeliveries('connectionStatusChanged', '*');
      assertSuc(await sub(a, realm, 'connectionStatusChanged', '*'));
      const sid = uniqueId('object-subscription');
      const pushes = a.watch(sid);
      assertSuc(await a.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea' } }));

      const dp = await connectWire(c.url, await provider(realm, ['car/*']));
      const [con] = await events.exactly(1, 400);
      assert.deepEqual(con, delivery(realm, '*', 'connectionStatusChanged', { cst: 'con', id: car }));
      assert.equal((await a.request({ typ: 'obj', act: 'rea', id: car, rea: realm })).dat.cst, 'con');
      assert.equal((await a.request({ typ: 'obj', act: 'rea', id: bike, rea: realm })).dat.cst, 'dis');
      const list = (await a.request({ typ: 'obj', act: 'lis', rea: realm })).dat;
      assert.equal(list[car].cst, 'con');
      assert.equal(list[bike].cst, 'dis');
      const [upd] = pushes.got;
      assert.equal(pushes.got.length, 1, JSON.stringify(pushes.got));
      assert.deepEqual(Object.keys(upd.obj as object), ['upd']);
      assert.equal(upd.obj.upd[car].cst, 'con');

      await dp.close();
      const got = await events.exactly(2, 400);
      assert.deepEqual(got[1], delivery(realm, '*', 'connectionStatusChanged', { cst: 'dis', id: car }));
      assert.equal((await a.request({ typ: 'obj', act: 'rea', id: car, rea: realm })).dat.cst, 'dis');
      assert.equal(pushes.got.length, 2);
      assert.equal(pushes.got[1].obj.upd[car].cst, 'dis');
    });

    it('6 (Recommendation): an object stays `con` while at least one of its providers is open', async () => {
      const realm = await freshRealm();
      const car = `car/-${uniqueId('x')}`;
      assertSuc(await a.request({ typ: 'obj', act: 'cre', id: car, rea: realm }));
      const token = await provider(realm, ['car/*']);
      const p1 = await connectWire(c.url, token);
      const p2 = await connectWire(c.url, token);
      const cst = async (): Promise<string> => (await a.request({ typ: 'obj', act: 'rea', id: car, rea: realm })).dat.cst as string;
      await sleep(400);
      assert.equal(await cst(), 'con');
      await p1.close();
      await sleep(400);
      assert.equal(await cst(), 'con');
      await p2.close();
      await sleep(400);
      assert.equal(await cst(), 'dis');
    });

    it('6: a provider of another realm does not change this realm’s objects', async () => {
      const realm = await freshRealm();
      const elsewhere = await freshRealm();
      const car = `car/-${uniqueId('x')}`;
      assertSuc(await a.request({ typ: 'obj', act: 'cre', id: car, rea: realm }));
      const dp = await connectWire(c.url, await provider(elsewhere, ['car/*']));
      await sleep(400);
      assert.equal((await a.request({ typ: 'obj', act: 'rea', id: car, rea: realm })).dat.cst, 'dis');
      await dp.close();
    });
  });
});
