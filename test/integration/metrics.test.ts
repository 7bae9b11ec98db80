/**
 * GET /metrics against a real server, real sockets and the real promtool: a scripted
 * workload (REST writes and reads, v1 over WebSocket, TCP and HTTP, a geofence crossing, a
 * rejected request, authentication failures, a rate-limited client) and the exact counter
 * and histogram-count increments it caused; `promtool check metrics` accepts the scrape;
 * no label value is an object id or a token the workload used.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { changes, delta, scrape, sumOf, valueOf, type Scrape } from '../support/prometheus-text.js';
import { toolPath } from '../support/tools.js';
import { connectTcp, connectWs, postV1, type V1Client } from '../support/v1-clients.js';

const REALM = 'metrics-fleet';
const OBJ = 'truck-9f2c71';
const OBJ2 = 'truck-4410be';
const BULK = ['van-0c11aa', 'van-77d3e2'];
const GEO = 'bike-5e0f9d';
const WS_OBJ = 'ws-obj-a81c3f';
const TCP_OBJ = 'tcp-obj-62b90d';
const AREA = 'depot-3c7e55';
const BAD_TOKEN = 'not-a-token-6b1f0e9a2d';
const BAD_V1_TOKEN = 'not-a-v1-token-c0ffee11';

const OBJECT_ROUTE = '/v2/realm/:realm/object/:id';
const GATED = '/v2/realm/:realm/*';

/** Runs promtool check metrics on a scrape: its exit code and everything it printed. */
function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('metrics: a scripted workload and the exact increments it causes', () => {
  let h: Harness;
  let tokens: { read: string; write: string; admin: string };
  let s0: Scrape;
  let s1: Scrape;
  /** Expected growth of locus_http_requests_total, by "METHOD status route". */
  const expectedHttp = new Map<string, number>();
  let httpCalls = 0;

  /** One REST call whose status the test asserts and whose series it expects to grow by one. */
  async function rest(method: string, path: string, route: string, status: number, options: Parameters<typeof call>[3] = {}): Promise<void> {
    const res = await call(h.url, method, path, options);
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    const key = `${method} ${status} ${route}`;
    expectedHttp.set(key, (expectedHttp.get(key) ?? 0) + 1);
    httpCalls++;
  }

  before(async () => {
    h = await startHarness();
    tokens = await makeRealm(h.url, REALM);
    s0 = await scrape(h.url);
    const path = (id: string): string => `/v2/realm/${REALM}/object/${id}`;
    const at = (longitude: number, latitude: number): { location: { longitude: number; latitude: number } } => ({ location: { longitude, latitude } });

    // REST writes (2 fixes) and a bulk write (2 fixes).
    await rest('PUT', path(OBJ), OBJECT_ROUTE, 200, { token: tokens.write, body: at(1, 1) });
    await rest('POST', path(OBJ2), OBJECT_ROUTE, 200, { token: tokens.write, body: at(2, 2) });
    await rest('POST', `/v2/realm/${REALM}/object`, '/v2/realm/:realm/object', 200, {
      token: tokens.write,
      body: { objects: BULK.map((id, k) => ({ id, ...at(3 + k, 3) })) },
    });
    // REST reads.
    await rest('GET', path(OBJ), OBJECT_ROUTE, 200, { token: tokens.read });
    await rest('GET', `/v2/realm/${REALM}/object`, '/v2/realm/:realm/object', 200, { token: tokens.read });
    // A geofence crossing: an area, an object outside, then in (ent), then out again (exi): 3 fixes.
    await rest('POST', `/v2/realm/${REALM}/area/${AREA}`, '/v2/realm/:realm/area/:id', 200, {
      token: tokens.write,
      body: { label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 500 } },
    });
    await rest('PUT', path(GEO), OBJECT_ROUTE, 200, { token: tokens.write, body: at(13.5, 52.6) });
    await rest('PUT', path(GEO), OBJECT_ROUTE, 200, { token: tokens.write, body: at(13.4, 52.5) });
    await rest('PUT', path(GEO), OBJECT_ROUTE, 200, { token: tokens.write, body: at(13.5, 52.6) });
    // A rejected request (bad input), refusals, and a path no route has.
    await rest('PUT', path(OBJ), OBJECT_ROUTE, 400, { token: tokens.write, body: at(0, 200) });
    await rest('GET', path(OBJ), GATED, 401, {});
    await rest('GET', path(OBJ), GATED, 401, { token: BAD_TOKEN });
    await rest('PUT', path(OBJ), GATED, 403, { token: tokens.read, body: at(1, 1) });
    await rest('GET', `/no/such/path/${OBJ}`, 'unmatched', 404, {});

    // v1 over HTTP.
    const overHttp = await postV1(h.url, tokens.write, [{ typ: 'sys', act: 'pin', cid: 'p' }]);
    assert.equal(overHttp.status, 200);
    assert.equal(overHttp.json[0].res, 'suc');
    expectedHttp.set('POST 200 /v1/http', 1);
    httpCalls++;

    // v1 over WebSocket: two writes (2 fixes), a ping, an unknown act and an unknown typ.
    const ws = await connectWs(h.url, tokens.write);
    assert.equal((await ws.one({ typ: 'obj', act: 'set', id: WS_OBJ, rea: REALM, loc: { lon: 20, lat: 20 } })).res, 'suc');
    assert.equal((await ws.one({ typ: 'obj', act: 'set', id: WS_OBJ, rea: REALM, loc: { lon: 21, lat: 21 } })).res, 'suc');
    assert.equal((await ws.one({ typ: 'sys', act: 'pin' })).res, 'suc');
    assert.equal((await ws.one({ typ: 'obj', act: `bogus-${OBJ}` })).erc, 400);
    assert.equal((await ws.one({ typ: `typ-${OBJ2}`, act: 'set' })).erc, 400);
    // v1 over TCP: one write (1 fix) and a ping.
    const tcp = await connectTcp(h.server.tcpPort, tokens.write);
    assert.equal((await tcp.one({ typ: 'obj', act: 'set', id: TCP_OBJ, rea: REALM, loc: { lon: 30, lat: 30 } })).res, 'suc');
    assert.equal((await tcp.one({ typ: 'sys', act: 'pin' })).res, 'suc');
    // A WebSocket sign-in with a token that is not valid.
    const refused: V1Client = await connectWs(h.url);
    refused.sendText(`Bearer ${BAD_V1_TOKEN}`);
    const answer = await refused.next();
    assert.equal(answer[0].res, 'err');
    await Promise.all([ws.close(), tcp.close(), refused.close()]);
    // Connections close on the server a little after the client's close.
    await waitFor('the connections to close', async () => sumOf(await scrape(h.url), 'locus_connections_open') === 0);
    s1 = await scrape(h.url);
  });

  after(async () => {
    await h.stop();
  });

  it('REST: every request counted once, by method, route template and status; durations alike', () => {
    // The first scrape, answered before the workload, and the polls of the connection gauge are requests too.
    const scrapes = changes(s0, s1, 'locus_http_requests_total').get(JSON.stringify([['method', 'GET'], ['route', '/metrics'], ['status', '200']])) ?? 0;
    assert.ok(scrapes >= 1);
    for (const [key, count] of expectedHttp) {
      const [method, status, route] = key.split(' ') as [string, string, string];
      const labels = { method, route, status };
      assert.equal(delta(s0, s1, 'locus_http_requests_total', labels), count, `requests ${key}`);
      assert.equal(delta(s0, s1, 'locus_http_request_duration_seconds_count', labels), count, `duration count ${key}`);
    }
    assert.equal(sumOf(s1, 'locus_http_requests_total') - sumOf(s0, 'locus_http_requests_total'), httpCalls + scrapes, 'no request counted that the workload did not make');
    assert.equal(sumOf(s1, 'locus_http_request_duration_seconds_count') - sumOf(s0, 'locus_http_request_duration_seconds_count'), httpCalls + scrapes);
  });

  it('v1: actions by transport, typ, act and result code; unknown typ and act collapse to "unknown"', () => {
    const expected: [string, string, string, string, number][] = [
      ['http', 'sys', 'pin', '200', 1],
      ['ws', 'obj', 'set', '200', 2],
      ['ws', 'sys', 'pin', '200', 1],
      ['ws', 'obj', 'unknown', '400', 1],
      ['ws', 'unknown', 'unknown', '400', 1],
      ['tcp', 'obj', 'set', '200', 1],
      ['tcp', 'sys', 'pin', '200', 1],
    ];
    for (const [transport, typ, act, status, count] of expected) {
      assert.equal(delta(s0, s1, 'locus_v1_actions_total', { transport, typ, act, status }), count, `${transport} ${typ} ${act} ${status}`);
    }
    assert.equal(sumOf(s1, 'locus_v1_actions_total') - sumOf(s0, 'locus_v1_actions_total'), 8);
    const durations: [string, string, string, number][] = [
      ['http', 'sys', 'pin', 1],
      ['ws', 'obj', 'set', 2],
      ['ws', 'sys', 'pin', 1],
      ['ws', 'obj', 'unknown', 1],
      ['ws', 'unknown', 'unknown', 1],
      ['tcp', 'obj', 'set', 1],
      ['tcp', 'sys', 'pin', 1],
    ];
    for (const [transport, typ, act, count] of durations) {
      assert.equal(delta(s0, s1, 'locus_v1_action_duration_seconds_count', { transport, typ, act }), count, `${transport} ${typ} ${act}`);
    }
  });

  it('locations ingested, per realm: one per fix stored (REST 7, WebSocket 2, TCP 1)', () => {
    assert.equal(delta(s0, s1, 'locus_locations_ingested_total', { realm: REALM }), 10);
  });

  it('geofence events by kind: one entry, one exit', () => {
    assert.equal(delta(s0, s1, 'locus_geofence_events_total', { kind: 'ent', realm: REALM }), 1);
    assert.equal(delta(s0, s1, 'locus_geofence_events_total', { kind: 'exi', realm: REALM }), 1);
  });

  it('connections: opened by transport, none open once closed', () => {
    assert.equal(delta(s0, s1, 'locus_connections_opened_total', { transport: 'ws' }), 2);
    assert.equal(delta(s0, s1, 'locus_connections_opened_total', { transport: 'tcp' }), 1);
    assert.equal(valueOf(s1, 'locus_connections_open', { transport: 'ws' }), 0);
    assert.equal(valueOf(s1, 'locus_connections_open', { transport: 'tcp' }), 0);
  });

  it('authentication failures by protocol and reason', () => {
    assert.equal(delta(s0, s1, 'locus_auth_failures_total', { protocol: 'rest', reason: 'missing' }), 1);
    assert.equal(delta(s0, s1, 'locus_auth_failures_total', { protocol: 'rest', reason: 'invalid' }), 1);
    assert.equal(delta(s0, s1, 'locus_auth_failures_total', { protocol: 'rest', reason: 'forbidden' }), 1);
    assert.equal(delta(s0, s1, 'locus_auth_failures_total', { protocol: 'v1', reason: 'invalid' }), 1);
    assert.equal(sumOf(s1, 'locus_auth_failures_total') - sumOf(s0, 'locus_auth_failures_total'), 4);
    assert.equal(sumOf(s1, 'locus_rate_limited_total') - sumOf(s0, 'locus_rate_limited_total'), 0);
  });

  it('store, bus, realms and build: timed and reported', async () => {
    assert.ok(delta(s0, s1, 'locus_store_operation_duration_seconds_count', { operation: 'objects.upsertMany', outcome: 'ok' }) >= 1);
    assert.ok(delta(s0, s1, 'locus_bus_publish_duration_seconds_count') >= 1);
    assert.equal(valueOf(s1, 'locus_store_up'), 1);
    assert.equal(valueOf(s1, 'locus_bus_connected'), 1);
    assert.equal(valueOf(s1, 'locus_bus_messages_dropped_total'), 0);
    assert.equal(valueOf(s1, 'locus_realms'), (await h.server.store.realms.list()).length);
    const build = s1.samples.filter((s) => s.name === 'locus_build_info');
    assert.equal(build.length, 1);
    assert.equal(build[0]?.value, 1);
    assert.equal(build[0]?.labels.nodejs, process.version);
    assert.match(build[0]?.labels.version ?? '', /^\d+\.\d+\.\d+/);
    // Exactly what two reads by id cost the store.
    const before2 = await scrape(h.url);
    await rest('GET', `/v2/realm/${REALM}/object/${OBJ}`, OBJECT_ROUTE, 200, { token: tokens.read });
    await rest('GET', `/v2/realm/${REALM}/object/${OBJ2}`, OBJECT_ROUTE, 200, { token: tokens.read });
    const after2 = await scrape(h.url);
    assert.equal(delta(before2, after2, 'locus_store_operation_duration_seconds_count', { operation: 'objects.get', outcome: 'ok' }), 2);
  });

  it('promtool check metrics accepts the scrape, without a lint problem', () => {
    const { status, output } = promtoolCheck(s1.text);
    assert.equal(output, '', output);
    assert.equal(status, 0);
  });

  it('no label value is an object id, an area id or a token the workload used', () => {
    const secrets = [OBJ, OBJ2, ...BULK, GEO, WS_OBJ, TCP_OBJ, AREA, BAD_TOKEN, BAD_V1_TOKEN, tokens.read, tokens.write, tokens.admin];
    for (const sample of s1.samples) {
      for (const value of Object.values(sample.labels)) {
        for (const secret of secrets) assert.ok(!value.includes(secret), `${sample.name} has a label value with ${secret}`);
      }
    }
    for (const secret of secrets) assert.ok(!s1.text.includes(secret), `the scrape holds ${secret}`);
  });
});

