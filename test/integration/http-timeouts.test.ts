/** LOCUS_HEADERS_TIMEOUT_MS and LOCUS_REQUEST_TIMEOUT_MS: a stalled HTTP client is cut off. */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../support/harness.js';

/** Writes `text`, then waits for the server to close the connection; resolves with what it answered and when. */
function stall(port: number, text: string): Promise<{ answer: string; afterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const socket: Socket = connect({ port, host: '127.0.0.1' }, () => socket.write(text));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer, afterMs: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error('the server kept the stalled connection open'));
    }, 5000).unref();
  });
}

describe('HTTP timeouts', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ headersTimeoutMs: 300, requestTimeoutMs: 800 });
  });
  after(() => h.stop());

  it('disconnects a client that sends part of its headers and stalls', async () => {
    const { answer, afterMs } = await stall(h.server.httpPort, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    assert.match(answer, /^(HTTP\/1\.1 408 |$)/);
    assert.ok(afterMs >= 250 && afterMs < 1500, `closed after ${afterMs} ms`);
  });

  it('disconnects a client whose request body stalls', async () => {
    const { answer, afterMs } = await stall(
      h.server.httpPort,
      'POST /v1/http HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n[',
    );
    assert.match(answer, /^(HTTP\/1\.1 (408|401) |$)/);
    assert.ok(afterMs < 2500, `closed after ${afterMs} ms`);
  });
});
