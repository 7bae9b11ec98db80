/**
 * Conformance (hivekit-compat.md 1.1, 1.3, 11#1, 11#2, 11#12): the HTTP action endpoint at
 * `/api/v1` and `/v1/http` (401 body, reply arrays, `set` without reply and read-your-writes)
 * and the WebSocket at `/ws` and `/v1/ws`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertClientError,
  assertError,
  assertSuc,
  connectWire,
  httpRequest,
  locWithoutTime,
  nowSeconds,
  postActions,
  postRaw,
  signToken,
  uniqueId,
  zeroLoc,
  type Json,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

const paths = ['/api/v1', '/v1/http'];

describe('conformance: HTTP action endpoint and paths (compat 1.3)', () => {
  const c = conformanceSuite('http', { wire: false });

  it('1.3: a token signed with another secret gets 401 with {res:"err", err:"signature is invalid", erc:401} and WWW-Authenticate', async () => {
    const bad = await signToken({ sub: 'userName' }, { secret: 'wrong-secret' });
    for (const path of paths) {
      const res = await postActions(c.url, bad, [{ typ: 'obj', act: 'lis', rea: c.realm }], path);
      assert.equal(res.status, 401, res.text);
      assert.ok(res.json !== null && typeof res.json === 'object' && !Array.isArray(res.json), `the body must be a JSON object: ${res.text}`);
      assert.equal(res.json.res, 'err');
      assert.equal(res.json.err, 'signature is invalid');
      assert.equal(res.json.erc, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    }
  });

  it('1.3/12.7: an expired token and a missing Authorization header are 401 with err and erc', async () => {
    const expired = await signToken({ sub: 'userName' }, { exp: nowSeconds() - 3600 });
    const res = await postActions(c.url, expired, [{ typ: 'obj', act: 'lis', rea: c.realm }]);
    assert.equal(res.status, 401);
    assert.equal(res.json.err, 'token is expired');
    assert.equal(res.json.erc, 401);
    const none = await postActions(c.url, null, [{ typ: 'obj', act: 'lis', rea: c.realm }]);
    assert.equal(none.status, 401);
    assert.equal(none.json.res, 'err');
    assert.equal(typeof none.json.err, 'string');
    assert.equal(none.json.erc, 401);
  });

  it('1.3: both paths answer a batch with a JSON array of replies, one per cid', async () => {
    for (const path of paths) {
      const id = uniqueId('http-obj');
      const res = await postActions(
        c.url,
        c.token,
        [
          { typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'Object A Label', loc: { lon: 13.404954, lat: 52.520008 }, dat: { type: 'scooter' } },
          { typ: 'obj', act: 'lis', rea: c.realm },
          { typ: 'rea', act: 'rea', id: c.realm },
        ],
        path,
      );
      assert.equal(res.status, 200, res.text);
      assert.ok(Array.isArray(res.json));
      assert.equal(res.json.length, 3);
      assert.deepEqual([...res.json.map((r: { cid: string }) => r.cid)].sort(), [...res.cids].sort());
      for (const r of res.json) assertSuc(r);
    }
  });

  it('1.3: an empty batch is answered 200 []', async () => {
    const res = await postRaw(c.url, c.token, '[]');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, []);
  });

  it('1.3: a successful set gets no reply and is applied before the response (read-your-writes in the next POST)', async () => {
    const id = uniqueId('http-set');
    const set = await postActions(c.url, c.token, [{ typ: 'obj', act: 'set', id, rea: c.realm, lab: 'Set', loc: { lon: 13, lat: 52 }, dat: { valueA: 1 } }]);
    assert.equal(set.status, 200);
    assert.deepEqual(set.json, []);
    const rec = await httpRequest(c.url, c.token, { typ: 'obj', act: 'rea', id, rea: c.realm });
    assert.equal(rec.dat.lab, 'Set');
    assert.deepEqual(rec.dat.dat, { valueA: 1 });
    const mixed = await postActions(c.url, c.token, [
      { typ: 'obj', act: 'set', id, rea: c.realm, dat: { valueB: 2 } },
      { typ: 'obj', act: 'rea', id, rea: c.realm },
    ]);
    assert.equal(mixed.json.length, 1, 'only the non-set message is answered');
    assert.equal(mixed.json[0].cid, mixed.cids[1]);
  });

  it('1.3: a failed set is answered with its cid and res err', async () => {
    const missing = uniqueId('nowhere');
    const res = await postActions(c.url, c.token, [{ typ: 'obj', act: 'set', id: 'x', rea: missing }]);
    assert.equal(res.status, 200);
    assert.equal(res.json.length, 1);
    assertError(res.json[0], `unknown realm ${missing}`, 404, { cid: res.cids[0] });
  });

  it('1.3/4.2: object read and list over HTTP (test/http-test.js): zero-filled loc, entries exactly {id, lab, cst:"dis"}', async () => {
    const realm = uniqueId('http-list');
    assertSuc(await httpRequest(c.url, c.token, { typ: 'rea', act: 'cre', id: realm }));
    const id = uniqueId('object-a');
    assertSuc(await httpRequest(c.url, c.token, { typ: 'obj', act: 'cre', id, rea: realm, lab: 'Object A Label', loc: { lon: 13.404954, lat: 52.520008 }, dat: { charge: 0.3 } }));
    const rec = await httpRequest(c.url, c.token, { typ: 'obj', act: 'rea', id, rea: realm });
    assert.deepEqual(locWithoutTime(rec.dat.loc), zeroLoc({ lon: 13.404954, lat: 52.520008 }));
    assert.equal(rec.dat.cst, 'dis');
    const list = await httpRequest(c.url, c.token, { typ: 'obj', act: 'lis', rea: realm, dat: { fie: ['charge'] } });
    assert.deepEqual(list.dat, { [id]: { id, lab: 'Object A Label', cst: 'dis', dat: { charge: 0.3 } } });
  });

  it('1.3: errors of single actions come back inside a 200 with their cid', async () => {
    const missing = uniqueId('nowhere');
    const res = await postActions(c.url, c.token, [
      { typ: 'rea', act: 'rea', id: missing },
      { typ: 'rea', act: 'lis' },
    ]);
    assert.equal(res.status, 200);
    const replies = res.json as Json[];
    assertError(replies.find((r) => r.cid === res.cids[0]), `unknown realm ${missing}`, 404, { typ: 'rea', act: 'rea' });
    assertSuc(replies.find((r) => r.cid === res.cids[1]));
  });

  it('11 (unchanged): subscriptions are refused over HTTP (4xx error reply)', async () => {
    const reply = await httpRequest(c.url, c.token, { typ: 'sub', act: 'cre', id: 's', rea: c.realm, dat: { typ: 'obj', sty: 'rea' } });
    assertClientError(reply);
  });

  it('1.3: a body that is not JSON, or not an array, is a 400', async () => {
    assert.equal((await postRaw(c.url, c.token, '{not json')).status, 400);
    assert.equal((await postRaw(c.url, c.token, JSON.stringify({ typ: 'obj', act: 'lis', rea: c.realm }))).status, 400);
  });

  it('0#1/11#1: the WebSocket is served at /ws and /v1/ws alike', async () => {
    for (const path of ['/ws', '/v1/ws']) {
      const wire = await connectWire(c.url, c.token, path);
      const r = await wire.request({ typ: 'rea', act: 'rea', id: c.realm });
      assertSuc(r);
      assert.equal(r.dat.id, c.realm);
      await wire.close();
    }
  });
});
