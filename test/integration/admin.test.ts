/** The admin API, token lifecycle, realm deletion, restarts and graceful shutdown. */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, dumpStore, makeRealm, startHarness, type Harness } from '../support/harness.js';

describe('admin API', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.stop();
  });

  it('creates a realm with settings, reads it, lists it, updates it', async () => {
    const put = await call(h.url, 'PUT', '/admin/v1/realm/fleet', {
      token: adminToken,
      body: { settings: { connectionTimeout: 30 } },
    });
    assert.equal(put.status, 200);
    assert.deepEqual(put.json, { id: 'fleet', result: 'success' });
    const get = await call(h.url, 'GET', '/admin/v1/realm/fleet', { token: adminToken });
    assert.equal(get.status, 200);
    assert.deepEqual(get.json.settings, { connectionTimeout: 30, historyRetentionDays: 30, rateLimit: null });
    assert.deepEqual(get.json.tokens, []);
    const upd = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { settings: { historyRetentionDays: 0 } } });
    assert.equal(upd.status, 200);
    const again = await call(h.url, 'GET', '/admin/v1/realm/fleet', { token: adminToken });
    assert.deepEqual(again.json.settings, { connectionTimeout: 30, historyRetentionDays: 0, rateLimit: null });
    assert.equal(again.json.created, get.json.created);
    const list = await call(h.url, 'GET', '/admin/v1/realm', { token: adminToken });
    assert.deepEqual(Object.keys(list.json as object), ['fleet']);
  });

  it('rejects bad settings and changes nothing', async () => {
    const before = (await dumpStore(h.server.store));
    for (const settings of [{ connectionTimeout: 0 }, { connectionTimeout: 'x' }, { bogus: 1 }, { historyRetentionDays: -1 }]) {
      const res = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { settings } });
      assert.equal(res.status, 400, JSON.stringify(settings));
    }
    const unknown = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { setings: {} } });
    assert.equal(unknown.status, 400);
    assert.equal((await dumpStore(h.server.store)), before);
  });

  it('issues tokens shown once, stores only their hash, and revokes them', async () => {
    const issued = await call(h.url, 'POST', '/admin/v1/realm/fleet/token', { token: adminToken, body: { scope: 'write' } });
    assert.equal(issued.status, 200);
    const { id, token, scope } = issued.json as { id: string; token: string; scope: string };
    assert.equal(scope, 'write');
    assert.ok(token.length >= 40);
    assert.ok(!(await dumpStore(h.server.store)).includes(token), 'the secret must never be stored');
    const write = await call(h.url, 'PUT', '/v2/realm/fleet/object/a', { token, body: { label: 'A' } });
    assert.equal(write.status, 200);
    const details = await call(h.url, 'GET', '/admin/v1/realm/fleet', { token: adminToken });
    assert.deepEqual(
      (details.json.tokens as { id: string; scope: string }[]).map((t) => [t.id, t.scope]),
      [[id, 'write']],
    );
    const revoke = await call(h.url, 'DELETE', `/admin/v1/realm/fleet/token/${id}`, { token: adminToken });
    assert.deepEqual(revoke.json, { id, result: 'success' });
    const denied = await call(h.url, 'GET', '/v2/realm/fleet/object/a', { token });
    assert.equal(denied.status, 401);
    const twice = await call(h.url, 'DELETE', `/admin/v1/realm/fleet/token/${id}`, { token: adminToken });
    assert.equal(twice.status, 404);
  });

  it('rejects a bad scope', async () => {
    const res = await call(h.url, 'POST', '/admin/v1/realm/fleet/token', { token: adminToken, body: { scope: 'root' } });
    assert.equal(res.status, 400);
    const missing = await call(h.url, 'POST', '/admin/v1/realm/ghost/token', { token: adminToken, body: { scope: 'read' } });
    assert.equal(missing.status, 404);
  });

  it('needs an admin-scoped token', async () => {
    const tokens = await makeRealm(h.url, 'other');
    const asWrite = await call(h.url, 'GET', '/admin/v1/realm', { token: tokens.write });
    assert.equal(asWrite.status, 403);
    const none = await call(h.url, 'GET', '/admin/v1/realm');
    assert.equal(none.status, 401);
    const asRealmAdmin = await call(h.url, 'GET', '/admin/v1/realm', { token: tokens.admin });
    assert.equal(asRealmAdmin.status, 200);
  });

  it('deleting a realm removes its data and revokes its tokens, and nothing else', async () => {
    const doomed = await makeRealm(h.url, 'doomed');
    const kept = await makeRealm(h.url, 'kept');
    for (const [realm, token] of [['doomed', doomed.write], ['kept', kept.write]] as const) {
      await call(h.url, 'PUT', `/v2/realm/${realm}/object/same`, { token, body: { location: { longitude: 1, latitude: 2 } } });
      await call(h.url, 'POST', `/v2/realm/${realm}/area/same`, { token, body: { label: 'Same', shape: { cx: 1, cy: 2, r: 10 } } });
    }
    const del = await call(h.url, 'DELETE', '/admin/v1/realm/doomed', { token: adminToken });
    assert.deepEqual(del.json, { id: 'doomed', result: 'success' });
    assert.equal((await call(h.url, 'GET', '/v2/realm/doomed/object/same', { token: doomed.write })).status, 401);
    assert.equal((await call(h.url, 'GET', '/v2/realm/doomed/object/same', { token: adminToken })).status, 404);
    assert.equal((await call(h.url, 'GET', '/v2/realm/kept/object/same', { token: kept.read })).status, 200);
    assert.equal((await call(h.url, 'GET', '/v2/realm/kept/area/same', { token: kept.read })).status, 200);
    const recreated = await call(h.url, 'PUT', '/admin/v1/realm/doomed', { token: adminToken, body: {} });
    assert.equal(recreated.status, 200);
    assert.equal((await call(h.url, 'GET', '/v2/realm/doomed/object/same', { token: adminToken })).status, 404);
    assert.equal((await call(h.url, 'DELETE', '/admin/v1/realm/nope', { token: adminToken })).status, 404);
  });
});

