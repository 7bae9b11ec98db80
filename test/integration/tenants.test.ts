/**
 * Tenants, signing keys and JWT sign-in over REST (issue #20): the admin API's tenant and key
 * endpoints, /v2/realm with tenant JWTs, JWTs in every place a REST token goes, `per` and
 * realm-bound keys, revocation and rotation, and the v1 handshake with a JWT.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectWs } from '../support/v1-clients.js';

const JWT_SECRET = 'CHANGE_ME';

async function jwt(secret: string, claims: Record<string, unknown> = {}, kid?: string): Promise<string> {
  const header: { alg: string; typ: string; kid?: string } = { alg: 'HS256', typ: 'JWT' };
  if (kid !== undefined) header.kid = kid;
  return new SignJWT({ sub: 'tester', ...claims }).setProtectedHeader(header).setIssuedAt().sign(new TextEncoder().encode(secret));
}

describe('tenants, signing keys and JWT sign-in over REST', () => {
  let h: Harness;
  let url: string;
  const admin = { token: adminToken };
  let acmeKey: { id: string; secret: string };
  let acme: string;

  before(async () => {
    h = await startHarness({ jwtSecret: JWT_SECRET, authCookieName: 'locus_token' });
    url = h.url;
    await makeRealm(url, 'fleet');
    assert.equal((await call(url, 'POST', '/admin/v1/tenant/acme', { ...admin, body: { label: 'Acme Inc.' } })).status, 200);
    const key = await call(url, 'POST', '/admin/v1/tenant/acme/key', { ...admin, body: {} });
    assert.equal(key.status, 200, key.text);
    acmeKey = key.json as { id: string; secret: string };
    acme = await jwt(acmeKey.secret, { tnd: 'acme' }, acmeKey.id);
  });
  after(async () => {
    await h.stop();
  });

  it('the admin API creates, lists and reads tenants; keys are listed without their secret', async () => {
    assert.match(acmeKey.id, /^key_[0-9a-f]{16}$/);
    assert.match(acmeKey.secret, /^[A-Za-z0-9_-]{43}$/);
    const list = await call(url, 'GET', '/admin/v1/tenant', admin);
    assert.deepEqual(Object.keys(list.json as object).sort(), ['acme', 'default']);
    assert.equal(list.json.acme.label, 'Acme Inc.');
    const keys = await call(url, 'GET', '/admin/v1/tenant/acme/key', admin);
    assert.deepEqual(keys.json, [{ id: acmeKey.id, tenant: 'acme', realm: null, created: keys.json[0].created }]);
    assert.ok(!(await call(url, 'GET', '/admin/v1/tenant/acme', admin)).text.includes(acmeKey.secret), 'the secret is shown once');
    const again = await call(url, 'POST', '/admin/v1/tenant/acme', { ...admin, body: {} });
    assert.equal(again.status, 409);
    assert.equal((await call(url, 'POST', '/admin/v1/tenant/Bad_Id', { ...admin, body: {} })).status, 400);
    assert.equal((await call(url, 'GET', '/admin/v1/tenant/ghost', admin)).status, 404);
  });

  it('a tenant JWT creates, reads, lists, updates and deletes its realms; names are per tenant', async () => {
    // Before acme has a fleet, the default tenant's is none of its business: 404, as for a
    // realm that exists nowhere (docs/api.md, Errors).
    for (const path of ['/v2/realm/fleet', '/v2/realm/fleet/object']) {
      const foreign = await call(url, 'GET', path, { token: acme });
      assert.equal(foreign.status, 404, foreign.text);
      assert.equal(foreign.json.error.message, 'unknown realm fleet');
    }
    const created = await call(url, 'POST', '/v2/realm/fleet', { token: acme, body: { label: 'Acme fleet', data: { a: 1 } } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.json, { id: 'fleet', result: 'success' });
    // The default tenant's fleet is another realm.
    assert.deepEqual((await call(url, 'GET', '/v2/realm/fleet', { token: acme })).json, { id: 'fleet', label: 'Acme fleet', data: { a: 1 } });
    assert.deepEqual((await call(url, 'GET', '/v2/realm/fleet', admin)).json, { id: 'fleet', label: null, data: {} });
    assert.deepEqual(Object.keys((await call(url, 'GET', '/v2/realm', { token: acme })).json as object), ['fleet']);
    assert.equal((await call(url, 'POST', '/v2/realm/fleet', { token: acme, body: { label: 'again' } })).json.error.message, 'realm with id fleet already exists');
    const patched = await call(url, 'PATCH', '/v2/realm/fleet', { token: acme, body: { data: { a: null, b: 2 } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/fleet', { token: acme })).json.data, { b: 2 });
    const missing = await call(url, 'GET', '/v2/realm/ghost', { token: acme });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.message, 'unknown realm ghost');
    assert.equal((await call(url, 'POST', '/v2/realm/sys', { token: acme, body: { label: 'x' } })).status, 400);
    assert.equal((await call(url, 'POST', '/v2/realm/tmp', { token: acme, body: { label: 'Tmp' } })).status, 200);
    assert.equal((await call(url, 'DELETE', '/v2/realm/tmp', { token: acme })).status, 200);
    assert.equal((await call(url, 'DELETE', '/v2/realm/tmp', { token: acme })).status, 404);
  });

  it('objects of a tenant realm stay apart from the default tenant realm of the same name', async () => {
    const put = await call(url, 'PUT', '/v2/realm/fleet/object/car%2F1', { token: acme, body: { label: 'Acme car' } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet/object/car%2F1', { token: acme })).json.label, 'Acme car');
    assert.equal((await call(url, 'GET', '/v2/realm/fleet/object/car%2F1', admin)).status, 404);
  });

  it('LOCUS_JWT_SECRET signs for the default tenant (no kid); the JWT goes in the header, ?token=, the body or the cookie', async () => {
    const token = await jwt(JWT_SECRET);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token })).json.label, null);
    assert.equal((await call(url, 'GET', `/v2/realm/fleet?token=${token}`)).status, 200);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { headers: { cookie: `locus_token=${token}` } })).status, 200);
    const viaBody = await call(url, 'PUT', '/v2/realm/fleet/object/by-body', { body: { token, label: 'b' } });
    assert.equal(viaBody.status, 200, viaBody.text);
  });

  it('failed JWT sign-in on REST: 401 with the texts of compat §12.7', async () => {
    const cases: [string, string][] = [
      [await jwt('wrong secret'), 'signature is invalid'],
      [await jwt(JWT_SECRET, { exp: Math.floor(Date.now() / 1000) - 120 }), 'token is expired'],
      [await jwt(JWT_SECRET, { nbf: Math.floor(Date.now() / 1000) + 120 }), 'token is not valid yet'],
      [await jwt(acmeKey.secret, {}, 'key_unknown'), 'signing key not found'],
      ['abc.def.ghi', 'token is malformed'],
    ];
    for (const [token, text] of cases) {
      const res = await call(url, 'GET', '/v2/realm/fleet', { token });
      assert.equal(res.status, 401, text);
      assert.equal(res.json.error.message, text);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    }
  });

  it('a tenant JWT cannot use the admin API', async () => {
    assert.equal((await call(url, 'GET', '/admin/v1/tenant', { token: acme })).status, 403);
    assert.equal((await call(url, 'GET', '/admin/v1/realm', { token: acme })).status, 403);
  });

  it('per narrows a JWT: letters per realm and id glob; realm management needs the letter on *', async () => {
    const reader = await jwt(acmeKey.secret, { per: { fleet: { 'car/*': 'R' } } }, acmeKey.id);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet/object/car%2F1', { token: reader })).status, 200);
    assert.equal((await call(url, 'PUT', '/v2/realm/fleet/object/car%2F2', { token: reader, body: {} })).status, 403);
    // Id-level: the glob must match the object's id.
    assert.equal((await call(url, 'PUT', '/v2/realm/fleet/object/bus%2F1', { token: acme, body: {} })).status, 200);
    const other = await call(url, 'GET', '/v2/realm/fleet/object/bus%2F1', { token: reader });
    assert.equal(other.status, 403);
    assert.equal(other.json.error.code, 'forbidden');
    const writer = await jwt(acmeKey.secret, { per: { fleet: { 'car/*': 'U' } } }, acmeKey.id);
    assert.equal((await call(url, 'PUT', '/v2/realm/fleet/object/car%2F3', { token: writer, body: { label: 'w' } })).status, 200);
    assert.equal((await call(url, 'PUT', '/v2/realm/fleet/object/bus%2F3', { token: writer, body: { label: 'w' } })).status, 403);
    assert.equal((await call(url, 'DELETE', '/v2/realm/fleet/object/car%2F3', { token: writer })).status, 403);
    assert.equal((await call(url, 'POST', '/v2/realm/other', { token: reader, body: { label: 'x' } })).status, 403);
    assert.equal((await call(url, 'DELETE', '/v2/realm/fleet', { token: reader })).status, 403);
    // The list shows only realms the token may read.
    assert.equal((await call(url, 'POST', '/v2/realm/hidden', { token: acme, body: { label: 'H' } })).status, 200);
    assert.deepEqual(Object.keys((await call(url, 'GET', '/v2/realm', { token: reader })).json as object), ['fleet']);
  });

  it('a realm-bound key reaches its realm only', async () => {
    const key = await call(url, 'POST', '/admin/v1/tenant/acme/key', { ...admin, body: { realm: 'fleet' } });
    const bound = await jwt(key.json.secret as string, {}, key.json.id as string);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token: bound })).status, 200);
    assert.equal((await call(url, 'GET', '/v2/realm/hidden', { token: bound })).status, 403);
    assert.equal((await call(url, 'GET', '/v2/realm/ghost', { token: bound })).status, 403, '403 before 404');
  });

  it('revoking a key ends its tokens; rotating gives a new key and revokes the old one', async () => {
    const key = await call(url, 'POST', '/admin/v1/tenant/acme/key', { ...admin, body: {} });
    const old = await jwt(key.json.secret as string, {}, key.json.id as string);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token: old })).status, 200);
    const rotated = await call(url, 'POST', `/admin/v1/tenant/acme/key/${key.json.id as string}/rotate`, admin);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.json.replaced, key.json.id);
    const denied = await call(url, 'GET', '/v2/realm/fleet', { token: old });
    assert.equal(denied.status, 401);
    assert.equal(denied.json.error.message, 'signing key not found');
    const fresh = await jwt(rotated.json.secret as string, {}, rotated.json.id as string);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token: fresh })).status, 200);
    assert.equal((await call(url, 'DELETE', `/admin/v1/tenant/acme/key/${rotated.json.id as string}`, admin)).status, 200);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token: fresh })).status, 401);
  });

  it('the admin API manages a tenant realms under /admin/v1/tenant/<t>/realm; a tenant with realms cannot be deleted', async () => {
    assert.equal((await call(url, 'POST', '/admin/v1/tenant/beta', { ...admin, body: {} })).status, 200);
    assert.equal((await call(url, 'PUT', '/admin/v1/tenant/beta/realm/yard', { ...admin, body: {} })).status, 200);
    assert.deepEqual(Object.keys((await call(url, 'GET', '/admin/v1/tenant/beta/realm', admin)).json as object), ['yard']);
    assert.equal((await call(url, 'GET', '/admin/v1/realm/yard', admin)).status, 404, 'not the default tenant');
    const refused = await call(url, 'DELETE', '/admin/v1/tenant/beta', admin);
    assert.equal(refused.status, 409);
    assert.equal((await call(url, 'DELETE', '/admin/v1/tenant/beta/realm/yard', admin)).status, 200);
    assert.equal((await call(url, 'DELETE', '/admin/v1/tenant/beta', admin)).status, 200);
    assert.equal((await call(url, 'DELETE', '/admin/v1/tenant/default', admin)).status, 409);
  });

  it('the evt extension names a tenant realm as its tenant knows it, never by its storage key', async () => {
    assert.equal((await call(url, 'POST', '/v2/realm/evts', { token: acme, body: { label: 'Events' } })).status, 200);
    const client = await connectWs(url, acme);
    try {
      const sub = await client.one({ typ: 'sub', act: 'sub', rea: 'evts', dat: {} });
      assert.equal(sub.res, 'suc', JSON.stringify(sub));
      const wrote = await client.one({ typ: 'obj', act: 'set', cid: 'w', id: 'car', rea: 'evts', loc: { lon: 13.4, lat: 52.5 } });
      assert.equal(wrote.res, 'suc', JSON.stringify(wrote));
      const [event] = (await client.waitForEvents(1)) as { typ: string; act: string; rea: string }[];
      assert.deepEqual([event?.typ, event?.act, event?.rea], ['evt', 'loc', 'evts']);
      assert.equal((await call(url, 'DELETE', '/v2/realm/evts', { token: acme })).status, 200);
      const deleted = JSON.stringify(await client.next());
      assert.match(deleted, /realm \\"evts\\" was deleted/);
      assert.ok(!deleted.includes('\\u001f') && !deleted.includes('\u001f'), deleted);
    } finally {
      await client.close();
    }
  });

  it('the v1 WebSocket handshake takes a tenant JWT; a wrong signature fails with its text', async () => {
    const client = await connectWs(url, acme);
    await client.close();
    const bad = await connectWs(url);
    bad.sendText(`Bearer ${await jwt('wrong secret')}`);
    const reply = JSON.stringify(await bad.next());
    assert.ok(reply.includes('signature is invalid'), reply);
    await bad.close();
  });
});