describe('metrics: a rate-limited client', () => {
  let h: Harness;
  // The clock stands still: a token's bucket holds its burst and never refills.
  const now = Date.now();

  before(async () => {
    h = await startHarness({ rateLimit: 1, rateBurst: 2 }, () => now);
  });

  after(async () => {
    await h.stop();
  });

  it('counts each 429 of REST and of v1 actions', async () => {
    await h.server.realms.put('default', 'slow', {});
    const restToken = (await h.server.realms.createToken('default', 'slow', { scope: 'write' })).token;
    const v1Token = (await h.server.realms.createToken('default', 'slow', { scope: 'write' })).token;
    const s0 = await scrape(h.url);
    const statuses: number[] = [];
    for (let k = 0; k < 5; k++) statuses.push((await call(h.url, 'GET', '/v2/realm/slow/object', { token: restToken })).status);
    assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
    const tcp = await connectTcp(h.server.tcpPort, v1Token);
    const codes: (number | undefined)[] = [];
    for (let k = 0; k < 4; k++) codes.push((await tcp.one({ typ: 'sys', act: 'pin' })).erc);
    await tcp.close();
    assert.deepEqual(codes, [undefined, undefined, 429, 429]);
    const s1 = await scrape(h.url);
    assert.equal(delta(s0, s1, 'locus_rate_limited_total', { protocol: 'rest' }), 3);
    assert.equal(delta(s0, s1, 'locus_rate_limited_total', { protocol: 'v1' }), 2);
    assert.equal(delta(s0, s1, 'locus_http_requests_total', { method: 'GET', route: GATED, status: '429' }), 3);
    assert.equal(delta(s0, s1, 'locus_http_requests_total', { method: 'GET', route: '/v2/realm/:realm/object', status: '200' }), 2);
    assert.equal(delta(s0, s1, 'locus_v1_actions_total', { transport: 'tcp', typ: 'sys', act: 'pin', status: '429' }), 2);
    assert.equal(delta(s0, s1, 'locus_v1_actions_total', { transport: 'tcp', typ: 'sys', act: 'pin', status: '200' }), 2);
    assert.equal(sumOf(s1, 'locus_auth_failures_total') - sumOf(s0, 'locus_auth_failures_total'), 0);
    const { status, output } = promtoolCheck(s1.text);
    assert.equal(output, '', output);
    assert.equal(status, 0);
  });
});

