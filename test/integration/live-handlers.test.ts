/**
 * The v1 `sub` handlers (handlers/subscriptions.ts) on the real engine and store, with a
 * recording Access: where the realm comes from (`rea`, the opaque token's realm, none for
 * `sys`), HTTP refused, ids and errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Principal, Right } from '../../internal/auth/principal.js';
import type { Realm } from '../../internal/domain/types.js';
import { unknownRealm } from '../../internal/errors.js';
import type { Access } from '../../internal/service/access.js';
import type { HandlerDeps } from '../../internal/transport/actions/handlers/deps.js';
import { subscriptionsHandlers } from '../../internal/transport/actions/handlers/subscriptions.js';
import type { V1Caller, V1Handler, V1Message } from '../../internal/transport/actions/v1-handler.js';
import { FakeConnection, liveFixture, principal, sleep, type LiveFixture } from '../support/live-fixture.js';

describe('v1 sub handlers', () => {
  let f: LiveFixture;
  const entered: [string | null, string, Right][] = [];
  let counted = 0;
  let handlers: { cre: V1Handler; upd: V1Handler; del: V1Handler };

  before(async () => {
    f = await liveFixture();
    const access = {
      enterRealm: (p: Principal, realmId: string, need: Right): Promise<Realm> => {
        entered.push([p.realm, realmId, need]);
        return realmId === f.realm.id ? Promise.resolve(f.realm) : Promise.reject(unknownRealm(realmId));
      },
      countAction: (): Promise<void> => {
        counted++;
        return Promise.resolve();
      },
    } as unknown as Access;
    const table = subscriptionsHandlers({ access, live: f.live } as unknown as HandlerDeps);
    const sub = table.sub;
    assert.ok(sub?.cre && sub.upd && sub.del);
    handlers = { cre: sub.cre, upd: sub.upd, del: sub.del };
  });
  after(() => f.close());

  const msg = (act: string, raw: Record<string, unknown>): V1Message => ({ typ: 'sub', act, cid: 'c1', raw: { typ: 'sub', act, cid: 'c1', ...raw } });
  const caller = (connection: FakeConnection | null, p: Principal = principal()): V1Caller => ({ principal: p, connection });

  it('declares sub cre/upd/del with the read right and resolves the realm itself', () => {
    for (const handler of Object.values(handlers)) {
      assert.equal(handler.realm, 'none');
      assert.equal(handler.need, 'R');
    }
  });

  it('cre enters the realm named by rea with the read right; the answer is plain success', async () => {
    const conn = new FakeConnection();
    entered.length = 0;
    const answer = await handlers.cre.run(msg('cre', { id: 'object-subscription-1', rea: f.realm.id, dat: { typ: 'obj', sty: 'rea', exe: true } }), null, caller(conn));
    assert.deepEqual(answer, {});
    assert.deepEqual(entered, [[null, f.realm.id, 'R']]);
    assert.equal(conn.frames.length, 0);
    await sleep(50);
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'object-subscription-1', uty: 'ful', obj: { cre: {} } }]);
    await handlers.upd.run(msg('upd', { id: 'object-subscription-1', rea: f.realm.id, dat: { typ: 'obj', sty: 'rea', atr: ['a=1'] } }), null, caller(conn));
    await sleep(50);
    assert.deepEqual(conn.take(), [{ typ: 'sub', id: 'object-subscription-1', uty: 'ful', obj: { cre: {} } }]);
    assert.deepEqual(await handlers.del.run(msg('del', { id: 'object-subscription-1', rea: f.realm.id }), null, caller(conn)), {});
    assert.equal(f.live.count(), 0);
  });

  it('an opaque realm token without rea uses its realm; a tenant token must name one', async () => {
    const conn = new FakeConnection();
    entered.length = 0;
    await handlers.cre.run(msg('cre', { id: 's', dat: { typ: 'are' } }), null, caller(conn, principal('default', f.realm.id)));
    assert.deepEqual(entered, [[f.realm.id, f.realm.id, 'R']]);
    await assert.rejects(handlers.cre.run(msg('cre', { id: 's2', dat: { typ: 'are' } }), null, caller(conn)), { status: 400, message: /rea must name the realm/ });
    await handlers.del.run(msg('del', { id: 's' }), null, caller(conn));
  });

  it('an unknown realm is 404 unknown realm <id>, and nothing is created', async () => {
    const conn = new FakeConnection();
    await assert.rejects(handlers.cre.run(msg('cre', { id: 's', rea: 'nope', dat: { typ: 'obj' } }), null, caller(conn)), { status: 404, message: 'unknown realm nope' });
    assert.equal(f.live.count(), 0);
  });

  it('realm events name the pseudo-realm sys and never enter a realm', async () => {
    const conn = new FakeConnection();
    entered.length = 0;
    const before = counted;
    await handlers.cre.run(msg('cre', { id: 'realm-subscription--x', rea: 'sys', dat: { typ: 'sys', sty: 'rea' } }), null, caller(conn));
    assert.deepEqual(entered, []);
    assert.equal(counted, before + 1);
    await handlers.del.run(msg('del', { id: 'realm-subscription--x', rea: 'sys' }), null, caller(conn));
  });

  it('over HTTP (no connection) every sub action is refused with 400', async () => {
    for (const [act, handler] of Object.entries(handlers)) {
      await assert.rejects(handler.run(msg(act, { id: 's', rea: f.realm.id, dat: { typ: 'obj' } }), null, caller(null)), {
        status: 400,
        message: 'subscriptions need a WebSocket or TCP connection to push to; HTTP has no push channel',
      });
    }
  });

  it('bad ids are 400; upd and del of an unknown id are 404 unknown subscription <id>', async () => {
    const conn = new FakeConnection();
    for (const id of [undefined, '', 5, 'x'.repeat(257)]) {
      await assert.rejects(handlers.cre.run(msg('cre', { id, rea: f.realm.id, dat: { typ: 'obj' } }), null, caller(conn)), { status: 400, message: /^id must be the subscription id/ });
    }
    await assert.rejects(handlers.upd.run(msg('upd', { id: 'ghost', dat: { typ: 'obj' } }), null, caller(conn)), { status: 404, message: 'unknown subscription ghost' });
    await assert.rejects(handlers.del.run(msg('del', { id: 'ghost' }), null, caller(conn)), { status: 404, message: 'unknown subscription ghost' });
  });
});
