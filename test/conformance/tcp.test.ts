/**
 * Conformance (hivekit-compat.md 3, 1.2 on the locus TCP framing of decisions.md): the same
 * envelope on raw TCP, one JSON array per line, the first line `Bearer <token>`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  heartbeatCid,
  locWithoutTime,
  newCid,
  openTcp,
  signToken,
  sleep,
  uniqueId,
  zeroLoc,
  type HivekitWire,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: the v1 envelope over TCP lines', () => {
  const c = conformanceSuite('tcp', { wire: false });

  async function signedIn(): Promise<HivekitWire> {
    const wire = await openTcp(c.tcpPort);
    await wire.signIn(c.token);
    return wire;
  }

  it('1.2: the auth line gets the exact success line without cid; a bad signature gets the failure line and the connection stays', async () => {
    const wire = await openTcp(c.tcpPort);
    const bad = await wire.authenticate(await signToken({ sub: 'tcp' }, { secret: 'nope' }));
    assert.deepEqual(bad.el, { typ: 'sys', act: 'aut', res: 'err', err: 'signature is invalid', erc: 401 });
    await sleep(100);
    assert.equal(wire.isClosed, false);
    const ok = await wire.authenticate(c.token);
    assert.deepEqual(Object.keys(ok.el as object).sort(), ['act', 'dat', 'res', 'typ']);
    assert.equal(ok.el.res, 'suc');
    assert.ok((ok.el.dat.version as string).length > 0);
    assert.ok((ok.el.dat.buildDate as string).length > 0);
    await wire.close();
  });

  it('3/4.2: several messages on one line, replies by cid; set without cid gets no reply; rea gives the zero-filled record', async () => {
    const wire = await signedIn();
    const id = uniqueId('tcp-obj');
    const [cre, hbt] = await wire.batch([
      { typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'TCP', loc: { lon: 13.4, lat: 52.5 } },
      { typ: 'sys', act: 'hbt', cid: heartbeatCid() },
    ]);
    assertSuc(cre);
    assertSuc(hbt);
    const before = wire.frameCount;
    wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, dat: { speed: 'fast' } }]);
    await sleep(200);
    assert.equal(wire.frameCount, before, 'a successful set gets no reply');
    const rec = await wire.request({ typ: 'obj', act: 'rea', id, rea: c.realm });
    assertSuc(rec);
    assert.deepEqual(Object.keys(rec.dat as object).sort(), ['cst', 'dat', 'id', 'lab', 'loc']);
    assert.deepEqual(locWithoutTime(rec.dat.loc), zeroLoc({ lon: 13.4, lat: 52.5 }));
    assert.deepEqual(rec.dat.dat, { speed: 'fast' });
    await wire.close();
  });

  it('3.5: error forms on TCP: a reply error with cid, a cid-less set error, and a garbage line', async () => {
    const wire = await signedIn();
    const missing = uniqueId('tcp-missing');
    const cid = newCid();
    const [reply] = await wire.batch([{ typ: 'obj', act: 'rea', id: missing, rea: c.realm, cid }]);
    assertError(reply, `unknown object ${missing}`, 404, { typ: 'obj', act: 'rea', cid });
    let before = wire.unsolicited.length;
    wire.sendRaw([{ typ: 'obj', act: 'set', id: 'x', rea: missing }]);
    await wire.until(() => wire.unsolicited.length > before, 2000, 'the set error');
    assertError(wire.unsolicited[before]?.el, `unknown realm ${missing}`, 404, { typ: 'obj', act: 'set' });
    before = wire.unsolicited.length;
    wire.sendText('this is not json');
    await wire.until(() => wire.unsolicited.length > before, 2000, 'the garbage error');
    const garbage = wire.unsolicited[before]?.el;
    assert.equal(garbage.res, 'err');
    assert.equal(garbage.erc, 400);
    assert.notEqual(garbage.typ, 'sys');
    assertSuc(await wire.request({ typ: 'obj', act: 'lis', rea: c.realm }));
    await wire.close();
  });

  it('5.4: a subscription over TCP: the exe push comes on a later line than the reply, then deltas', async () => {
    const wire = await signedIn();
    const realm = uniqueId('tcp-subs');
    assertSuc(await wire.request({ typ: 'rea', act: 'cre', id: realm }));
    const sid = uniqueId('object-subscription');
    const pushes = wire.watch(sid);
    const cid = newCid();
    assertSuc((await wire.batch([{ typ: 'sub', act: 'cre', id: sid, rea: realm, cid, dat: { typ: 'obj', sty: 'rea', exe: true } }]))[0]);
    const [initial] = await pushes.exactly(1, 300);
    assert.deepEqual(initial, { typ: 'sub', id: sid, uty: 'ful', obj: { cre: {} } });
    const push = wire.pushRecords(sid)[0];
    const replyRecord = wire.replyOf(cid);
    assert.ok(push !== undefined && replyRecord !== undefined);
    assert.ok(push.frame > replyRecord.frame);
    assertSuc(await wire.request({ typ: 'obj', act: 'cre', id: 'o', rea: realm }));
    const [, delta] = await pushes.exactly(2, 200);
    assert.deepEqual(Object.keys(delta.obj.cre as object), ['o']);
    await wire.close();
  });
});