describe('metrics: a subscriber that does not read', () => {
  it('counts the events dropped for it, by transport, as the gateway does; deliveries to subscribers are timed', async () => {
    const h = await startHarness({ sendBufferBytes: 64 * 1024, slowConsumerMs: 60_000 });
    try {
      const tokens = await makeRealm(h.url, 'flow');
      const slow = await connectTcp(h.server.tcpPort, tokens.read);
      assert.equal((await slow.one({ typ: 'sub', act: 'sub', dat: {} })).res, 'suc');
      const s0 = await scrape(h.url);
      slow.socket.pause();
      const writer = await connectWs(h.url, tokens.write);
      const label = 'x'.repeat(1000);
      for (let batch = 0; batch < 40 && h.server.v1Stats().droppedEvents === 0; batch++) {
        const objects = Array.from({ length: 250 }, (_, i) => ({ id: `o${i}`, label, location: { longitude: batch * 0.01, latitude: i * 0.001 } }));
        const [reply] = await writer.request([{ typ: 'obj', act: 'blk', cid: batch, dat: { objects } }], 10_000);
        assert.equal(reply.res, 'suc', JSON.stringify(reply));
      }
      // The events of the last batch are still being delivered after its reply: wait until no more are dropped.
      let dropped = -1;
      while (dropped !== h.server.v1Stats().droppedEvents) {
        dropped = h.server.v1Stats().droppedEvents;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.ok(dropped > 0, 'the server dropped events for the subscriber that does not read');
      const s1 = await scrape(h.url);
      assert.equal(h.server.v1Stats().droppedEvents, dropped);
      assert.equal(delta(s0, s1, 'locus_subscriber_messages_dropped_total', { transport: 'tcp' }), dropped);
      assert.equal(delta(s0, s1, 'locus_subscriber_messages_dropped_total', { transport: 'ws' }), 0);
      assert.ok(delta(s0, s1, 'locus_bus_delivery_lag_seconds_count') >= 1, 'the realm has a subscriber: its deliveries are timed');
      slow.socket.resume();
      await Promise.all([slow.close(), writer.close()]);
    } finally {
      await h.stop();
    }
  });
});
