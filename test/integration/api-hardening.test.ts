/**
 * Hardening of the REST and v1 edges (issue #19): fixes dated ahead of the server clock,
 * `>=`/`<=` filters, clear messages for bodies and parameters of the wrong form, the
 * WebSocket endpoint asked for without an upgrade, unencoded slashes in ids, zero-area
 * rectangles and the answers of object writes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, dumpStore, makeRealm, startHarness, type Harness, type Reply } from '../support/harness.js';
import { postV1 } from '../support/v1-clients.js';

const t0 = Date.parse('2030-06-01T12:00:00.000Z');
let nowMs = t0;
const iso = (ms: number): string => new Date(ms).toISOString();

let h: Harness;
let tokens: { read: string; write: string; admin: string };

before(async () => {
  // The clock mostly stands still here: no rate limit refills, so none may bind.
  h = await startHarness({ maxFutureSkewS: 300, rateLimit: 1_000_000, rateBurst: 1_000_000 }, () => nowMs);
  tokens = await makeRealm(h.url, 'demo');
});
after(async () => {
  await h.stop();
});

const put = (path: string, body: unknown): Promise<Reply> => call(h.url, 'PUT', `/v2/realm/demo${path}`, { token: tokens.write, body });
const get = (path: string): Promise<Reply> => call(h.url, 'GET', `/v2/realm/demo${path}`, { token: tokens.read });

/** Asserts a v2 error answer: status, code and a message matching `message`. */
function assertError(reply: Reply, status: number, code: string, message: RegExp | string): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.json?.result, 'error', reply.text);
  assert.equal(reply.json.error.code, code, reply.text);
  if (typeof message === 'string') assert.equal(reply.json.error.message, message);
  else assert.match(reply.json.error.message, message);
}

/** Runs `write` and asserts that it left every table as it was. */
async function unchanged(write: () => Promise<void>): Promise<void> {
  const before = (await dumpStore(h.server.store));
  await write();
  assert.equal((await dumpStore(h.server.store)), before, 'a rejected write changed the stored data');
}

void describe('fixes dated ahead of the server clock (LOCUS_MAX_FUTURE_SKEW_S)', () => {
  void it('REST: a fix more than the skew ahead is a 400 invalid_location naming the field; one within it is stored', async () => {
    await unchanged(async () => {
      const far = await put('/object/truck%2F1', { location: { longitude: 1, latitude: 2, time: '9999-12-31T00:00:00Z' } });
      assertError(far, 400, 'invalid_location', /^location\.time is 9999-12-31T00:00:00\.000Z, more than 300 s ahead of the server clock \(2030-06-01T12:00:00\.000Z\)/);
      const justOver = await put('/object/truck%2F1', { location: { longitude: 1, latitude: 2, time: iso(t0 + 300_001) } });
      assertError(justOver, 400, 'invalid_location', /more than 300 s ahead/);
    });
    const within = await put('/object/truck%2F1', { location: { longitude: 1, latitude: 2, time: iso(t0 + 300_000) } });
    assert.equal(within.status, 200, within.text);
    // A real fix later on replaces it: the bound keeps the current location replaceable.
    nowMs = t0 + 600_000;
    assert.equal((await put('/object/truck%2F1', { location: { longitude: 3, latitude: 4 } })).status, 200);
    assert.deepEqual((await get('/object/truck%2F1')).json.location, { longitude: 3, latitude: 4, time: iso(nowMs) });
  });

  void it('REST bulk: one entry too far ahead rejects the whole bulk, naming its index and id', async () => {
    await unchanged(async () => {
      const reply = await call(h.url, 'POST', '/v2/realm/demo/object', {
        token: tokens.write,
        body: {
          objects: [
            { id: 'bus/1', location: { longitude: 1, latitude: 1 } },
            { id: 'bus/2', location: { longitude: 1, latitude: 1, time: '2031-01-01T00:00:00Z' } },
          ],
        },
      });
      assertError(reply, 400, 'invalid_location', /^objects\[1\]\.location\.time \(object "bus\/2"\) is 2031-01-01T00:00:00\.000Z, more than 300 s ahead/);
    });
    assert.equal((await get('/object/bus%2F1')).status, 404, 'nothing of the bulk is stored');
  });

  void it('v1 (obj set and blk over /v1/http) rejects them alike', async () => {
    await unchanged(async () => {
      const { status, json } = await postV1(h.url, tokens.write, [
        { typ: 'obj', act: 'set', cid: 'u', id: 'v1', loc: { lon: 0, lat: 0, tim: '9999-12-31T00:00:00Z' } },
        { typ: 'obj', act: 'blk', cid: 'b', dat: { objects: [{ id: 'ok' }, { id: 'late', location: { longitude: 0, latitude: 0, time: '9999-12-31T00:00:00Z' } }] } },
      ]);
      assert.equal(status, 200);
      assert.equal(json[0].res, 'err');
      assert.equal(json[0].erc, 400);
      assert.match(json[0].err, /^loc\.tim is 9999-12-31T00:00:00\.000Z, more than 300 s ahead/);
      assert.equal(json[1].res, 'err');
      assert.equal(json[1].erc, 400);
      assert.match(json[1].err, /^objects\[1\]\.location\.time \(object "late"\)/);
    });
  });
});

