/**
 * Conformance (hivekit-compat.md 4.9, 5.3): the official client's test/instruction-test.js step
 * by step, as its messages reach the wire (src/instruction-handler.js): over WebSocket with the
 * `ins` subscription and its 500 ms waits, and the same actions over HTTP (`/v1/http`,
 * `/api/v1`). Then what the client's test leaves open: `log` subscriptions, `sus`, `ins`
 * subscription rights, errors that change nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  connectWire,
  createRealm,
  httpRequest,
  sleep,
  signToken,
  uniqueId,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

/** The client's instruction A (test/instruction-test.js), indentation and all. */
const instructionA = `
            when
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")
        `;

const withSyntaxError = `
            when blablub
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")
        `;

/** Instructions B and C as the client's test writes them (a random threshold). */
const everyTenMinutes = (): string => `
        every 10 min
        when
            object(type="scooter", charge<${Math.random()})
        then
            set("needsCharging", "true")
        until
            set("needsCharging", "false")
    `;

const updatedB = `
            every 10 min
            when
                object(type="scooter", charge<0.2)
            then
                set("needsCharging", "true")
            until
                set("needsCharging", "false")`;

/**
 * What `realm.instruction.create(id, {label, instructionString, data})` sends: `ins` always
 * (absent when undefined), `lab` and `dat` only when truthy.
 */
function setMessage(act: 'cre' | 'upd', id: string, realm: string, options: { label?: string; instructionString?: string; data?: Json }): Msg {
  const msg: Msg = { typ: 'ins', act, id, rea: realm };
  if (options.instructionString !== undefined) msg.ins = options.instructionString;
  if (options.label) msg.lab = options.label;
  if (options.data) msg.dat = options.data;
  return msg;
}

/** The data the client's subscription holds after its pushes: the last `ful` map. */
function lastMap(w: HivekitWire, sid: string): Json {
  const pushes = w.pushesOf(sid);
  const last = pushes.at(-1);
  assert.ok(last !== undefined, 'no push yet');
  assert.equal(last.uty, 'ful', 'ins pushes are full maps (so that deletions show)');
  return last.ins;
}

const sortedIds = (map: Json): string[] => Object.keys(map as object).sort((a, b) => (a > b ? 1 : -1));

