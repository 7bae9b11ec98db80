/**
 * The logs of requests and connections: one access line per REST request (route template,
 * status, duration, realm, request id, source), `authentication failed` at info, one line
 * per v1 connection opened and closed; no token in any of them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { testConfig } from '../../internal/config/config.js';
import { createLogger } from '../../internal/observability/logger.js';
import { alsoToRunLog } from '../support/test-logs.js';
import { start, type RunningServer } from '../../internal/server.js';
import { adminToken, call, makeRealm } from '../support/harness.js';
import { connectTcp, connectWs } from '../support/v1-clients.js';

type Line = Record<string, unknown>;

describe('request and connection logs', () => {
  const lines: Line[] = [];
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line) as Line);
      done();
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'locus-logs-'));
  let server: RunningServer;
  let tokens: { read: string; write: string; admin: string };

  before(async () => {
    const config = testConfig({ store: `sqlite:${join(dir, 'x.db')}`, adminToken, logLevel: 'info' });
    server = await start(config, { logger: createLogger('info', alsoToRunLog(sink)) });
    tokens = await makeRealm(server.httpUrl, 'fleet');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const logged = async (msg: string, match: (line: Line) => boolean = () => true): Promise<Line> => {
    for (let i = 0; i < 100; i++) {
      const found = lines.find((line) => line.msg === msg && match(line));
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no "${msg}" line in:\n${raw}`);
  };

  it('logs each REST request with its route template, status, realm, id and source, and returns the id', async () => {
    const res = await call(server.httpUrl, 'PUT', '/v2/realm/fleet/object/truck%2F7', {
      token: tokens.write,
      body: { location: { longitude: 13.4, latitude: 52.5 } },
    });
    assert.equal(res.status, 200, res.text);
    const id = res.headers.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f]{16}$/);
    const line = await logged('http request', (l) => l.requestId === id);
    assert.equal(line.level, 30);
    assert.equal(line.method, 'PUT');
    assert.equal(line.route, '/v2/realm/:realm/object/:id');
    assert.equal(line.status, 200);
    assert.equal(line.realm, 'fleet');
    assert.equal(line.remoteAddress, '127.0.0.1');
    assert.equal(typeof line.durationMs, 'number');
    assert.ok(!JSON.stringify(line).includes('truck'), 'no id from the path');
  });

  it('keeps a plain incoming X-Request-Id and replaces one that is not', async () => {
    const kept = await call(server.httpUrl, 'GET', '/healthz', { headers: { 'x-request-id': 'lb-42.abc' } });
    assert.equal(kept.headers.get('x-request-id'), 'lb-42.abc');
    assert.equal((await logged('http request', (l) => l.requestId === 'lb-42.abc')).route, '/healthz');
    const replaced = await call(server.httpUrl, 'GET', '/healthz', { headers: { 'x-request-id': 'no spaces {}' } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f]{16}$/);
    assert.ok(!raw.includes('no spaces'));
  });

  it('logs a failed authentication at info with reason and source, and never a token', async () => {
    const secret = 'not-a-real-token-secret-4711';
    const res = await call(server.httpUrl, 'GET', `/v2/realm/fleet/object?token=${secret}`, { token: secret });
    assert.equal(res.status, 401);
    const id = res.headers.get('x-request-id');
    const failed = await logged('authentication failed', (l) => l.requestId === id);
    assert.equal(failed.level, 30);
    assert.equal(failed.reason, 'the token is not valid');
    assert.equal(failed.remoteAddress, '127.0.0.1');
    const access = await logged('http request', (l) => l.requestId === id);
    assert.equal(access.status, 401);
    assert.equal(access.route, '/v2/realm/:realm/*');
    const v1 = await call(server.httpUrl, 'POST', '/v1/http', { body: [] });
    assert.equal(v1.status, 401);
    assert.equal((await logged('authentication failed', (l) => l.requestId === v1.headers.get('x-request-id'))).route, '/v1/http');
    assert.ok(!raw.includes(secret), 'the secret is in no line');
  });

  it('logs each v1 WebSocket and TCP connection opening and closing, without its token', async () => {
    const ws = await connectWs(server.httpUrl, tokens.read);
    const opened = await logged('connection opened', (l) => l.transport === 'websocket');
    assert.equal(opened.remoteAddress, '127.0.0.1');
    await ws.close();
    const closed = await logged('connection closed', (l) => l.transport === 'websocket');
    assert.equal(typeof closed.durationMs, 'number');
    assert.equal(closed.remoteAddress, '127.0.0.1');

    const tcp = await connectTcp(server.tcpPort);
    await logged('connection opened', (l) => l.transport === 'tcp');
    tcp.sendText('Bearer wrong-token-secret-0815');
    // A failed sign-in is logged and answered; the connection stays open (compat 1.2.6).
    const refused = await logged('v1 authentication failed', (l) => l.remoteAddress === '127.0.0.1');
    assert.equal(refused.level, 30);
    assert.equal((await tcp.next())[0].erc, 401);
    await tcp.close();
    const tcpClosed = await logged('connection closed', (l) => l.transport === 'tcp');
    // The client's half-close is answered with the end of the connection.
    assert.equal(tcpClosed.closeReason, 'end of input');
    for (const token of [tokens.read, tokens.write, tokens.admin, adminToken, 'wrong-token-secret-0815']) {
      assert.ok(!raw.includes(token), 'no token in any line');
    }
  });
});
