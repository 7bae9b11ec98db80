/**
 * Realms as entities over REST v2 (issue #20, docs/reference/hivekit-rest.md §2 and §11.2 D8):
 * POST, PATCH, GET, DELETE /v2/realm/<r> and GET /v2/realm.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';

/** Data nested `levels` deep: the data object is level 1. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < levels; level++) value = { n: value };
  return value;
}

describe('REST v2 realms', () => {
  let h: Harness;
  let url: string;
  let fleet: { read: string; write: string; admin: string };
  const admin = { token: adminToken };

  before(async () => {
    h = await startHarness();
    url = h.url;
    fleet = await makeRealm(url, 'fleet');
  });
  after(async () => {
    await h.stop();
  });

  it('creates a realm with a label and nested data, reads it and lists it', async () => {
    const data = { config: { zones: [{ id: 'a', weights: [1, 2.5] }, null], deep: { x: { y: 'z' } } }, plain: 'Zoë 😀' };
    const created = await call(url, 'POST', '/v2/realm/acme', { ...admin, body: { label: 'Acme Inc.', data } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.json, { id: 'acme', result: 'success' });
    const read = await call(url, 'GET', '/v2/realm/acme', admin);
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json, { id: 'acme', label: 'Acme Inc.', data });
    assert.equal(JSON.stringify(read.json.data), JSON.stringify(data), 'keys keep their order');
    const list = await call(url, 'GET', '/v2/realm', admin);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.acme, { id: 'acme', label: 'Acme Inc.', data });
    // A realm made through the admin API reads with label null and empty data.
    assert.deepEqual(list.json.fleet, { id: 'fleet', label: null, data: {} });
  });

  it('creates without data: data is {}; top-level nulls of a create are dropped', async () => {
    const bare = await call(url, 'POST', '/v2/realm/bare', { ...admin, body: { label: 'Bare' } });
    assert.equal(bare.status, 200, bare.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/bare', admin)).json, { id: 'bare', label: 'Bare', data: {} });
    const nulls = await call(url, 'POST', '/v2/realm/nulls', { ...admin, body: { label: 'N', data: { gone: null, kept: { inner: null } } } });
    assert.equal(nulls.status, 200, nulls.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/nulls', admin)).json.data, { kept: { inner: null } });
  });

  it('updates: data merges key by key at the top level, null removes a key, nested values are replaced whole', async () => {
    await call(url, 'POST', '/v2/realm/merge', { ...admin, body: { label: 'Before', data: { keep: 1, drop: 'x', nested: { a: 1, b: 2 } } } });
    const patched = await call(url, 'PATCH', '/v2/realm/merge', { ...admin, body: { data: { drop: null, nested: { c: [3] }, added: true } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json, { id: 'merge', result: 'success' });
    assert.deepEqual((await call(url, 'GET', '/v2/realm/merge', admin)).json, {
      id: 'merge',
      label: 'Before',
      data: { keep: 1, nested: { c: [3] }, added: true },
    });
    const relabelled = await call(url, 'PATCH', '/v2/realm/merge', { ...admin, body: { label: 'After' } });
    assert.equal(relabelled.status, 200, relabelled.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/merge', admin)).json, {
      id: 'merge',
      label: 'After',
      data: { keep: 1, nested: { c: [3] }, added: true },
    });
  });

  it('create on an existing id is a 409 with the Hivekit text, and changes nothing', async () => {
    const again = await call(url, 'POST', '/v2/realm/acme', { ...admin, body: { label: 'Other' } });
    assert.equal(again.status, 409, again.text);
    assert.deepEqual(again.json, { result: 'error', error: { code: 'conflict', message: 'realm with id acme already exists' } });
    assert.equal((await call(url, 'GET', '/v2/realm/acme', admin)).json.label, 'Acme Inc.');
  });

  it('an unknown realm is a 404 `unknown realm <id>` on read, update and delete', async () => {
    for (const [method, body] of [['GET', undefined], ['PATCH', { label: 'x' }], ['DELETE', undefined]] as const) {
      const res = await call(url, method, '/v2/realm/nowhere', { ...admin, body });
      assert.equal(res.status, 404, `${method}: ${res.text}`);
      assert.deepEqual(res.json.error, { code: 'not_found', message: 'unknown realm nowhere' }, method);
    }
  });

  it('refuses unknown keys, a missing label and bad data with a 400 naming the problem', async () => {
    const unknown = await call(url, 'POST', '/v2/realm/bad', { ...admin, body: { label: 'x', settings: {} } });
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.json.error.message, /unknown key "settings"/);
    const unknownPatch = await call(url, 'PATCH', '/v2/realm/acme', { ...admin, body: { colour: 'red' } });
    assert.equal(unknownPatch.status, 400, unknownPatch.text);
    assert.match(unknownPatch.json.error.message, /unknown key "colour"/);
    const noLabel = await call(url, 'POST', '/v2/realm/bad', { ...admin, body: { data: {} } });
    assert.equal(noLabel.status, 400, noLabel.text);
    assert.match(noLabel.json.error.message, /label is required/);
    const notObject = await call(url, 'POST', '/v2/realm/bad', { ...admin, body: { label: 'x', data: [1] } });
    assert.equal(notObject.status, 400, notObject.text);
    assert.equal(notObject.json.error.code, 'invalid_data');
    assert.equal((await call(url, 'GET', '/v2/realm/bad', admin)).status, 404, 'nothing was created');
  });

  it('bounds data: 8 levels deep (the data object is level 1) and 64 KiB as JSON (400 invalid_data naming the limit)', async () => {
    const deepest = await call(url, 'POST', '/v2/realm/deep', { ...admin, body: { label: 'd', data: nested(8) } });
    assert.equal(deepest.status, 200, deepest.text);
    const tooDeep = await call(url, 'PATCH', '/v2/realm/deep', { ...admin, body: { data: nested(9) } });
    assert.equal(tooDeep.status, 400, tooDeep.text);
    assert.equal(tooDeep.json.error.code, 'invalid_data');
    assert.match(tooDeep.json.error.message, /is nested too deeply: data may hold at most 8 levels/);
    const deepArray = await call(url, 'PATCH', '/v2/realm/deep', { ...admin, body: { data: { a: JSON.parse('['.repeat(8) + ']'.repeat(8)) as unknown } } });
    assert.equal(deepArray.status, 400, deepArray.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/deep', admin)).json.data, nested(8), 'refused updates changed nothing');

    const big = 'x'.repeat(40 * 1024);
    const tooLarge = await call(url, 'POST', '/v2/realm/large', { ...admin, body: { label: 'l', data: { a: big, b: big } } });
    assert.equal(tooLarge.status, 400, tooLarge.text);
    assert.equal(tooLarge.json.error.code, 'invalid_data');
    assert.match(tooLarge.json.error.message, /at most 65536 bytes \(64 KiB\)/);
    // The limit holds for the merged data too: two halves that fit alone do not fit together.
    assert.equal((await call(url, 'POST', '/v2/realm/large', { ...admin, body: { label: 'l', data: { a: big } } })).status, 200);
    const merged = await call(url, 'PATCH', '/v2/realm/large', { ...admin, body: { label: 'changed', data: { b: big } } });
    assert.equal(merged.status, 400, merged.text);
    assert.match(merged.json.error.message, /after the merge/);
    assert.equal((await call(url, 'GET', '/v2/realm/large', admin)).json.label, 'l', 'a refused update changes nothing');
  });

  it('needs a token (401); writes and the list need scope admin (403); a realm token of any scope reads its own realm', async () => {
    for (const [method, path] of [['GET', '/v2/realm'], ['GET', '/v2/realm/fleet'], ['POST', '/v2/realm/x'], ['PATCH', '/v2/realm/fleet'], ['DELETE', '/v2/realm/fleet']] as const) {
      const res = await call(url, method, path, { body: method === 'POST' || method === 'PATCH' ? { label: 'x' } : undefined });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
      const bad = await call(url, method, path, { token: 'lcs_not_a_token' });
      assert.equal(bad.status, 401, `${method} ${path}: ${bad.text}`);
    }
    for (const token of [fleet.read, fleet.write]) {
      for (const [method, path] of [['GET', '/v2/realm'], ['POST', '/v2/realm/x'], ['PATCH', '/v2/realm/fleet'], ['DELETE', '/v2/realm/fleet']] as const) {
        const res = await call(url, method, path, { token, body: method === 'POST' || method === 'PATCH' ? { label: 'x' } : undefined });
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      }
      const own = await call(url, 'GET', '/v2/realm/fleet', { token });
      assert.equal(own.status, 200, own.text);
      assert.deepEqual(own.json, { id: 'fleet', label: null, data: {} });
      const other = await call(url, 'GET', '/v2/realm/acme', { token });
      assert.equal(other.status, 403, other.text);
    }
    // A token of scope admin (here fleet's) manages realms like LOCUS_ADMIN_TOKEN.
    const byRealmAdmin = await call(url, 'PATCH', '/v2/realm/fleet', { token: fleet.admin, body: { label: 'Fleet' } });
    assert.equal(byRealmAdmin.status, 200, byRealmAdmin.text);
    assert.equal((await call(url, 'GET', '/v2/realm/fleet', { token: fleet.read })).json.label, 'Fleet');
  });

  it('takes the token as ?token= or as a body property (not a data key)', async () => {
    const query = await call(url, 'GET', `/v2/realm/fleet?token=${fleet.read}`);
    assert.equal(query.status, 200, query.text);
    const list = await call(url, 'GET', `/v2/realm?token=${adminToken}`);
    assert.equal(list.status, 200, list.text);
    const body = await call(url, 'POST', '/v2/realm/tokened', { body: { label: 'T', token: adminToken } });
    assert.equal(body.status, 200, body.text);
    const patch = await call(url, 'PATCH', '/v2/realm/tokened', { body: { data: { a: 1 }, token: adminToken } });
    assert.equal(patch.status, 200, patch.text);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/tokened', admin)).json, { id: 'tokened', label: 'T', data: { a: 1 } });
    const disagree = await call(url, 'POST', '/v2/realm/tokened2', { ...admin, body: { label: 'T', token: fleet.admin } });
    assert.equal(disagree.status, 400, disagree.text);
  });

  it('answers other methods with 405 and Allow', async () => {
    const put = await call(url, 'PUT', '/v2/realm/fleet', { ...admin, body: { label: 'x' } });
    assert.equal(put.status, 405, put.text);
    assert.equal(put.headers.get('allow'), 'GET, POST, PATCH, DELETE');
    const post = await call(url, 'POST', '/v2/realm', { ...admin, body: { label: 'x' } });
    assert.equal(post.status, 405, post.text);
    assert.equal(post.headers.get('allow'), 'GET');
  });

  it('keeps the realm-scoped routes and the admin settings API working on a realm created here', async () => {
    await call(url, 'POST', '/v2/realm/ops', { ...admin, body: { label: 'Ops', data: { a: 1 } } });
    const settings = await call(url, 'PUT', '/admin/v1/realm/ops', { ...admin, body: { settings: { connectionTimeout: 45 } } });
    assert.equal(settings.status, 200, settings.text);
    const details = await call(url, 'GET', '/admin/v1/realm/ops', admin);
    assert.equal(details.json.settings.connectionTimeout, 45);
    assert.deepEqual((await call(url, 'GET', '/v2/realm/ops', admin)).json, { id: 'ops', label: 'Ops', data: { a: 1 } }, 'settings leave label and data');
    const token = await call(url, 'POST', '/admin/v1/realm/ops/token', { ...admin, body: { scope: 'write' } });
    const write = (token.json as { token: string }).token;
    const object = await call(url, 'POST', '/v2/realm/ops/object/truck', { token: write, body: { label: 'Truck' } });
    assert.equal(object.status, 200, object.text);
    assert.equal((await call(url, 'GET', '/v2/realm/ops/object/truck', { token: write })).json.label, 'Truck');
    const area = await call(url, 'POST', '/v2/realm/ops/area/yard', { token: write, body: { label: 'Yard', shape: { cx: 1, cy: 2, r: 10 } } });
    assert.equal(area.status, 200, area.text);
  });

  it('deleting a realm through /v2 removes it with its objects and tokens', async () => {
    const tokens = await makeRealm(url, 'doomed');
    assert.equal((await call(url, 'POST', '/v2/realm/doomed/object/car', { token: tokens.write, body: { label: 'Car' } })).status, 200);
    const deleted = await call(url, 'DELETE', '/v2/realm/doomed', admin);
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.json, { id: 'doomed', result: 'success' });
    assert.equal((await call(url, 'GET', '/v2/realm/doomed', admin)).status, 404);
    assert.ok(!('doomed' in (await call(url, 'GET', '/v2/realm', admin)).json));
    assert.equal((await call(url, 'GET', '/v2/realm/doomed/object/car', { token: tokens.write })).status, 401, 'its tokens are gone');
    // Created again, it starts empty.
    assert.equal((await call(url, 'POST', '/v2/realm/doomed', { ...admin, body: { label: 'Again' } })).status, 200);
    const again = await makeRealm(url, 'doomed');
    assert.equal((await call(url, 'GET', '/v2/realm/doomed/object/car', { token: again.read })).status, 404);
  });
});

describe('REST v2 realms, rate limit', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ rateLimit: 1, rateBurst: 3 });
  });
  after(async () => {
    await h.stop();
  });

  it('counts realm requests against the token like every request (429 with Retry-After)', async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 6; i++) {
      const res = await call(h.url, 'GET', '/v2/realm', { token: adminToken });
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers.get('retry-after');
    }
    assert.ok(statuses.includes(429), `statuses ${statuses.join(' ')}`);
    assert.notEqual(retryAfter, null);
  });
});
