/**
 * Conformance (hivekit-compat.md 3): framing, cid correlation, exactly one reply per cid,
 * tolerance of unknown keys, `set` without cid, cid-less errors, heartbeat, message-level
 * garbage.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  heartbeatCid,
  newCid,
  sleep,
  uniqueId,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: message envelope (compat 3)', () => {
  const c = conformanceSuite('envelope');

  it('3.4: the client cid is a 21-character URL-safe id; a heartbeat cid is heartbeat-<random>', () => {
    for (let i = 0; i < 20; i++) assert.match(newCid(), /^[A-Za-z0-9_-]{21}$/);
    assert.match(heartbeatCid(), /^heartbeat-[0-9a-f]+$/);
  });

  it('3.1/3.4: several messages of mixed types in one frame each get exactly one reply echoing cid, typ and act', async () => {
    const id = uniqueId('obj');
    const area = uniqueId('area');
    const messages = [
      { typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'A', loc: { lon: 13.4, lat: 52.5 } },
      { typ: 'are', act: 'cre', id: area, rea: c.realm, lab: 'Area', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 100 } },
      { typ: 'obj', act: 'lis', rea: c.realm },
      { typ: 'are', act: 'lis', rea: c.realm },
      { typ: 'rea', act: 'rea', id: c.realm },
      { typ: 'sys', act: 'hbt', cid: heartbeatCid() },
    ].map((m) => ({ cid: newCid(), ...m }));
    const replies = await c.wire.batch(messages);
    replies.forEach((r, i) => {
      assertSuc(r);
      assert.equal(r.cid, messages[i]?.cid);
      assert.equal(r.typ, messages[i]?.typ);
      assert.equal(r.act, messages[i]?.act);
    });
    await sleep(200);
    for (const m of messages) assert.equal(c.wire.replies.get(m.cid)?.length, 1, `cid ${m.cid} must get exactly one reply`);
  });

  it('3.4: fifty messages in one frame get fifty replies, one per cid', async () => {
    const messages = Array.from({ length: 50 }, (_, i) => ({ typ: 'obj', act: 'cre', id: uniqueId(`many-${i}`), rea: c.realm, cid: newCid() }));
    const replies = await c.wire.batch(messages);
    assert.equal(replies.length, 50);
    for (const r of replies) assertSuc(r);
    await sleep(100);
    for (const m of messages) assert.equal(c.wire.replies.get(m.cid)?.length, 1);
  });

  it('3.6: the heartbeat is answered exactly [{typ:sys, act:hbt, res:suc, cid}]', async () => {
    const cid = heartbeatCid();
    const [reply] = await c.wire.batch([{ typ: 'sys', act: 'hbt', cid }]);
    assert.deepEqual(reply, { typ: 'sys', act: 'hbt', res: 'suc', cid });
  });

  it('3.7: tolerates tds, loc `time` (string), loc key `undefined` on object writes', async () => {
    const id = uniqueId('tolerant');
    const time = '2026-01-02T03:04:05.678Z';
    assertSuc(
      await c.wire.request({
        typ: 'obj',
        act: 'cre',
        id,
        rea: c.realm,
        tds: [],
        loc: { lon: 13.404954, lat: 52.520008, time, undefined: 'x' },
      }),
    );
    const read = await c.wire.request({ typ: 'obj', act: 'rea', id, rea: c.realm });
    assertSuc(read);
    assert.equal(read.dat.loc.lon, 13.404954);
    assert.equal(read.dat.loc.lat, 52.520008);
    assert.equal(Date.parse(read.dat.loc.tim as string), Date.parse(time), 'the location time sent as `time` is the fix time');
    assert.equal(read.dat.loc.undefined, undefined);
  });

  it('3.7: tolerates `exe` and application options in subscription dat, `maxObjectResults` in search dat, and dat:{} on obj lis', async () => {
    const sid = uniqueId('object-subscription');
    assertSuc(await c.wire.request({ typ: 'sub', act: 'cre', id: sid, rea: c.realm, dat: { typ: 'obj', sty: 'rea', exe: false, myAppOption: 42 } }));
    assertSuc(await c.wire.request({ typ: 'sub', act: 'del', id: sid, rea: c.realm }));
    assertSuc(await c.wire.request({ typ: 'rea', act: 'sea', rea: c.realm, dat: { val: 'x', fie: ['id'], maxObjectResults: 5, maxAreaResults: 5, other: true } }));
    const list = await c.wire.request({ typ: 'obj', act: 'lis', rea: c.realm, dat: {} });
    assertSuc(list);
    assert.equal(typeof list.dat, 'object');
  });

  it('3.5/4.2: a `set` without cid is applied and gets no reply', async () => {
    const id = uniqueId('set');
    const framesBefore = c.wire.frameCount;
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, lab: 'set label', loc: { lon: 1, lat: 2 } }]);
    await sleep(300);
    assert.equal(c.wire.frameCount, framesBefore, `a successful cid-less message gets no reply (compat 3.5, 3.8): ${JSON.stringify(c.wire.unsolicited.slice(-1))}`);
    const read = await c.wire.request({ typ: 'obj', act: 'rea', id, rea: c.realm });
    assert.equal(read.dat.lab, 'set label');
    assert.equal(read.dat.loc.lon, 1);
  });

  it('3.5: a failed `set` is reported cid-less as {typ:obj, act:set, res:err, err, erc}', async () => {
    const realm = uniqueId('no-such-realm');
    const before = c.wire.unsolicited.length;
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id: 'x', rea: realm, loc: { lon: 1, lat: 2 } }]);
    await c.wire.until(() => c.wire.unsolicited.length > before, 2000, 'the cid-less set error');
    const el = c.wire.unsolicited[before]?.el;
    assert.equal(el.cid, undefined);
    assertError(el, `unknown realm ${realm}`, 404, { typ: 'obj', act: 'set' });
  });

  it('3.5: a `set` with a bad location is reported cid-less with erc 400 and writes nothing', async () => {
    const id = uniqueId('bad-set');
    const before = c.wire.unsolicited.length;
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 13, lat: 200 } }]);
    await c.wire.until(() => c.wire.unsolicited.length > before, 2000, 'the cid-less set error');
    const el = c.wire.unsolicited[before]?.el;
    assert.equal(el.typ, 'obj');
    assert.equal(el.act, 'set');
    assert.equal(el.res, 'err');
    assert.equal(el.erc, 400);
    assert.equal(typeof el.err, 'string');
    assertError(await c.wire.request({ typ: 'obj', act: 'rea', id, rea: c.realm }), `unknown object ${id}`, 404);
  });

  it('3.5/11#30: a frame that is not JSON gets one cid-less error (erc 400, typ not sys) and the connection stays', async () => {
    const before = c.wire.unsolicited.length;
    c.wire.sendText('{this is not json');
    await c.wire.until(() => c.wire.unsolicited.length > before, 2000, 'the message-level error');
    const el = c.wire.unsolicited[before]?.el;
    assert.equal(el.res, 'err');
    assert.equal(el.erc, 400);
    assert.equal(typeof el.err, 'string');
    assert.notEqual(el.typ, 'sys', 'cid-less errors must not use typ sys (compat 3.5, 11#30)');
    assert.equal(c.wire.isClosed, false);
    const cid = heartbeatCid();
    assert.equal((await c.wire.batch([{ typ: 'sys', act: 'hbt', cid }]))[0].res, 'suc');
  });

  it('3.1/11#30: a JSON frame that is not an array gets one cid-less error (erc 400) and the connection stays', async () => {
    const before = c.wire.unsolicited.length;
    c.wire.sendText(JSON.stringify({ typ: 'obj', act: 'lis', rea: c.realm }));
    await c.wire.until(() => c.wire.unsolicited.length > before, 2000, 'the message-level error');
    const el = c.wire.unsolicited[before]?.el;
    assert.equal(el.res, 'err');
    assert.equal(el.erc, 400);
    assert.notEqual(el.typ, 'sys');
    assertSuc(await c.wire.request({ typ: 'obj', act: 'lis', rea: c.realm }));
  });

  it('3.3: an unknown typ or act gets its own error reply (4xx) with its cid; the others in the frame succeed', async () => {
    const messages = [
      { typ: 'zzz', act: 'lis', rea: c.realm, cid: newCid() },
      { typ: 'obj', act: 'zzz', rea: c.realm, cid: newCid() },
      { typ: 'obj', act: 'lis', rea: c.realm, cid: newCid() },
    ];
    const [a, b, ok] = await c.wire.batch(messages);
    for (const [reply, m] of [
      [a, messages[0]],
      [b, messages[1]],
    ] as const) {
      assert.equal(reply.res, 'err');
      assert.equal(reply.cid, m?.cid);
      assert.ok(reply.erc >= 400 && reply.erc < 500, JSON.stringify(reply));
      assert.equal(typeof reply.err, 'string');
    }
    assertSuc(ok);
  });

  it('11#7: `rid` is accepted as a locus extension and echoed next to cid', async () => {
    const cid = newCid();
    const [reply] = await c.wire.batch([{ typ: 'obj', act: 'lis', rea: c.realm, cid, rid: 'my-rid' }]);
    assertSuc(reply);
    assert.equal(reply.cid, cid);
    assert.equal(reply.rid, 'my-rid');
  });

  it('3.2: an error reply echoes cid with top-level err (text) and erc (number)', async () => {
    const realm = uniqueId('missing');
    const cid = newCid();
    const [reply] = await c.wire.batch([{ typ: 'obj', act: 'lis', rea: realm, cid }]);
    assertError(reply, `unknown realm ${realm}`, 404, { typ: 'obj', act: 'lis', cid });
  });
});
