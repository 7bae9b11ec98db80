/**
 * The Hivekit-compatible parts of REST v2 (issue #20, docs/reference/hivekit-rest.md §11.2):
 * token placement and cookie authentication (D6), /health-check (D13), instructions behind the token (D9; the rest in rest-instructions.test.ts), area create
 * requirements (D10), nanosecond times (D12), v1 error texts (D17), CORS (D14).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig, testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { alsoToRunLog } from '../support/test-logs.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { postV1 } from '../support/v1-clients.js';

describe('REST v2, Hivekit compatibility', () => {
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      done();
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'locus-hivekit-'));
  let server: RunningServer;
  let url: string;
  let tokens: { read: string; write: string; admin: string };

  before(async () => {
    const config = testConfig({ store: `sqlite:${join(dir, 'x.db')}`, adminToken, logLevel: 'info', authFailureBurst: 1000 });
    server = await start(config, { logger: createLogger('info', alsoToRunLog(sink)) });
    url = server.httpUrl;
    tokens = await makeRealm(url, 'fleet');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('token placement (D6)', () => {
    it('accepts the token as the query parameter token, on reads and writes', async () => {
      const put = await call(url, 'POST', `/v2/realm/fleet/object/q1?token=${tokens.write}`, { body: { label: 'q' } });
      assert.equal(put.status, 200, put.text);
      const get = await call(url, 'GET', `/v2/realm/fleet/object/q1?token=${tokens.read}`);
      assert.equal(get.status, 200, get.text);
      assert.equal(get.json.label, 'q');
    });

    it('does not take the token parameter for a list parameter', async () => {
      const list = await call(url, 'GET', `/v2/realm/fleet/object?limit=5&token=${tokens.read}`);
      assert.equal(list.status, 200, list.text);
      assert.ok('q1' in list.json);
    });

    it('accepts the token as a body property and strips it before the key check', async () => {
      const post = await call(url, 'POST', '/v2/realm/fleet/object/b1', { body: { label: 'b', token: tokens.write } });
      assert.equal(post.status, 200, post.text);
      const patch = await call(url, 'PATCH', '/v2/realm/fleet/area/nowhere', { body: { label: 'x', token: tokens.write } });
      assert.equal(patch.status, 404, patch.text);
      const get = await call(url, 'GET', '/v2/realm/fleet/object/b1', { token: tokens.read });
      assert.deepEqual(Object.keys(get.json.data as object), []);
      assert.equal(get.json.label, 'b');
    });

    it('accepts the same token in the header and the body', async () => {
      const post = await call(url, 'POST', '/v2/realm/fleet/object/b2', { token: tokens.write, body: { token: tokens.write } });
      assert.equal(post.status, 200, post.text);
    });

    it('refuses different tokens in two places with a 400', async () => {
      const headerQuery = await call(url, 'GET', `/v2/realm/fleet/object/q1?token=${tokens.write}`, { token: tokens.read });
      assert.equal(headerQuery.status, 400, headerQuery.text);
      assert.equal(headerQuery.json.error.code, 'invalid_request');
      const headerBody = await call(url, 'POST', '/v2/realm/fleet/object/b3', { token: tokens.write, body: { token: tokens.admin } });
      assert.equal(headerBody.status, 400, headerBody.text);
      const queryBody = await call(url, 'POST', `/v2/realm/fleet/object/b3?token=${tokens.write}`, { body: { token: 'lcs_other' } });
      assert.equal(queryBody.status, 400, queryBody.text);
      const missing = await call(url, 'GET', '/v2/realm/fleet/object/b3', { token: tokens.read });
      assert.equal(missing.status, 404);
    });

    it('refuses a bad token in the parameter or the body with a 401', async () => {
      const query = await call(url, 'GET', '/v2/realm/fleet/object/q1?token=lcs_wrong-query-secret');
      assert.equal(query.status, 401, query.text);
      const body = await call(url, 'POST', '/v2/realm/fleet/object/q1', { body: { token: 'lcs_wrong-body-secret' } });
      assert.equal(body.status, 401, body.text);
      const none = await call(url, 'POST', '/v2/realm/fleet/object/q1', { body: { label: 'x' } });
      assert.equal(none.status, 401, none.text);
    });

    it('takes the token parameter on /v1/http and the admin API', async () => {
      const v1 = await call(url, 'POST', `/v1/http?token=${tokens.read}`, { body: [{ typ: 'obj', act: 'rea', rea: 'fleet', id: 'q1' }] });
      assert.equal(v1.status, 200, v1.text);
      const admin = await call(url, 'GET', `/admin/v1/realm?token=${adminToken}`);
      assert.equal(admin.status, 200, admin.text);
    });

    it('never logs a token', async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const secret of [tokens.read, tokens.write, tokens.admin, adminToken, 'wrong-query-secret', 'wrong-body-secret']) {
        assert.ok(!raw.includes(secret), `a log line holds ${secret}`);
      }
      assert.ok(raw.includes('authentication failed'));
    });
  });

  describe('failed authentications through the parameter count per address', () => {
    let harness: Harness;
    before(async () => {
      harness = await startHarness({ authFailureRate: 1, authFailureBurst: 2 });
    });
    after(() => harness.stop());

    it('answers 429 once the address is over its limit', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(harness.url, 'GET', '/v2/realm/x/object?token=lcs_nope')).status);
      assert.deepEqual(statuses, [401, 401, 429]);
    });
  });

  it('answers GET /health-check with a small JSON body (D13)', async () => {
    const res = await call(url, 'GET', '/health-check');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json as object).sort(), ['connections', 'status', 'uptimeSeconds']);
    assert.equal(res.json.status, 'ok');
    assert.equal(typeof res.json.uptimeSeconds, 'number');
    assert.equal(res.json.connections, 0);
  });

  describe('instructions (D9)', () => {
    it('the instruction routes need a token like every realm route (401), and answer once it is given', async () => {
      for (const [method, path] of [
        ['GET', '/v2/realm/fleet/instruction'],
        ['POST', '/v2/realm/fleet/instruction/i1'],
        ['PATCH', '/v2/realm/fleet/instruction/i1'],
        ['DELETE', '/v2/realm/fleet/instruction/i1'],
      ] as const) {
        const anonymous = await call(url, method, path);
        assert.equal(anonymous.status, 401, `${method} ${path}`);
      }
      const list = await call(url, 'GET', '/v2/realm/fleet/instruction', { token: tokens.read });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.json, {});
    });
  });

  describe('v1 error texts (D17)', () => {
    it('a missing realm is "unknown realm <id>"', async () => {
      const res = await call(url, 'GET', '/v2/realm/ghost/object', { token: adminToken });
      assert.equal(res.status, 404);
      assert.deepEqual(res.json, { result: 'error', error: { code: 'not_found', message: 'unknown realm ghost' } });
    });

    it('creating an existing area is "area with id <id> already exists"', async () => {
      const body = { label: 'Depot', shape: { cx: 1, cy: 2, r: 3 } };
      assert.equal((await call(url, 'POST', '/v2/realm/fleet/area/depot', { token: tokens.write, body })).status, 200);
      const again = await call(url, 'POST', '/v2/realm/fleet/area/depot', { token: tokens.write, body });
      assert.equal(again.status, 409);
      assert.deepEqual(again.json, { result: 'error', error: { code: 'conflict', message: 'area with id depot already exists' } });
    });

    it('an area needs a label on REST (D10) but not over v1, where the Hivekit client sends lab only when given', async () => {
      const shape = { cx: 1, cy: 2, r: 3 };
      const rest = await call(url, 'POST', '/v2/realm/fleet/area/nameless', { token: tokens.write, body: { shape } });
      assert.equal(rest.status, 400);
      assert.match(rest.json.error.message as string, /^label is required/);
      const v1 = await postV1(url, tokens.write, [{ typ: 'are', act: 'cre', cid: 'c', id: 'nameless', sty: 'cir', sha: shape }]);
      assert.equal(v1.json[0].res, 'suc', JSON.stringify(v1.json));
      const read = await call(url, 'GET', '/v2/realm/fleet/area/nameless', { token: tokens.read });
      assert.equal(read.json.label, null);
    });
  });

  it('takes location times with up to nine fraction digits and answers with milliseconds (D12)', async () => {
    const res = await call(url, 'POST', '/v2/realm/fleet/object/nano', {
      token: tokens.write,
      body: { location: { longitude: 1, latitude: 2, time: '2026-01-01T00:00:00.123456789Z' } },
    });
    assert.equal(res.status, 200, res.text);
    const get = await call(url, 'GET', '/v2/realm/fleet/object/nano', { token: tokens.read });
    assert.equal(get.json.location.time, '2026-01-01T00:00:00.123Z');
  });
});

describe('CORS (D14)', () => {
  let harness: Harness;
  let write: string;
  before(async () => {
    harness = await startHarness({ corsOrigins: ['https://app.example.com', 'https://other.example.com'] });
    write = (await makeRealm(harness.url, 'fleet')).write;
  });
  after(() => harness.stop());

  const preflight = (path: string, origin: string): Promise<Response> =>
    fetch(harness.url + path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });

  for (const path of ['/v2/realm/fleet/object/o1', '/v1/http', '/api/v1']) {
    it(`answers a preflight for ${path} from a listed origin with 204`, async () => {
      const res = await preflight(path, 'https://app.example.com');
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example.com');
      assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /Authorization/);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /X-Request-Id/);
      assert.equal(res.headers.get('access-control-max-age'), '600');
    });
  }

  it('adds allow-origin and expose-headers to actual responses, errors included', async () => {
    const ok = await call(harness.url, 'POST', '/v2/realm/fleet/object/o1', { token: write, body: {}, headers: { origin: 'https://other.example.com' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://other.example.com');
    assert.equal(ok.headers.get('access-control-expose-headers'), 'X-Next-Cursor, X-Request-Id, Retry-After');
    const denied = await call(harness.url, 'GET', '/v2/realm/fleet/object/o1', { headers: { origin: 'https://app.example.com' } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), 'https://app.example.com');
  });

  it('gives an origin not listed no CORS headers', async () => {
    const pre = await preflight('/v2/realm/fleet/object/o1', 'https://evil.example.com');
    assert.notEqual(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), null);
    const res = await call(harness.url, 'GET', '/v2/realm/fleet/object/o1', { token: write, headers: { origin: 'https://evil.example.com' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });

  it('leaves other paths alone', async () => {
    const res = await call(harness.url, 'GET', '/healthz', { headers: { origin: 'https://app.example.com' } });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('CORS with *', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ corsOrigins: ['*'] });
  });
  after(() => harness.stop());

  it('allows any origin with *', async () => {
    const res = await call(harness.url, 'GET', '/v2/realm/fleet/object/o1', { headers: { origin: 'https://any.example.com' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  });
});

describe('CORS off by default', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.stop());

  it('sends no CORS headers and answers no preflight', async () => {
    const res = await fetch(`${harness.url}/v2/realm/fleet/object/o1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
    });
    assert.notEqual(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('LOCUS_CORS_ORIGINS', () => {
  it('is off when unset or empty, and reads a comma-separated list', () => {
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(loadConfig({ LOCUS_CORS_ORIGINS: '' }).corsOrigins, []);
    assert.deepEqual(loadConfig({ LOCUS_CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).corsOrigins, [
      'https://a.example',
      'http://localhost:3000',
    ]);
    assert.deepEqual(loadConfig({}, ['--cors-origins', '*']).corsOrigins, ['*']);
  });

  it('refuses something that is not an origin, naming the variable', () => {
    assert.throws(() => loadConfig({ LOCUS_CORS_ORIGINS: 'https://a.example/path' }), (e: unknown) => e instanceof ConfigError && /LOCUS_CORS_ORIGINS/.test(e.message));
    assert.throws(() => loadConfig({ LOCUS_CORS_ORIGINS: 'example.com' }), ConfigError);
  });
});

describe('cookie authentication (LOCUS_AUTH_COOKIE_NAME)', () => {
  let harness: Harness;
  let tokens: { read: string; write: string; admin: string };
  before(async () => {
    harness = await startHarness({ authCookieName: 'hk_token', corsOrigins: ['https://app.example.com'] });
    tokens = await makeRealm(harness.url, 'fleet');
  });
  after(() => harness.stop());

  it('takes the token from the named cookie on REST v2 and /v1/http', async () => {
    const put = await call(harness.url, 'POST', '/v2/realm/fleet/object/c1', { body: { label: 'c' }, headers: { cookie: `other=1; hk_token=${tokens.write}` } });
    assert.equal(put.status, 200, put.text);
    const v1 = await call(harness.url, 'POST', '/v1/http', { body: [], headers: { cookie: `hk_token="${tokens.read}"` } });
    assert.equal(v1.status, 200, v1.text);
    const wrong = await call(harness.url, 'GET', '/v2/realm/fleet/object/c1', { headers: { cookie: 'hk_token=lcs_nope' } });
    assert.equal(wrong.status, 401);
  });

  it('uses a token given on purpose over the cookie, without a conflict', async () => {
    const res = await call(harness.url, 'POST', '/v2/realm/fleet/object/c2', { token: tokens.write, body: {}, headers: { cookie: `hk_token=${tokens.read}` } });
    assert.equal(res.status, 200, res.text);
  });

  it('lets a listed origin send cookies', async () => {
    const res = await call(harness.url, 'GET', '/v2/realm/fleet/object/c1', { headers: { origin: 'https://app.example.com', cookie: `hk_token=${tokens.read}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
  });

  it('reads no cookie when the setting is unset', async () => {
    const plain = await startHarness();
    try {
      const realm = await makeRealm(plain.url, 'fleet');
      const res = await call(plain.url, 'GET', '/v2/realm/fleet/object', { headers: { cookie: `hk_token=${realm.read}` } });
      assert.equal(res.status, 401);
    } finally {
      await plain.stop();
    }
  });

  it('refuses a cookie name that is not a token', () => {
    assert.throws(() => loadConfig({ LOCUS_AUTH_COOKIE_NAME: 'a b' }), (e: unknown) => e instanceof ConfigError && /LOCUS_AUTH_COOKIE_NAME/.test(e.message));
    assert.equal(loadConfig({ LOCUS_AUTH_COOKIE_NAME: 'hk_token' }).authCookieName, 'hk_token');
  });
});

describe('cookie authentication and forms from other sites', () => {
  let harness: Harness;
  let tokens: { read: string; write: string; admin: string };
  before(async () => {
    harness = await startHarness({ authCookieName: 'hk_token' });
    tokens = await makeRealm(harness.url, 'fleet');
  });
  after(() => harness.stop());

  it('refuses a cookie-authenticated POST that is not JSON, even without a body', async () => {
    const form = await call(harness.url, 'POST', '/v2/realm/fleet/object/csrf', {
      rawBody: '',
      headers: { cookie: `hk_token=${tokens.write}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 415, form.text);
    const bare = await call(harness.url, 'POST', '/v2/realm/fleet/object/csrf', { headers: { cookie: `hk_token=${tokens.write}` } });
    assert.equal(bare.status, 415, bare.text);
    const read = await call(harness.url, 'GET', '/v2/realm/fleet/object/csrf', { token: tokens.read });
    assert.equal(read.status, 404);
  });
});
