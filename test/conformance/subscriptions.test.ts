/**
 * Conformance (hivekit-compat.md 5, 10): object, target and area subscriptions, the `exe`
 * initial push after the reply, stateful membership with cre/upd/del, subscription update
 * and delete, and the worked example of 5.11 step by step with the suite's 200 ms waits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyAreaPushes,
  applyObjectPushes,
  assertClientError,
  assertError,
  assertSuc,
  connectWire,
  createRealm,
  newCid,
  sleep,
  sortedKeys,
  uniqueId,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: subscriptions (compat 5)', () => {
  const c = conformanceSuite('subscriptions');
  const { req } = c;
  async function freshRealm(): Promise<string> {
    const realm = uniqueId('subs');
    await createRealm(c.url, c.token, realm);
    return realm;
  }
  const readObject = (realm: string, id: string): Promise<Json> => c.read('obj', id, realm);
  /** Creates a subscription and returns the reply's arrival record (for ordering checks). */
  async function subscribe(w: HivekitWire, id: string, realm: string, dat: Msg): Promise<{ frame: number; turn: number }> {
    const cid = newCid();
    const [reply] = await w.batch([{ typ: 'sub', act: 'cre', id, rea: realm, dat, cid }]);
    assertSuc(reply);
    const r = w.replyOf(cid);
    assert.ok(r !== undefined);
    return { frame: r.frame, turn: r.turn };
  }
  /** compat 5.4: the push came in a later frame and a later delivery turn than the reply. */
  function assertAfterReply(w: HivekitWire, subId: string, reply: { frame: number; turn: number }, index = 0): void {
    const push = w.pushRecords(subId)[index];
    assert.ok(push !== undefined, 'no push');
    assert.ok(push.frame > reply.frame, 'the push must not share the reply frame (compat 5.4)');
    assert.ok(push.turn > reply.turn, 'the push must come in a later write than the reply, not back to back with it (compat 5.4, 12#9)');
  }

  it('5.4: exe in an empty realm: the reply, then exactly one push {uty:ful, obj:{cre:{}}} in a later write; then one dta cre for a new object', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    const reply = await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea', exe: true });
    const [initial] = await pushes.exactly(1, 300);
    assert.deepEqual(initial, { typ: 'sub', id: sid, uty: 'ful', obj: { cre: {} } });
    assertAfterReply(c.wire, sid, reply);
    const id = uniqueId('object');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: realm, lab: 'New', loc: { lon: 13.4, lat: 52.5 }, dat: { type: 'scooter' } }));
    const got = await pushes.exactly(2, 200);
    const delta = got[1];
    assert.equal(delta.uty, 'dta');
    assert.deepEqual(Object.keys(delta.obj as object), ['cre']);
    assert.deepEqual(delta.obj.cre, { [id]: await readObject(realm, id) }, 'pushes carry full object records (compat 4.2, 5.3)');
  });

  it('5.4: exe on a realm with objects: exactly one ful push holding every matching record', async () => {
    const realm = await freshRealm();
    const ids = [uniqueId('a'), uniqueId('b')];
    await c.wire.batch(ids.map((id) => ({ typ: 'obj', act: 'cre', id, rea: realm, lab: id, loc: { lon: 1, lat: 1 } })));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    const reply = await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea', exe: true });
    const [p] = await pushes.exactly(1, 300);
    assertAfterReply(c.wire, sid, reply);
    assert.equal(p.uty, 'ful');
    const set = applyObjectPushes([p]);
    assert.deepEqual(sortedKeys(set), [...ids].sort());
    for (const id of ids) assert.deepEqual(set.get(id), await readObject(realm, id));
  });

  it('5.4/12#1: without exe there is no initial push; the set starts as the current matches (upd for a member, cre for a newcomer, del on delete)', async () => {
    const realm = await freshRealm();
    const member = uniqueId('member');
    assertSuc(await req({ typ: 'obj', act: 'cre', id: member, rea: realm, lab: 'M', loc: { lon: 1, lat: 1 } }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea' });
    await pushes.exactly(0, 200);
    assertSuc(await req({ typ: 'obj', act: 'upd', id: member, rea: realm, lab: 'M2' }));
    const [upd] = await pushes.exactly(1, 200);
    assert.equal(upd.uty, 'dta');
    assert.deepEqual(Object.keys(upd.obj as object), ['upd']);
    assert.deepEqual(upd.obj.upd, { [member]: await readObject(realm, member) });
    const newcomer = uniqueId('newcomer');
    assertSuc(await req({ typ: 'obj', act: 'cre', id: newcomer, rea: realm, loc: { lon: 2, lat: 2 } }));
    const [, cre] = await pushes.exactly(2, 200);
    assert.deepEqual(Object.keys(cre.obj.cre as object), [newcomer]);
    assertSuc(await req({ typ: 'obj', act: 'del', id: newcomer, rea: realm }));
    const [, , del] = await pushes.exactly(3, 200);
    assert.equal(del.uty, 'dta');
    assert.deepEqual(Object.keys(del.obj as object), ['del']);
    assert.deepEqual(Object.keys(del.obj.del as object), [newcomer], 'del is an object keyed by id (compat 5.3)');
  });

  it('5.11: the worked example of test/subscription-update-test.js, step by step', async () => {
    const realm = await freshRealm();
    const lat = 51.501866;
    const lon0 = -0.140613;
    const id = (i: number): string => `obj-id-${i}`;
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    let seen = 0;
    let set = new Map<string, Json>();
    /** The pushes of one step: waits 200 ms, checks the count, applies them as the client does. */
    const step = async (n?: number): Promise<Json[]> => {
      await sleep(200);
      const mine = pushes.got.slice(seen);
      if (n === undefined) assert.ok(mine.length >= 1, 'expected at least one push within 200 ms');
      else assert.equal(mine.length, n, `expected exactly ${n} push(es) within 200 ms, got ${JSON.stringify(mine)}`);
      seen += mine.length;
      set = applyObjectPushes(mine, set);
      return mine;
    };
    const members = (): string[] => sortedKeys(set);
    const ids = (...n: number[]): string[] => n.map(id).sort();

    // 1: circle r = 110 m, no exe: no push.
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'cir', sha: { cx: lon0, cy: lat, r: 110 } });
    await pushes.exactly(0, 200);

    // 2: ten objects in one frame → dta cre of 0 and 1 (may be split over push cycles, never repeated).
    const created = await c.wire.batch(
      Array.from({ length: 10 }, (_, i) => ({ typ: 'obj', act: 'cre', id: id(i), rea: realm, loc: { lon: lon0 + i * 0.001, lat }, dat: { testValue: i } })),
    );
    for (const r of created) assertSuc(r);
    const s2 = await step();
    for (const p of s2) {
      assert.equal(p.uty, 'dta');
      assert.deepEqual(Object.keys(p.obj as object), ['cre']);
    }
    assert.deepEqual(s2.flatMap((p) => Object.keys(p.obj.cre as object)).sort(), ids(0, 1));
    assert.deepEqual(members(), ids(0, 1));
    assert.deepEqual(set.get(id(0)), await readObject(realm, id(0)));

    // 3: move the circle +0.002° → one ful push {1,2,3}, after the reply.
    const updCid = newCid();
    assertSuc((await c.wire.batch([{ typ: 'sub', act: 'upd', id: sid, rea: realm, cid: updCid, dat: { typ: 'obj', sty: 'cir', sha: { cx: lon0 + 0.002, cy: lat, r: 110 } } }]))[0]);
    const [s3] = await step(1);
    const reply3 = c.wire.replyOf(updCid);
    assert.ok(reply3 !== undefined);
    assertAfterReply(c.wire, sid, reply3, seen - 1);
    assert.equal(s3.uty, 'ful');
    assert.deepEqual(members(), ids(1, 2, 3));

    // 4: obj 2 to lat 50.50 → exactly one dta with del of 2.
    assertSuc(await req({ typ: 'obj', act: 'upd', id: id(2), rea: realm, loc: { lon: lon0 + 0.002, lat: 50.5 } }));
    const [s4] = await step(1);
    assert.equal(s4.uty, 'dta');
    assert.deepEqual(Object.keys(s4.obj as object), ['del']);
    assert.deepEqual(Object.keys(s4.obj.del as object), [id(2)]);
    assert.deepEqual(members(), ids(1, 3));

    // 5: obj 4 to the centre → dta cre of 4.
    assertSuc(await req({ typ: 'obj', act: 'upd', id: id(4), rea: realm, loc: { lon: lon0 + 0.002, lat } }));
    const [s5] = await step(1);
    assert.equal(s5.uty, 'dta');
    assert.deepEqual(Object.keys(s5.obj as object), ['cre']);
    assert.deepEqual(Object.keys(s5.obj.cre as object), [id(4)]);
    assert.deepEqual(members(), ids(1, 3, 4));

    // 6: r = 5000 m, atr testValue>5 → ful {6,7,8,9}.
    assertSuc(await req({ typ: 'sub', act: 'upd', id: sid, rea: realm, dat: { typ: 'obj', sty: 'cir', sha: { cx: lon0 + 0.002, cy: lat, r: 5000 }, atr: ['testValue>5'] } }));
    const [s6] = await step(1);
    assert.equal(s6.uty, 'ful');
    assert.deepEqual(members(), ids(6, 7, 8, 9));

    // 7: obj 1 testValue = 10 → dta cre of 1.
    assertSuc(await req({ typ: 'obj', act: 'upd', id: id(1), rea: realm, dat: { testValue: 10 } }));
    const [s7] = await step(1);
    assert.equal(s7.uty, 'dta');
    assert.deepEqual(Object.keys(s7.obj.cre as object), [id(1)]);
    assert.equal(s7.obj.upd, undefined);
    assert.deepEqual(members(), ids(1, 6, 7, 8, 9));

    // 8: {sty:rea, atr:[]} clears the filter but keeps the 5000 m circle → ful without obj 2.
    assertSuc(await req({ typ: 'sub', act: 'upd', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea', atr: [] } }));
    const [s8] = await step(1);
    assert.equal(s8.uty, 'ful');
    assert.deepEqual(members(), ids(0, 1, 3, 4, 5, 6, 7, 8, 9));

    // 9: del, then update obj 2 (back into the circle) → nothing.
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id: id(2), rea: realm, loc: { lon: lon0 + 0.002, lat } }));
    await step(0);
  });

  it('5.6: sub upd answers suc and then sends one ful push even when the new set is empty ({obj:{cre:{}}})', async () => {
    const realm = await freshRealm();
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'far', rea: realm, loc: { lon: 10, lat: 10 } }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea' });
    const cid = newCid();
    assertSuc((await c.wire.batch([{ typ: 'sub', act: 'upd', id: sid, rea: realm, cid, dat: { typ: 'obj', sty: 'cir', sha: { cx: 50, cy: 50, r: 100 } } }]))[0]);
    const [p] = await pushes.exactly(1, 200);
    assert.deepEqual(p, { typ: 'sub', id: sid, uty: 'ful', obj: { cre: {} } });
    const reply = c.wire.replyOf(cid);
    assert.ok(reply !== undefined);
    assertAfterReply(c.wire, sid, reply);
  });

  it('5.5: an object that stops passing the filter leaves with del; one change gives one push', async () => {
    const realm = await freshRealm();
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 's1', rea: realm, dat: { type: 'scooter' } }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea', atr: ['type="scooter"'], exe: true });
    await pushes.exactly(1, 200);
    assertSuc(await req({ typ: 'obj', act: 'upd', id: 's1', rea: realm, dat: { type: 'car' } }));
    const [, left] = await pushes.exactly(2, 200);
    assert.deepEqual(Object.keys(left.obj.del as object), ['s1']);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'c1', rea: realm, dat: { type: 'car' } }));
    await pushes.exactly(2, 200);
  });

  it('5.2/10: target subscription: the first push holds only the new nearby object; cre on the target twice succeeds', async () => {
    const realm = await freshRealm();
    const target = uniqueId('target');
    assertSuc(await req({ typ: 'obj', act: 'cre', id: target, rea: realm, loc: { lon: 13.4, lat: 52.5 } }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'tar', sta: { id: target, r: 2000 }, atr: [`$id!="${target}"`] });
    await pushes.exactly(0, 200);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: target, rea: realm, loc: { lon: 13.4, lat: 52.5 } }));
    const near = uniqueId('near');
    assertSuc(await req({ typ: 'obj', act: 'cre', id: near, rea: realm, loc: { lon: 13.41, lat: 52.5 } }));
    assertSuc(await req({ typ: 'obj', act: 'cre', id: uniqueId('far'), rea: realm, loc: { lon: 14, lat: 52.5 } }));
    const got = await pushes.atLeast(1, 200);
    await sleep(100);
    assert.deepEqual(Object.keys(got[0].obj.cre as object), [near], 'the first push holds only the object created later');
    assert.deepEqual(sortedKeys(applyObjectPushes(pushes.got)), [near]);
  });

  it('5.5 (Recommendation): the target circle follows the target', async () => {
    const realm = await freshRealm();
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'tgt', rea: realm, loc: { lon: 13.4, lat: 52.5 } }));
    await c.wire.batch([
      { typ: 'obj', act: 'cre', id: 'near', rea: realm, loc: { lon: 13.41, lat: 52.5 } },
      { typ: 'obj', act: 'cre', id: 'far', rea: realm, loc: { lon: 14, lat: 52.5 } },
    ]);
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'tar', sta: { id: 'tgt', r: 2000 }, atr: ['$id!="tgt"'], exe: true });
    await pushes.exactly(1, 200);
    assert.deepEqual(sortedKeys(applyObjectPushes(pushes.got)), ['near']);
    assertSuc(await req({ typ: 'obj', act: 'upd', id: 'tgt', rea: realm, loc: { lon: 14.001, lat: 52.5 } }));
    await pushes.atLeast(2, 200);
    await sleep(100);
    assert.deepEqual(sortedKeys(applyObjectPushes(pushes.got)), ['far']);
  });

  it('5.4/5.9: multiplexing: exactly one exe push within 500 ms, then exactly one delta for one new object (old before new)', async () => {
    const realm = await freshRealm();
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'old-object', rea: realm, loc: { lon: 1, lat: 1 } }));
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea', exe: true });
    await pushes.exactly(1, 500);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'new-object', rea: realm, loc: { lon: 2, lat: 2 } }));
    const [, delta] = await pushes.exactly(2, 300);
    assert.equal(delta.uty, 'dta');
    assert.deepEqual([...applyObjectPushes(pushes.got).keys()], ['old-object', 'new-object']);
  });

  it('5.3/5.4: area subscription: exactly one initial ful push within 300 ms and no more; creates, updates and deletes keep the client set right', async () => {
    const realm = await freshRealm();
    const shape = { sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 100 } };
    assertSuc(await req({ typ: 'are', act: 'cre', id: 'area-1', rea: realm, lab: 'One', ...shape, dat: { k: 1 } }));
    const sid = uniqueId('area-subscription');
    const pushes = c.wire.watch(sid);
    const reply = await subscribe(c.wire, sid, realm, { typ: 'are', sty: 'rea', exe: true });
    const [initial] = await pushes.exactly(1, 300);
    assertAfterReply(c.wire, sid, reply);
    const one = (await req({ typ: 'are', act: 'rea', id: 'area-1', rea: realm })).dat;
    assert.deepEqual(initial, { typ: 'sub', id: sid, uty: 'ful', are: { 'area-1': one } });
    await pushes.exactly(1, 300);
    assertSuc(await req({ typ: 'are', act: 'cre', id: 'area-2', rea: realm, lab: 'Two', sty: 'rec', sha: { x1: 1, y1: 1, x2: 2, y2: 2 } }));
    await pushes.exactly(2, 300);
    assert.deepEqual(sortedKeys(applyAreaPushes(pushes.got)), ['area-1', 'area-2']);
    assertSuc(await req({ typ: 'are', act: 'upd', id: 'area-1', rea: realm, lab: 'One again', ...shape }));
    await pushes.exactly(3, 300);
    assert.equal(applyAreaPushes(pushes.got).get('area-1').lab, 'One again');
    assertSuc(await req({ typ: 'are', act: 'del', id: 'area-2', rea: realm }));
    await pushes.exactly(4, 300);
    assert.deepEqual(sortedKeys(applyAreaPushes(pushes.got)), ['area-1'], 'removals reach the client (Recommendation: always ful)');
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'o', rea: realm, loc: { lon: 13.4, lat: 52.5 } }));
    await pushes.exactly(4, 200);
  });

  it('12.5: sty/sha/atr on an area subscription are not applied: it covers the whole realm', async () => {
    const realm = await freshRealm();
    assertSuc(await req({ typ: 'are', act: 'cre', id: 'here', rea: realm, lab: 'Here', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 100 } }));
    const sid = uniqueId('area-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'are', sty: 'cir', sha: { cx: -70, cy: -30, r: 10 }, atr: ['kind="none"'], exe: true });
    const [p] = await pushes.exactly(1, 300);
    assert.deepEqual(Object.keys(p.are as object), ['here']);
  });

  it('5.1: bad subscription options are refused (4xx) and create nothing', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('object-subscription');
    for (const dat of [
      { typ: 'obj', sty: 'cir' },
      { typ: 'obj', sty: 'cir', sha: { cx: 1, cy: 2, r: -1 } },
      { typ: 'obj', sty: 'rea', atr: ['=='] },
      { typ: 'obj', sty: 'tar' },
    ]) {
      assertClientError(await req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat }));
    }
    assertError(await req({ typ: 'sub', act: 'del', id: sid, rea: realm }), `unknown subscription ${sid}`, 404);
  });

  it('8.1/11#31 (Recommendation): deleting a realm ends its subscriptions silently', async () => {
    const realm = await freshRealm();
    const other = await connectWire(c.url, c.token);
    const sid = uniqueId('object-subscription');
    const pushes = other.watch(sid);
    await subscribe(other, sid, realm, { typ: 'obj', sty: 'rea' });
    assertSuc(await req({ typ: 'rea', act: 'del', id: realm }));
    await sleep(200);
    const sysMessages = other.unsolicited.filter((r) => r.el.typ === 'sys' && r.el.act !== 'aut');
    assert.equal(sysMessages.length, 0, `no sys message announces the end (it would show up as an unknown action): ${JSON.stringify(sysMessages)}`);
    const seen = pushes.got.length;
    await createRealm(c.url, c.token, realm);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'after', rea: realm }));
    await sleep(200);
    assert.equal(pushes.got.length, seen, 'the subscription of the deleted realm is gone');
    await other.close();
  });

  it('5.7: after sub del is acknowledged nothing more is pushed; deleting an unknown id is `unknown subscription <id>`, 404', async () => {
    const realm = await freshRealm();
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea' });
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'x', rea: realm }));
    await pushes.exactly(1, 200);
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id: 'x', rea: realm, lab: 'changed' }));
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'y', rea: realm }));
    await pushes.exactly(1, 200);
    const unknown = uniqueId('never-subscribed');
    assertError(await req({ typ: 'sub', act: 'del', id: unknown, rea: realm }), `unknown subscription ${unknown}`, 404, { typ: 'sub', act: 'del' });
  });

  it('5.5/5.1: pushes reach every matching subscription on every connection, the writer’s own included; ids are per connection', async () => {
    const realm = await freshRealm();
    const other = await connectWire(c.url, c.token);
    const sid = 'object-subscription-shared-id';
    const mine = c.wire.watch(sid);
    const theirs = other.watch(sid);
    await subscribe(c.wire, sid, realm, { typ: 'obj', sty: 'rea' });
    await subscribe(other, sid, realm, { typ: 'obj', sty: 'rea', atr: ['kind="b"'] });
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'a', rea: realm, dat: { kind: 'a' } }));
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'b', rea: realm, dat: { kind: 'b' } }));
    await mine.atLeast(1, 200);
    await sleep(100);
    assert.deepEqual(sortedKeys(applyObjectPushes(mine.got)), ['a', 'b']);
    assert.deepEqual(sortedKeys(applyObjectPushes(theirs.got)), ['b']);
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id: 'b', rea: realm, lab: 'B' }));
    const more = await theirs.atLeast(theirs.got.length + 1, 200);
    assert.ok(more.length >= 2, 'deleting a subscription on one connection leaves the same id on another alone');
    await other.close();
  });

  it('12#6: sub cre naming a missing realm is `unknown realm <id>`, 404; `rea:"sys"` with typ sys is accepted', async () => {
    const realm = uniqueId('nowhere');
    assertError(await req({ typ: 'sub', act: 'cre', id: uniqueId('s'), rea: realm, dat: { typ: 'obj', sty: 'rea' } }), `unknown realm ${realm}`, 404);
    const sid = uniqueId('realm-subscription-');
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: 'sys', dat: { typ: 'sys', sty: 'rea' } }));
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: 'sys' }));
  });
});