describe('persistence and lifecycle', () => {
  it('data survives a restart of the server', async () => {
    const h = await startHarness();
    try {
      const tokens = await makeRealm(h.url, 'keep');
      const body = { label: 'Persist', location: { longitude: 8.5, latitude: 47.4, time: '2026-03-01T10:00:00Z' }, data: { n: 1 } };
      assert.equal((await call(h.url, 'PUT', '/v2/realm/keep/object/p%2F1', { token: tokens.write, body })).status, 200);
      await call(h.url, 'POST', '/v2/realm/keep/area/a1', { token: tokens.write, body: { label: 'A', shape: { cx: 8.5, cy: 47.4, r: 100 } } });
      const before = await call(h.url, 'GET', '/v2/realm/keep/object/p%2F1', { token: tokens.read });
      await h.restart();
      const afterRestart = await call(h.url, 'GET', '/v2/realm/keep/object/p%2F1', { token: tokens.read });
      assert.equal(afterRestart.status, 200);
      assert.deepEqual(
        { ...afterRestart.json, connectionStatus: undefined },
        { ...before.json, connectionStatus: undefined },
      );
      assert.equal(afterRestart.json.location.time, '2026-03-01T10:00:00.000Z');
      const area = await call(h.url, 'GET', '/v2/realm/keep/area/a1', { token: tokens.read });
      assert.deepEqual(area.json, { id: 'a1', label: 'A', shape: { cx: 8.5, cy: 47.4, r: 100 }, data: {} });
    } finally {
      await h.stop();
    }
  });

  it('creates realm demo with a write token on a fresh store, once', async () => {
    const h = await startHarness({ demoRealm: true });
    try {
      const demo = h.server.demoToken;
      assert.ok(demo);
      assert.equal(demo.scope, 'write');
      const write = await call(h.url, 'PUT', '/v2/realm/demo/object/first', { token: demo.token, body: { label: 'hi' } });
      assert.equal(write.status, 200);
      await h.restart();
      assert.equal(h.server.demoToken, null);
    } finally {
      await h.stop();
    }
  });

  it('finishes in-flight requests on shutdown and then refuses connections', async () => {
    const h = await startHarness();
    const tokens = await makeRealm(h.url, 'shut');
    const objects = Array.from({ length: 2000 }, (_, i) => ({ id: `o${i}`, location: { longitude: i / 100, latitude: 1 } }));
    const body = Buffer.from(JSON.stringify({ objects }));
    // Send the headers and half the body, start the shutdown, then send the rest:
    // the request is in flight for certain while the server closes.
    const reply = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${h.url}/v2/realm/shut/object`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.write}`, 'content-type': 'application/json', 'content-length': body.length },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.subarray(0, body.length >> 1));
      setTimeout(() => {
        closing = h.server.close();
        setTimeout(() => req.end(body.subarray(body.length >> 1)), 50);
      }, 100);
    });
    let closing: Promise<void> | undefined;
    const res = await reply;
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.text), { result: 'success', count: 2000 });
    await closing;
    await assert.rejects(fetch(`${h.url}/healthz`));
    await h.restart();
    const list = await call(h.url, 'GET', '/v2/realm/shut/object?limit=10000', { token: tokens.read });
    assert.equal(Object.keys(list.json as object).length, 2000);
    await h.stop();
  });
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After past the burst, per token, and changes nothing', async () => {
    const h = await startHarness({ rateLimit: 1, rateBurst: 5 });
    try {
      const tokens = await makeRealm(h.url, 'rl');
      for (let i = 0; i < 5; i++) {
        assert.equal((await call(h.url, 'PUT', `/v2/realm/rl/object/o${i}`, { token: tokens.write, body: {} })).status, 200);
      }
      const before = (await dumpStore(h.server.store));
      const limited = await call(h.url, 'PUT', '/v2/realm/rl/object/o9', { token: tokens.write, body: {} });
      assert.equal(limited.status, 429);
      assert.equal(limited.json.error.code, 'rate_limited');
      assert.equal(limited.headers.get('retry-after'), '1');
      assert.equal((await dumpStore(h.server.store)), before);
      assert.equal((await call(h.url, 'GET', '/v2/realm/rl/object', { token: tokens.read })).status, 200);
    } finally {
      await h.stop();
    }
  });
});