describe('conformance: instructions (compat 4.9), the client test/instruction-test.js', () => {
  const c = conformanceSuite('instructions');
  const { req } = c;

  it('instruction-test.js over WebSocket: create, 409, syntax error, list, subscription after 500 ms, update with delta, delete', async () => {
    // creates realm A
    const realmA = uniqueId('realm-a');
    assertSuc(await req({ typ: 'rea', act: 'cre', id: realmA, lab: 'label for realm a', dat: { some: 'value' } }));
    // subscribes to all instructions
    const sid = uniqueId('instruction-subscription');
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: realmA, dat: { typ: 'ins', sty: 'rea' } }));

    // creates instruction A and retrieves it
    const idA = uniqueId('instruction-a');
    assertSuc(await req(setMessage('cre', idA, realmA, { label: 'instruction A Label', instructionString: instructionA, data: { some: 'Value' } })));
    const readA = await req({ typ: 'ins', act: 'rea', id: idA, rea: realmA });
    assertSuc(readA);
    assert.equal((readA.dat.ins as string).trim(), instructionA.trim());
    assert.deepEqual(readA.dat.dat, { some: 'Value' });
    assert.equal(readA.dat.lab, 'instruction A Label');
    assert.deepEqual(Object.keys(readA.dat as object).sort(), ['dat', 'ins', 'lab']);

    // fails to create instruction A again
    const again = await req(setMessage('cre', idA, realmA, { label: 'instruction A Label', instructionString: instructionA, data: { some: 'Value' } }));
    assertError(again, `instruction with id ${idA} already exists`, 409, { typ: 'ins', act: 'cre' });

    // fails to create an instruction with a syntax error: the client's test passes the label
    // where its options belong, so the message carries no `ins`, `lab` or `dat` at all.
    const idB = uniqueId('instruction-b');
    const missing = await req({ typ: 'ins', act: 'cre', id: idB, rea: realmA });
    assert.equal(missing.res, 'err', JSON.stringify(missing));
    assert.ok((missing.err as string).startsWith('Error: Incorrect Syntax.'), missing.err);
    // And the source itself, sent properly: refused, saying where and what.
    const bad = await req(setMessage('cre', idB, realmA, { label: 'instruction B Label', instructionString: withSyntaxError, data: { some: 'Value' } }));
    assert.equal(bad.res, 'err');
    assert.equal(bad.erc, 400);
    assert.match(bad.err as string, /^Error: Incorrect Syntax\. Line 3, column 17: expected/);

    // creates instructions b and c
    const idC = uniqueId('instruction-c');
    assertSuc(await req(setMessage('cre', idB, realmA, { label: 'instruction B Label', instructionString: everyTenMinutes(), data: { letter: 'B' } })));
    assertSuc(await req(setMessage('cre', idC, realmA, { label: 'instruction C Label', instructionString: everyTenMinutes(), data: { letter: 'C' } })));

    // lists all instructions
    const list = await req({ typ: 'ins', act: 'lis', rea: realmA });
    assertSuc(list);
    assert.deepEqual(list.dat, {
      [idA]: { id: idA, lab: 'instruction A Label', dat: { some: 'Value' } },
      [idB]: { id: idB, lab: 'instruction B Label', dat: { letter: 'B' } },
      [idC]: { id: idC, lab: 'instruction C Label', dat: { letter: 'C' } },
    });

    // waits and receives subscription update
    await sleep(500);
    assert.deepEqual(sortedIds(lastMap(c.wire, sid)), [idA, idB, idC].sort((a, b) => (a > b ? 1 : -1)));
    assert.deepEqual(lastMap(c.wire, sid)[idA], { id: idA, lab: 'instruction A Label', dat: { some: 'Value' } });

    // updates instruction b data with delta
    assertSuc(await req(setMessage('upd', idB, realmA, { label: 'New Label', instructionString: updatedB, data: { charge: 0.5 } })));
    const readB = await req({ typ: 'ins', act: 'rea', id: idB, rea: realmA });
    assert.equal((readB.dat.ins as string).trim(), updatedB.trim());
    assert.deepEqual(readB.dat.dat, { letter: 'B', charge: 0.5 });
    assert.equal(readB.dat.lab, 'New Label');

    // waits and receives subscription update
    await sleep(500);
    assert.equal(lastMap(c.wire, sid)[idB].dat.charge, 0.5);

    // deletes instruction b
    assertSuc(await req({ typ: 'ins', act: 'del', id: idB, rea: realmA }));
    const after = await req({ typ: 'ins', act: 'lis', rea: realmA });
    assert.equal(typeof after.dat[idA], 'object');
    assert.equal(typeof after.dat[idB], 'undefined');

    // waits and receives subscription update
    await sleep(500);
    assert.deepEqual(sortedIds(lastMap(c.wire, sid)), [idA, idC].sort((a, b) => (a > b ? 1 : -1)));
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: realmA }));
  });

  it('4.9: the same actions over HTTP (/v1/http and /api/v1)', async () => {
    for (const path of ['/v1/http', '/api/v1']) {
      const realm = uniqueId('ins-http');
      await createRealm(c.url, c.token, realm);
      const send = (m: Msg): Promise<Json> => httpRequest(c.url, c.token, m, path);
      const id = uniqueId('instruction-a');
      assertSuc(await send(setMessage('cre', id, realm, { label: 'instruction A Label', instructionString: instructionA, data: { some: 'Value' } })));
      assertError(await send(setMessage('cre', id, realm, { instructionString: instructionA })), `instruction with id ${id} already exists`, 409);
      const missing = await send({ typ: 'ins', act: 'cre', id: uniqueId('b'), rea: realm });
      assert.ok((missing.err as string).startsWith('Error: Incorrect Syntax.'), missing.err);
      const read = await send({ typ: 'ins', act: 'rea', id, rea: realm });
      assert.deepEqual(read.dat, { ins: instructionA, lab: 'instruction A Label', dat: { some: 'Value' } });
      assertSuc(await send(setMessage('upd', id, realm, { data: { charge: 0.5 } })));
      assert.deepEqual((await send({ typ: 'ins', act: 'lis', rea: realm })).dat, { [id]: { id, lab: 'instruction A Label', dat: { some: 'Value', charge: 0.5 } } });
      assertSuc(await send({ typ: 'ins', act: 'del', id, rea: realm }));
      assertError(await send({ typ: 'ins', act: 'rea', id, rea: realm }), `unknown instruction ${id}`, 404);
      assertError(await send({ typ: 'ins', act: 'del', id, rea: realm }), `unknown instruction ${id}`, 404);
      assertError(await send(setMessage('upd', id, realm, { label: 'x' })), `unknown instruction ${id}`, 404);
      assert.deepEqual((await send({ typ: 'ins', act: 'lis', rea: realm })).dat, {});
    }
  });

  it('4.9: a refused create or update changes nothing and pushes nothing', async () => {
    const realm = uniqueId('ins-bad');
    await createRealm(c.url, c.token, realm);
    const sid = uniqueId('instruction-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'ins', sty: 'rea' } }));
    const id = uniqueId('ins');
    assertSuc(await req(setMessage('cre', id, realm, { label: 'L', instructionString: instructionA, data: { a: 1 } })));
    await pushes.exactly(1, 200);
    const before = await req({ typ: 'ins', act: 'rea', id, rea: realm });
    for (const m of [
      setMessage('upd', id, realm, { label: 'X', instructionString: withSyntaxError, data: { b: 2 } }),
      { ...setMessage('upd', id, realm, { instructionString: instructionA }), lab: 12 },
      { ...setMessage('upd', id, realm, { instructionString: instructionA }), dat: 'x' },
      { ...setMessage('upd', id, realm, { label: 'X' }), ins: 42 },
      setMessage('cre', uniqueId('other'), realm, { instructionString: 'every 10 lightyears when object() then delete()' }),
      { ...setMessage('cre', '', realm, { instructionString: instructionA }) },
    ]) {
      const reply = await req(m);
      assert.equal(reply.res, 'err', JSON.stringify(reply));
      assert.equal(reply.erc, 400, JSON.stringify(reply));
    }
    assert.deepEqual((await req({ typ: 'ins', act: 'rea', id, rea: realm })).dat, before.dat);
    assert.deepEqual(Object.keys((await req({ typ: 'ins', act: 'lis', rea: realm })).dat as object), [id]);
    await pushes.exactly(1, 300);
    assertSuc(await req({ typ: 'sub', act: 'del', id: sid, rea: realm }));
  });

  it('5.3: an ins subscription with exe gets the current map once, in a later write than the reply; log subscriptions are accepted', async () => {
    const realm = uniqueId('ins-exe');
    await createRealm(c.url, c.token, realm);
    const empty = uniqueId('instruction-subscription');
    const emptyPushes = c.wire.watch(empty);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: empty, rea: realm, dat: { typ: 'ins', sty: 'rea', exe: true } }));
    const [first] = await emptyPushes.exactly(1, 500);
    assert.deepEqual(first, { typ: 'sub', id: empty, uty: 'ful', ins: {} });
    const id = uniqueId('ins');
    assertSuc(await req(setMessage('cre', id, realm, { instructionString: instructionA })));
    const [, second] = await emptyPushes.exactly(2, 300);
    assert.deepEqual(second.ins, { [id]: { id, dat: {} } }, 'no lab when none was given');

    const log = uniqueId('instruction-log-subscription');
    const logPushes = c.wire.watch(log);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: log, rea: realm, dat: { typ: 'log', sty: 'rea' } }));
    await logPushes.exactly(0, 300);
    const logExe = uniqueId('instruction-log-subscription');
    const logExePushes = c.wire.watch(logExe);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: logExe, rea: realm, dat: { typ: 'log', sty: 'rea', exe: true } }));
    const [initial] = await logExePushes.exactly(1, 300);
    assert.equal(initial.uty, 'ful');
    assert.ok(Array.isArray(initial.log), JSON.stringify(initial));
    for (const sub of [empty, log, logExe]) assertSuc(await req({ typ: 'sub', act: 'del', id: sub, rea: realm }));
  });

  it('rights: a per token without writes on every id cannot create, change or delete; reads see only their ids', async () => {
    const realm = uniqueId('ins-per');
    await createRealm(c.url, c.token, realm);
    const shown = uniqueId('public');
    const hidden = uniqueId('secret');
    assertSuc(await req(setMessage('cre', shown, realm, { instructionString: instructionA })));
    assertSuc(await req(setMessage('cre', hidden, realm, { instructionString: instructionA })));
    const partial = await signToken({ sub: 'partial' }, { claims: { per: { [realm]: { 'public-*': 'CRUD' } } } });
    const w = await connectWire(c.url, partial);
    try {
      const created = await w.request(setMessage('cre', uniqueId('public'), realm, { instructionString: instructionA }));
      assertError(created, /do not grant C on every id of realm/, 403);
      assertError(await w.request(setMessage('upd', shown, realm, { label: 'x' })), /do not grant U on every id/, 403);
      assertError(await w.request({ typ: 'ins', act: 'del', id: shown, rea: realm }), /do not grant D on every id/, 403);
      assertSuc(await w.request({ typ: 'ins', act: 'rea', id: shown, rea: realm }));
      assertError(await w.request({ typ: 'ins', act: 'rea', id: hidden, rea: realm }), /do not grant R on/, 403);
      assert.deepEqual(Object.keys((await w.request({ typ: 'ins', act: 'lis', rea: realm })).dat as object), [shown]);
      const sid = uniqueId('instruction-subscription');
      const pushes = w.watch(sid);
      assertSuc(await w.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'ins', exe: true } }));
      const [initial] = await pushes.exactly(1, 300);
      assert.deepEqual(Object.keys(initial.ins as object), [shown]);
      assertSuc(await w.request({ typ: 'sub', act: 'del', id: sid, rea: realm }));
    } finally {
      await w.close();
    }
    const full = await signToken({ sub: 'full' }, { claims: { per: { [realm]: { '*': 'CRUD' } } } });
    const fw = await connectWire(c.url, full);
    try {
      assertSuc(await fw.request(setMessage('cre', uniqueId('any'), realm, { instructionString: instructionA })));
    } finally {
      await fw.close();
    }
  });
});
