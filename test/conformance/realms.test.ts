/**
 * Conformance (hivekit-compat.md 4.1, 5.2, 5.3, 8.1, 8.2): realm actions over WebSocket and
 * HTTP, realm-event subscriptions with exact counts, realm-data pushes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertClientError,
  assertError,
  assertSuc,
  connectWire,
  httpRequest,
  uniqueId,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: realms (compat 4.1, 8)', () => {
  const c = conformanceSuite('realms');
  const { req } = c;
  const http = (m: Msg): Promise<Json> => httpRequest(c.url, c.token, m);

  it('4.1/8.1: rea of a missing realm fails with exactly `unknown realm <id>`, 404', async () => {
    const id = uniqueId('missing-realm');
    assertError(await req({ typ: 'rea', act: 'rea', id }), `unknown realm ${id}`, 404, { typ: 'rea', act: 'rea' });
  });

  it('4.1: cre with lab and nested dat; rea gives exactly {id, lab, dat}; lis holds it; cre again is `realm with id <id> already exists`, 409', async () => {
    const id = uniqueId('realm-a');
    const dat = { address: { street: 'Main Street', number: 12 }, amount: 42 };
    assertSuc(await req({ typ: 'rea', act: 'cre', id, lab: 'Realm A', dat }));
    const r = await req({ typ: 'rea', act: 'rea', id });
    assertSuc(r);
    assert.deepEqual(r.dat, { id, lab: 'Realm A', dat });
    const list = await req({ typ: 'rea', act: 'lis' });
    assertSuc(list);
    assert.deepEqual(list.dat[id], { id, lab: 'Realm A', dat });
    assert.deepEqual(list.dat[c.realm]?.id, c.realm);
    assertError(await req({ typ: 'rea', act: 'cre', id, lab: 'Again' }), `realm with id ${id} already exists`, 409, { typ: 'rea', act: 'cre' });
    assert.equal((await req({ typ: 'rea', act: 'rea', id })).dat.lab, 'Realm A');
  });

  it('4.1: a realm created without lab or dat reads with dat present', async () => {
    const id = uniqueId('realm-bare');
    assertSuc(await req({ typ: 'rea', act: 'cre', id }));
    const r = await req({ typ: 'rea', act: 'rea', id });
    assert.equal(r.dat.id, id);
    assert.deepEqual(r.dat.dat, {});
  });

  it('4.1/8.1: upd with the whole data map (null removes a key); upd with only lab leaves the data alone', async () => {
    const id = uniqueId('realm-upd');
    assertSuc(await req({ typ: 'rea', act: 'cre', id, lab: 'L', dat: { some: 'value' } }));
    assertSuc(await req({ typ: 'rea', act: 'upd', id, dat: { some: 'value', amount: 42 } }));
    assertSuc(await req({ typ: 'rea', act: 'upd', id, dat: { some: 'value', amount: 42, firstname: 'Joe' } }));
    assertSuc(await req({ typ: 'rea', act: 'upd', id, dat: { some: 'value', amount: 42, firstname: null } }));
    assert.deepEqual((await req({ typ: 'rea', act: 'rea', id })).dat, { id, lab: 'L', dat: { some: 'value', amount: 42 } });
    assertSuc(await req({ typ: 'rea', act: 'upd', id, lab: 'New label' }));
    assert.deepEqual((await req({ typ: 'rea', act: 'rea', id })).dat, { id, lab: 'New label', dat: { some: 'value', amount: 42 } });
  });

  it('4.1 (Recommendation): upd and del of a missing realm fail with `unknown realm <id>`, 404; the id `sys` is reserved', async () => {
    const id = uniqueId('realm-none');
    assertError(await req({ typ: 'rea', act: 'upd', id, lab: 'x' }), `unknown realm ${id}`, 404);
    assertError(await req({ typ: 'rea', act: 'del', id }), `unknown realm ${id}`, 404);
    assertClientError(await req({ typ: 'rea', act: 'cre', id: 'sys' }));
  });

  it('4.1: del removes the realm and its objects', async () => {
    const id = uniqueId('realm-del');
    assertSuc(await req({ typ: 'rea', act: 'cre', id }));
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'o1', rea: id }));
    assertSuc(await req({ typ: 'rea', act: 'del', id }));
    assertError(await req({ typ: 'rea', act: 'rea', id }), `unknown realm ${id}`, 404);
    assert.equal((await req({ typ: 'rea', act: 'lis' })).dat[id], undefined);
    assertError(await req({ typ: 'obj', act: 'rea', id: 'o1', rea: id }), `unknown realm ${id}`, 404);
  });

  it('8.1: the realm-event sequence of test/realm-test.js, with exact counts after 200 ms each', async () => {
    const sid = uniqueId('realm-subscription-');
    const events = c.wire.watch(sid);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: 'sys', dat: { typ: 'sys', sty: 'rea' } }));
    await events.exactly(0, 200);
    const a = uniqueId('realm-ev-a');
    const b = uniqueId('realm-ev-b');
    assertError(await req({ typ: 'rea', act: 'rea', id: a }), `unknown realm ${a}`, 404);
    const event = (id: string, act: string) => ({ typ: 'sub', id: sid, uty: 'ful', dat: { typ: 'rea', id, act } });

    assertSuc(await req({ typ: 'rea', act: 'cre', id: a, lab: 'Realm A' }));
    assert.deepEqual(await events.exactly(1, 200), [event(a, 'cre')]);
    assertSuc(await req({ typ: 'rea', act: 'cre', id: b, lab: 'Realm B' }));
    assert.deepEqual((await events.exactly(2, 200))[1], event(b, 'cre'));
    const list = await req({ typ: 'rea', act: 'lis' });
    assert.equal(list.dat[a].lab, 'Realm A');
    assert.equal(list.dat[b].lab, 'Realm B');
    assertSuc(await req({ typ: 'rea', act: 'upd', id: b, dat: { firstname: 'Joe' } }));
    assertSuc(await req({ typ: 'rea', act: 'upd', id: b, dat: { firstname: 'Joe', amount: 42 } }));
    const afterUpdates = await events.exactly(4, 200);
    assert.deepEqual(afterUpdates.slice(2), [event(b, 'upd'), event(b, 'upd')]);
    assertSuc(await req({ typ: 'rea', act: 'upd', id: b, dat: { firstname: null, amount: 42 } }));
    assert.deepEqual((await events.exactly(5, 200))[4], event(b, 'upd'));
    assertSuc(await req({ typ: 'rea', act: 'del', id: b }));
    assert.deepEqual((await events.exactly(6, 200))[5], event(b, 'del'));
    assert.equal((await req({ typ: 'rea', act: 'lis' })).dat[b], undefined);
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: 'sys' }));
    assertSuc(await req({ typ: 'rea', act: 'del', id: a }));
    await events.exactly(6, 200);
  });

  it('8.1: object and area writes produce no realm event; realm events reach every realm-event subscription of the tenant', async () => {
    const other = await connectWire(c.url, c.token);
    const s1 = uniqueId('realm-subscription-');
    const s2 = uniqueId('realm-subscription-');
    assertSuc(await req({ typ: 'sub', act: 'cre', id: s1, rea: 'sys', dat: { typ: 'sys', sty: 'rea' } }));
    assertSuc(await other.request({ typ: 'sub', act: 'cre', id: s2, rea: 'sys', dat: { typ: 'sys', sty: 'rea' } }));
    const w1 = c.wire.watch(s1);
    const w2 = other.watch(s2);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: uniqueId('o'), rea: c.realm, loc: { lon: 1, lat: 1 } }));
    assertSuc(await req({ typ: 'are', act: 'cre', id: uniqueId('a'), rea: c.realm, sty: 'cir', sha: { cx: 1, cy: 1, r: 10 } }));
    await w1.exactly(0, 200);
    assert.equal(w2.got.length, 0);
    const id = uniqueId('realm-both');
    assertSuc(await req({ typ: 'rea', act: 'cre', id }));
    await w1.exactly(1, 200);
    assert.deepEqual(w2.got, [{ typ: 'sub', id: s2, uty: 'ful', dat: { typ: 'rea', id, act: 'cre' } }]);
    assertSuc(await req({ typ: 'sub', act: 'del', id: s1, rea: 'sys' }));
    await other.close();
  });

  it('5.2/5.3/8.1: a realm-data subscription gets one ful push {rea:{lab, dat}} per realm update, none for object writes', async () => {
    const id = uniqueId('realm-data');
    assertSuc(await req({ typ: 'rea', act: 'cre', id, lab: 'Data', dat: { a: 1 } }));
    const sid = `realm-data-${id}-${uniqueId('s')}`;
    const pushes = c.wire.watch(sid);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: id, dat: { typ: 'rea', sty: 'rea' } }));
    await pushes.exactly(0, 200);
    assertSuc(await req({ typ: 'obj', act: 'cre', id: 'o', rea: id, loc: { lon: 1, lat: 1 } }));
    await pushes.exactly(0, 200);
    assertSuc(await req({ typ: 'rea', act: 'upd', id, dat: { a: 1, b: 2 } }));
    const [p] = await pushes.exactly(1, 200);
    assert.equal(p.typ, 'sub');
    assert.equal(p.id, sid);
    assert.equal(p.uty, 'ful');
    assert.equal(p.rea.lab, 'Data');
    assert.deepEqual(p.rea.dat, { a: 1, b: 2 });
    if (p.rea.id !== undefined) assert.equal(p.rea.id, id);
    for (const key of ['obj', 'are', 'tsk', 'ins', 'log', 'dat']) assert.equal(p[key], undefined, `realm-data push must not carry ${key}`);
    assertSuc(await req({ typ: 'rea', act: 'upd', id, lab: 'Relabelled' }));
    const second = await pushes.exactly(2, 200);
    assert.equal(second[1].rea.lab, 'Relabelled');
    assert.deepEqual(second[1].rea.dat, { a: 1, b: 2 }, 'a realm-data push always carries the full data map');
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: id }));
  });

  it('8.2: the realm sequence of test/realm-http-test.js over HTTP', async () => {
    const a = uniqueId('http-realm-a');
    const b = uniqueId('http-realm-b');
    assertError(await http({ typ: 'rea', act: 'rea', id: a }), `unknown realm ${a}`, 404);
    assertSuc(await http({ typ: 'rea', act: 'cre', id: a, lab: 'Realm A', dat: { some: 'value' } }));
    const ra = await http({ typ: 'rea', act: 'rea', id: a });
    assert.deepEqual(ra.dat, { id: a, lab: 'Realm A', dat: { some: 'value' } });
    assertSuc(await http({ typ: 'rea', act: 'cre', id: b, lab: 'Realm B' }));
    let list = await http({ typ: 'rea', act: 'lis' });
    assert.equal(list.dat[a].lab, 'Realm A');
    assert.equal(list.dat[b].lab, 'Realm B');
    const address = { street: 'Main Street', number: 12 };
    assertSuc(await http({ typ: 'rea', act: 'upd', id: b, dat: { amount: 42, firstname: 'Joe' } }));
    assertSuc(await http({ typ: 'rea', act: 'upd', id: b, dat: { amount: 42, firstname: 'Joe', address } }));
    assert.deepEqual((await http({ typ: 'rea', act: 'rea', id: b })).dat.dat, { amount: 42, firstname: 'Joe', address });
    assertSuc(await http({ typ: 'rea', act: 'upd', id: b, dat: { amount: 42, firstname: null, address } }));
    assert.deepEqual((await http({ typ: 'rea', act: 'rea', id: b })).dat.dat, { amount: 42, address });
    assertSuc(await http({ typ: 'rea', act: 'del', id: b }));
    list = await http({ typ: 'rea', act: 'lis' });
    assert.equal(list.dat[b], undefined);
    assert.equal(list.dat[a].id, a);
  });
});
