/**
 * v1 realm actions (handlers/realms.ts; hivekit-compat.md §4.1, §8) on a real SQLite store,
 * called as the dispatcher calls them, and the realm change events they publish on the
 * tenant's channel. The same actions over a live WebSocket are at the end, marked to run
 * once the Hivekit dispatcher (helper "core") is merged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import type { Principal } from '../../internal/auth/principal.js';
import { parsePer } from '../../internal/auth/rights.js';
import type { RealmChangedEvent } from '../../internal/events/port.js';
import { LocusError } from '../../internal/errors.js';
import { noChangeListener } from '../../internal/service/changes.js';
import { RealmService } from '../../internal/service/realms.js';
import { TenantService } from '../../internal/service/tenants.js';
import type { Store } from '../../internal/store/port.js';
import { openSqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import type { HandlerDeps } from '../../internal/transport/actions/handlers/deps.js';
import { realmsHandlers } from '../../internal/transport/actions/handlers/realms.js';
import type { V1Answer, V1Handler, V1Message } from '../../internal/transport/actions/v1-handler.js';
import { startHarness, type Harness } from '../support/harness.js';
import { connectWs, postV1 } from '../support/v1-clients.js';

const clock = (): number => Date.UTC(2026, 0, 1);

function tenantJwt(tenant: string, per?: unknown): Principal {
  const rights = per === undefined ? null : (parsePer(per) as { rights: Principal['rights'] }).rights;
  return { tokenId: 'jwt:k:u', kind: 'jwt', tenant, realm: null, scope: 'admin', rights, subject: 'u' };
}

describe('v1 realm actions (handlers called directly)', () => {
  let store: Store;
  let realms: RealmService;
  const events: [string, RealmChangedEvent][] = [];
  let table: Record<string, V1Handler>;
  const acme = tenantJwt('acme');

  /** Runs `rea <act>` as the dispatcher would: realm 'id' handlers get the realm entered. */
  async function run(act: string, raw: Record<string, unknown>, principal: Principal = acme): Promise<V1Answer> {
    const handler = table[act];
    assert.ok(handler !== undefined);
    const message: V1Message = { typ: 'rea', act, cid: 'c1', raw: { typ: 'rea', act, cid: 'c1', ...raw } };
    let realm = null;
    if (handler.realm === 'id') {
      realm = await realms.findIn(principal.tenant, raw.id as string);
      if (realm === null) throw new LocusError('not_found', `unknown realm ${raw.id as string}`);
    }
    return handler.run(message, realm, { principal, connection: null });
  }

  async function fails(promise: Promise<unknown>, erc: number, text?: string): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof LocusError, String(err));
      assert.equal(err.status, erc);
      if (text !== undefined) assert.equal(err.message, text);
      return true;
    });
  }

  before(async () => {
    store = openSqliteStore(':memory:');
    realms = new RealmService(store, clock, noChangeListener, { publishTenant: (tenant, event) => events.push([tenant, event]) });
    await new TenantService(store, clock).create('acme', {});
    table = realmsHandlers({ realms } as unknown as HandlerDeps).rea as Record<string, V1Handler>;
  });
  after(async () => {
    await store.close();
  });

  it('declares where the realm is named and the right each act needs', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(table).map(([act, h]) => [act, [h.realm, h.need]])),
      { cre: ['none', 'C'], rea: ['id', 'R'], lis: ['none', 'R'], upd: ['id', 'U'], del: ['id', 'D'] },
    );
  });

  it('the sequence of realm-test.js: create, read, list, update with merge and null removal, delete; one event per change', async () => {
    events.length = 0;
    assert.deepEqual(await run('cre', { id: 'A', lab: 'Realm A', dat: { address: { street: 'Main', number: 1 } } }), {});
    assert.deepEqual(await run('cre', { id: 'B' }), {});
    assert.deepEqual(await run('rea', { id: 'A' }), { dat: { id: 'A', lab: 'Realm A', dat: { address: { street: 'Main', number: 1 } } } });
    assert.deepEqual(await run('rea', { id: 'B' }), { dat: { id: 'B', lab: null, dat: {} } });
    assert.deepEqual(await run('lis', {}), {
      dat: { A: { id: 'A', lab: 'Realm A', dat: { address: { street: 'Main', number: 1 } } }, B: { id: 'B', lab: null, dat: {} } },
    });
    await run('upd', { id: 'B', dat: { amount: 42, firstname: 'Joe' } });
    await run('upd', { id: 'B', dat: { amount: 42, firstname: null } });
    await run('upd', { id: 'B', lab: 'Realm B' });
    assert.deepEqual(await run('rea', { id: 'B' }), { dat: { id: 'B', lab: 'Realm B', dat: { amount: 42 } } });
    await run('del', { id: 'B' });
    assert.deepEqual(Object.keys(((await run('lis', {})) as { dat: object }).dat), ['A']);
    assert.deepEqual(
      events.map(([tenant, e]) => [tenant, e.act, e.name, e.realm.includes('\u001f')]),
      [
        ['acme', 'cre', 'A', true],
        ['acme', 'cre', 'B', true],
        ['acme', 'upd', 'B', true],
        ['acme', 'upd', 'B', true],
        ['acme', 'upd', 'B', true],
        ['acme', 'del', 'B', true],
      ],
    );
    assert.deepEqual(events[4]?.[1].record, { label: 'Realm B', data: { amount: 42 } });
    assert.equal(events[5]?.[1].record, null);
  });

  it('errors: existing id 409, missing 404, bad id 400, reserved sys 400; a failed create publishes nothing', async () => {
    events.length = 0;
    await fails(run('cre', { id: 'A' }), 409, 'realm with id A already exists');
    await fails(run('rea', { id: 'ghost' }), 404, 'unknown realm ghost');
    await fails(run('cre', {}), 400);
    await fails(run('cre', { id: 7 }), 400);
    await fails(run('cre', { id: 'sys' }), 400);
    await fails(run('cre', { id: 'C', dat: 'not an object' }), 400);
    await fails(run('cre', { id: 'C', lab: 5 }), 400);
    assert.deepEqual(events, []);
  });

  it('tenants are apart: the same name in two tenants, each list holds its own', async () => {
    const other = tenantJwt('default');
    await run('cre', { id: 'A', lab: 'default A' }, other);
    assert.equal(((await run('rea', { id: 'A' }, other)) as { dat: { lab: string } }).dat.lab, 'default A');
    assert.equal(((await run('rea', { id: 'A' })) as { dat: { lab: string } }).dat.lab, 'Realm A');
    assert.deepEqual(Object.keys(((await run('lis', {}, other)) as { dat: object }).dat), ['A']);
  });

  it('realm management needs rights: per without the letter on *, and opaque tokens below admin, get 403', async () => {
    const reader = tenantJwt('acme', { A: { '*': 'R' } });
    await fails(run('cre', { id: 'D' }, reader), 403);
    await fails(run('upd', { id: 'A', lab: 'x' }, reader), 403);
    await fails(run('del', { id: 'A' }, reader), 403);
    const opaque: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'A', scope: 'write' };
    await fails(run('del', { id: 'A' }, opaque), 403);
    // lis shows only what the caller may read: the opaque token its one realm.
    assert.deepEqual(Object.keys(((await run('lis', {}, opaque)) as { dat: object }).dat), ['A']);
    const narrow = tenantJwt('acme', { other: { '*': 'R' } });
    assert.deepEqual(((await run('lis', {}, narrow)) as { dat: object }).dat, {});
  });
});

