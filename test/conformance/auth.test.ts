/**
 * Conformance (hivekit-compat.md 1.2, 2, 12.7, 12.10): WebSocket sign-in with the
 * `Bearer <jwt>` first frame, its success and failure replies, and the socket staying
 * usable after a failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT } from 'jose';
import {
  assertError,
  assertSuc,
  newCid,
  nowSeconds,
  openWs,
  signToken,
  sleep,
  testSecret,
  uniqueId,
  type HivekitWire,
  type Json,
} from '../support/hivekit-wire.js';
import { conformanceSuite, type ConformanceSuite } from '../support/conformance-suite.js';

/** compat 1.2.5: the failure element, exactly. */
const failure = (err: string) => ({ typ: 'sys', act: 'aut', res: 'err', err, erc: 401 });

/** compat 12.10: after a failed sign-in the socket stays open and a good Bearer frame works. */
async function assertStillUsable(wire: HivekitWire, c: ConformanceSuite): Promise<void> {
  await sleep(200);
  assert.equal(wire.isClosed, false, 'the socket must stay open after a failed sign-in (compat 1.2.6, 12.10)');
  await wire.signIn(c.token);
  assertSuc(await wire.request({ typ: 'rea', act: 'lis' }));
}

describe('conformance: WebSocket sign-in (compat 1.2, 2, 12.7, 12.10)', () => {
  const c = conformanceSuite('auth', { wire: false });

  it('1.1/1.2.1: accepts and closes unauthenticated sockets at /ws and /v1/ws', async () => {
    for (const path of ['/ws', '/v1/ws']) {
      const wire = await openWs(c.url, path);
      await sleep(50);
      assert.equal(wire.isClosed, false, `${path} closed an unauthenticated socket at once`);
      await wire.close();
      assert.equal(wire.isClosed, true);
    }
  });

  it('1.2.4: the success reply is exactly sys/aut/suc with a non-empty version and buildDate, without cid, alone in its frame', async () => {
    const wire = await openWs(c.url);
    const r = await wire.authenticate(c.token);
    assert.deepEqual(Object.keys(r.el as object).sort(), ['act', 'dat', 'res', 'typ'], JSON.stringify(r.el));
    assert.equal(r.el.typ, 'sys');
    assert.equal(r.el.act, 'aut');
    assert.equal(r.el.res, 'suc');
    assert.deepEqual(Object.keys(r.el.dat as object).sort(), ['buildDate', 'version']);
    assert.equal(typeof r.el.dat.version, 'string');
    assert.ok((r.el.dat.version as string).length > 0);
    assert.equal(typeof r.el.dat.buildDate, 'string');
    assert.ok((r.el.dat.buildDate as string).length > 0);
    assert.equal(wire.frameSizes[r.frame], 1);
  });

  it('1.2.5: a token signed with another secret gets exactly the `signature is invalid` failure; the socket stays open and a second Bearer frame succeeds', async () => {
    const wire = await openWs(c.url);
    const bad = await signToken({ sub: 'userName' }, { secret: 'not-the-secret' });
    const r = await wire.authenticate(bad);
    assert.deepEqual(r.el, failure('signature is invalid'));
    await assertStillUsable(wire, c);
  });

  it('12.7: an expired token gets `token is expired`, 401', async () => {
    const wire = await openWs(c.url);
    const r = await wire.authenticate(await signToken({ sub: 'userName' }, { exp: nowSeconds() - 3600 }));
    assert.deepEqual(r.el, failure('token is expired'));
    await assertStillUsable(wire, c);
  });

  it('12.7: a token not valid yet gets `token is not valid yet`, 401', async () => {
    const wire = await openWs(c.url);
    const r = await wire.authenticate(await signToken({ sub: 'userName' }, { nbf: nowSeconds() + 3600 }));
    assert.deepEqual(r.el, failure('token is not valid yet'));
    await assertStillUsable(wire, c);
  });

  it('12.7: a malformed token gets `token is malformed`, 401', async () => {
    const wire = await openWs(c.url);
    const r = await wire.authenticate('not.a.jwt');
    assert.deepEqual(r.el, failure('token is malformed'));
    await assertStillUsable(wire, c);
  });

  it('12.7: a token naming an unknown key id gets `signing key not found`, 401', async () => {
    const wire = await openWs(c.url);
    const r = await wire.authenticate(await signToken({ sub: 'userName' }, { kid: 'no-such-key-id' }));
    assert.deepEqual(r.el, failure('signing key not found'));
    await assertStillUsable(wire, c);
  });

  it('2: a token without `sub` is refused with sys/aut/err, 401 (Recommendation: sub required)', async () => {
    const wire = await openWs(c.url);
    const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().sign(new TextEncoder().encode(testSecret));
    const r = await wire.authenticate(token);
    assert.equal(r.el.typ, 'sys');
    assert.equal(r.el.act, 'aut');
    assert.equal(r.el.res, 'err');
    assert.equal(r.el.erc, 401);
    assert.equal(typeof r.el.err, 'string');
    assert.equal(r.el.cid, undefined);
    await assertStillUsable(wire, c);
  });

  it('2: tokens with `iat`, `dpv` and no `exp` sign in; a sub-only token has full tenant rights (realm management)', async () => {
    const wire = await openWs(c.url);
    const dpv = await signToken({ sub: 'dataProviderClient' }, { claims: { dpv: { [c.realm]: ['car/*'] } } });
    assert.equal((await wire.authenticate(dpv)).el.res, 'suc');
    const other = await openWs(c.url);
    await other.signIn(await signToken({ sub: 'userB' }));
    const realm = uniqueId('auth-realm');
    assertSuc(await other.request({ typ: 'rea', act: 'cre', id: realm }));
    assertSuc(await other.request({ typ: 'rea', act: 'del', id: realm }));
  });

  it('1.2/12.10: a request before sign-in is refused with 401 (its cid answered, or a sys/aut failure), changes nothing, and sign-in still works on that socket', async () => {
    const wire = await openWs(c.url);
    const realm = uniqueId('before-auth');
    const cid = newCid();
    wire.sendRaw([{ typ: 'rea', act: 'cre', id: realm, cid }]);
    const refusal = (): Json => wire.replies.get(cid)?.[0]?.el ?? wire.unsolicited.find((r) => r.el.typ === 'sys' && r.el.act === 'aut')?.el;
    await wire.until(() => refusal() !== undefined, 2000, 'the refusal of a request sent before sign-in');
    const reply = refusal();
    assert.equal(reply.res, 'err');
    assert.equal(reply.erc, 401);
    assert.equal(typeof reply.err, 'string');
    if (reply.cid !== undefined) assert.equal(reply.cid, cid);
    await assertStillUsable(wire, c);
    assertError(await wire.request({ typ: 'rea', act: 'rea', id: realm }), `unknown realm ${realm}`, 404);
  });
});