void describe('list filters with >= and <=', () => {
  void it('fuel>=0.5 and fuel<=0.5 select by number, inclusive', async () => {
    for (const [id, fuel] of [['f/low', 0.2], ['f/half', 0.5], ['f/full', 1]] as const) {
      assert.equal((await put(`/object/${encodeURIComponent(id)}`, { data: { fuel } })).status, 200);
    }
    const ids = async (filter: string): Promise<string[]> => {
      const reply = await get(`/object?${new URLSearchParams({ filter, fields: 'fuel' }).toString()}`);
      assert.equal(reply.status, 200, reply.text);
      return Object.keys(reply.json as object);
    };
    assert.deepEqual(await ids('fuel>=0.5'), ['f/full', 'f/half']);
    assert.deepEqual(await ids('fuel<=0.5'), ['f/half', 'f/low']);
    assert.deepEqual(await ids('fuel>=0.5,fuel<=0.5'), ['f/half']);
    assert.deepEqual(await ids('id>=f/half,id<=f/m'), ['f/half', 'f/low']);
  });

  void it('a bare value that begins with an operator character is a 400 that says to quote it', async () => {
    assertError(await get('/object?filter=fuel%3E%3D%3D1'), 400, 'invalid_filter', /begins with an operator character .*quoted string "=1"/);
  });
});

