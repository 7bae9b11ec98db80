/**
 * LOCUS_MAX_HTTP_CONNECTIONS on the HTTP listener: past the cap a new socket is told why it is
 * refused (503 `unavailable`, Connection: close) instead of the process running out of
 * descriptors; a freed slot is used again.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { call, startHarness, type Harness } from '../support/harness.js';
import { wsUrl } from '../support/v1-clients.js';

function idleSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => resolve(socket));
    socket.on('error', reject);
  });
}

describe('HTTP connection cap (LOCUS_MAX_HTTP_CONNECTIONS)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ maxHttpConnections: 3 });
  });
  after(() => h.stop());

  it('the socket past the cap gets 503 unavailable with Connection: close; a freed slot is used again', async () => {
    const idle = await Promise.all([idleSocket(h.server.httpPort), idleSocket(h.server.httpPort), idleSocket(h.server.httpPort)]);
    try {
      const refused = await call(h.url, 'GET', '/healthz');
      assert.equal(refused.status, 503);
      assert.equal(refused.json.error.code, 'unavailable');
      assert.match(refused.json.error.message as string, /too many connections \(at most 3\)/);
      assert.equal(refused.headers.get('connection'), 'close');
      assert.equal(refused.headers.get('retry-after'), '1');

      const upgrade = new WebSocket(wsUrl(h.url));
      upgrade.on('error', () => undefined);
      const status = await new Promise<number>((resolve) => upgrade.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
      assert.equal(status, 503);
    } finally {
      for (const socket of idle) socket.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const admitted = await call(h.url, 'GET', '/healthz');
    assert.equal(admitted.status, 200);
  });
});