describe('v1 realm actions over WebSocket and HTTP with a tenant JWT', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness({ jwtSecret: 'CHANGE_ME' });
    token = await new SignJWT({ sub: 'userName' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().sign(new TextEncoder().encode('CHANGE_ME'));
  });
  after(async () => {
    await h.stop();
  });

  it('WebSocket: create, read, list, update, delete; missing realm 404 with the Hivekit text', async () => {
    const ws = await connectWs(h.url, token);
    const [missing] = await ws.request([{ typ: 'rea', act: 'rea', cid: '1', id: 'ghost' }]);
    assert.deepEqual(missing, { typ: 'rea', act: 'rea', cid: '1', res: 'err', err: 'unknown realm ghost', erc: 404 });
    const [created] = await ws.request([{ typ: 'rea', act: 'cre', cid: '2', id: 'A', lab: 'Realm A', dat: { some: 'value' } }]);
    assert.equal(created.res, 'suc');
    const [again] = await ws.request([{ typ: 'rea', act: 'cre', cid: '3', id: 'A' }]);
    assert.deepEqual([again.err, again.erc], ['realm with id A already exists', 409]);
    const [read] = await ws.request([{ typ: 'rea', act: 'rea', cid: '4', id: 'A' }]);
    assert.deepEqual(read.dat, { id: 'A', lab: 'Realm A', dat: { some: 'value' } });
    const [list] = await ws.request([{ typ: 'rea', act: 'lis', cid: '5' }]);
    assert.deepEqual(list.dat.A, { id: 'A', lab: 'Realm A', dat: { some: 'value' } });
    await ws.request([{ typ: 'rea', act: 'upd', cid: '6', id: 'A', dat: { some: null, n: 1 } }]);
    const [after] = await ws.request([{ typ: 'rea', act: 'rea', cid: '7', id: 'A' }]);
    assert.deepEqual(after.dat.dat, { n: 1 });
    const [deleted] = await ws.request([{ typ: 'rea', act: 'del', cid: '8', id: 'A' }]);
    assert.equal(deleted.res, 'suc');
    await ws.close();
  });

  it('HTTP: a wrong secret is 401 with {err:"signature is invalid", erc:401}', async () => {
    const bad = await new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('wrong'));
    const res = await postV1(h.url, bad, [{ typ: 'rea', act: 'lis', cid: '1' }]);
    assert.equal(res.status, 401);
    assert.equal(res.json.err, 'signature is invalid');
    assert.equal(res.json.erc, 401);
  });
});