void describe('clear messages for requests of the wrong form', () => {
  void it('a JSON body of null or "hi" must be a JSON object; a syntax error is still invalid_json', async () => {
    const raw = (rawBody: string): Promise<Reply> =>
      call(h.url, 'PUT', '/v2/realm/demo/object/x', { token: tokens.write, rawBody, headers: { 'content-type': 'application/json' } });
    await unchanged(async () => {
      assertError(await raw('null'), 400, 'invalid_request', 'the request body must be a JSON object (got null)');
      assertError(await raw('"hi"'), 400, 'invalid_request', 'the request body must be a JSON object (got the string "hi")');
      assertError(await raw('5'), 400, 'invalid_request', 'the request body must be a JSON object (got 5)');
      assertError(await raw('{"label": '), 400, 'invalid_json', 'the request body is not valid JSON');
      const area = await call(h.url, 'POST', '/v2/realm/demo/area/a', { token: tokens.write, rawBody: 'true', headers: { 'content-type': 'application/json' } });
      assertError(area, 400, 'invalid_request', 'the request body must be a JSON object (got true)');
    });
  });

  void it('/v1/http, which takes an array of actions, says it must be a JSON array', async () => {
    const reply = await postV1(h.url, tokens.read, 'null');
    assert.equal(reply.status, 400);
    assert.equal(reply.json.error.code, 'invalid_request');
    assert.equal(reply.json.error.message, 'the request body must be a JSON array (got null)');
    const syntax = await postV1(h.url, tokens.read, '[{');
    assert.equal(syntax.json.error.code, 'invalid_json');
  });

  void it('a query parameter given twice is named', async () => {
    assertError(await get('/object?limit=1&limit=2'), 400, 'invalid_query', 'parameter `limit` given twice; give each query parameter once');
    assertError(await get('/object?fields=a&fields=b&fields=c'), 400, 'invalid_query', 'parameter `fields` given 3 times; give each query parameter once');
    assertError(await get('/object?filter=a%3D1&filter=b%3D2'), 400, 'invalid_filter', /^parameter `filter` given twice/);
    assertError(await get('/object/x/history?from=2030-01-01T00:00:00Z&from=2030-01-02T00:00:00Z'), 400, 'invalid_query', /^parameter `from` given twice/);
  });

  void it('GET /v1/ws without an upgrade is 426 Upgrade Required with Upgrade: websocket', async () => {
    const reply = await call(h.url, 'GET', '/v1/ws');
    assertError(reply, 426, 'upgrade_required', /WebSocket/);
    assert.equal(reply.headers.get('upgrade'), 'websocket');
    const post = await call(h.url, 'POST', '/v1/ws', { body: {} });
    assert.equal(post.status, 405);
  });

  void it('an object or area path with an unencoded / in the id is a 404 that says to encode it as %2F', async () => {
    assertError(
      await get('/object/truck/1'),
      404,
      'not_found',
      'no route for GET /v2/realm/demo/object/truck/1; encode a / in an id as %2F (e.g. /v2/realm/demo/object/truck%2F1)',
    );
    assertError(await call(h.url, 'DELETE', '/v2/realm/demo/area/zone/a/b', { token: tokens.write }), 404, 'not_found', /encode a \/ in an id as %2F \(e\.g\. \/v2\/realm\/demo\/area\/zone%2Fa%2Fb\)/);
    // Other unknown paths keep the plain message.
    assertError(await get('/nothing/here'), 404, 'not_found', 'no route for GET /v2/realm/demo/nothing/here');
  });
});

void describe('zero-area rectangles', () => {
  void it('are a 400 invalid_shape as areas and as list query shapes', async () => {
    await unchanged(async () => {
      for (const shape of [{ w: 1, n: 2, e: 1, s: 0 }, { w: 0, n: 1, e: 2, s: 1 }]) {
        const area = await call(h.url, 'POST', '/v2/realm/demo/area/flat', { token: tokens.write, body: { label: 'Flat', shape } });
        assertError(area, 400, 'invalid_shape', /^shape encloses zero area/);
        assertError(await get(`/object?${new URLSearchParams({ shape: JSON.stringify(shape) }).toString()}`), 400, 'invalid_shape', /^shape encloses zero area/);
      }
    });
    const ok = await call(h.url, 'POST', '/v2/realm/demo/area/flat', { token: tokens.write, body: { label: 'Flat', shape: { w: 1, n: 2, e: 1.5, s: 0 } } });
    assert.equal(ok.status, 200, ok.text);
    const update = await call(h.url, 'PATCH', '/v2/realm/demo/area/flat', { token: tokens.write, body: { shape: { w: 1, n: 2, e: 1.5, s: 2 } } });
    assertError(update, 400, 'invalid_shape', /^shape encloses zero area/);
  });
});

void describe('object writes answer like area writes', () => {
  void it('PUT, POST and DELETE of an object answer {"id", "result": "success"}', async () => {
    assert.deepEqual((await put('/object/car%2F9', { label: 'Car' })).json, { id: 'car/9', result: 'success' });
    const post = await call(h.url, 'POST', '/v2/realm/demo/object/car%2F9', { token: tokens.write, body: { label: 'Car 9' } });
    assert.deepEqual(post.json, { id: 'car/9', result: 'success' });
    const del = await call(h.url, 'DELETE', '/v2/realm/demo/object/car%2F9', { token: tokens.write });
    assert.deepEqual(del.json, { id: 'car/9', result: 'success' });
    assert.equal(del.text, '{"id":"car/9","result":"success"}');
  });
});
