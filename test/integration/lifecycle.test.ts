/**
 * The server process: shutdown on SIGTERM/SIGINT within LOCUS_SHUTDOWN_TIMEOUT_MS whatever
 * is open, a second signal, JSON-only stdout, and start-up failures as one line, exit 1.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { listening, spawnServer, type ServerProcess } from '../support/server-process.js';

const adminToken = 'lifecycle-admin-token-0123456789';

const procs: ServerProcess[] = [];
const sockets: Socket[] = [];
function track(proc: ServerProcess): ServerProcess {
  procs.push(proc);
  return proc;
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => resolve(socket));
    socket.on('error', reject);
    sockets.push(socket);
  });
}

/** An admin request whose body never finishes: the server is in the middle of reading it. */
async function stalledRequest(httpPort: number): Promise<Socket> {
  const socket = await open(httpPort);
  socket.write(
    `PUT /admin/v1/realm/r1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`,
  );
  return socket;
}

/** A v1 WebSocket that never reads (nor answers the server's close frame). */
async function deafWebSocket(httpPort: number): Promise<Socket> {
  const socket = await open(httpPort);
  socket.write(
    'GET /v1/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  socket.pause();
  return socket;
}

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const proc of procs.splice(0)) proc.cleanup();
});

describe('server process shutdown', () => {
  it('writes only JSON lines on stdout, the shutdown ones included; the demo token goes to stderr only', async () => {
    const proc = track(spawnServer({ LOCUS_DEMO_REALM: 'true' }));
    await listening(proc);
    const demo = await proc.waitForLog('created realm demo; its write token is printed once on stderr');
    assert.equal(demo.realm, 'demo');
    const token = /^ {2}(\S+)$/m.exec(proc.stderr())?.[1];
    assert.ok(token !== undefined && token.length > 16, proc.stderr());
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    assert.deepEqual([exit.code, exit.signal], [0, null]);
    const lines = proc.logLines();
    assert.deepEqual(
      lines.filter((line) => line.msg === 'shutting down').map((line) => line.signal),
      ['SIGTERM'],
    );
    assert.ok(lines.some((line) => line.msg === 'locus stopped'));
    assert.ok(!proc.stdout().includes(token), 'the demo token is not in the log');
  });

  it('exits within LOCUS_SHUTDOWN_TIMEOUT_MS while a request body never ends and v1 clients never read', async () => {
    const proc = track(spawnServer({ LOCUS_SHUTDOWN_TIMEOUT_MS: '1000', LOCUS_ADMIN_TOKEN: adminToken }));
    const { httpPort, tcpPort } = await listening(proc);
    await stalledRequest(httpPort);
    await deafWebSocket(httpPort);
    (await open(tcpPort)).pause();
    await new Promise((resolve) => setTimeout(resolve, 200));
    proc.markTime();
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    assert.equal(exit.signal, null);
    assert.equal(exit.code, 0, proc.stdout());
    assert.ok(exit.afterMs < 1000 + 500, `exited after ${exit.afterMs} ms`);
    proc.logLines();
  });

  for (const [second, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`exits at once with code ${code} on a second signal (${second}) while the drain waits`, async () => {
      const proc = track(spawnServer({ LOCUS_SHUTDOWN_TIMEOUT_MS: '60000', LOCUS_ADMIN_TOKEN: adminToken }));
      const { httpPort } = await listening(proc);
      await stalledRequest(httpPort);
      proc.child.kill('SIGTERM');
      await proc.waitForLog('shutting down');
      proc.markTime();
      proc.child.kill(second);
      const exit = await proc.exited;
      assert.deepEqual([exit.code, exit.signal], [code, null]);
      assert.ok(exit.afterMs < 1000, `exited after ${exit.afterMs} ms`);
      const line = proc.logLines().find((l) => l.msg === 'second signal: exiting at once');
      assert.equal(line?.signal, second);
    });
  }
});

describe('server process start-up errors', () => {
  async function occupied(): Promise<{ server: Server; port: number }> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address !== null && typeof address === 'object');
    return { server, port: address.port };
  }

  for (const variable of ['LOCUS_HTTP_PORT', 'LOCUS_TCP_PORT']) {
    it(`a busy ${variable} is one line on stderr naming it, exit code 1`, async () => {
      const { server, port } = await occupied();
      try {
        const proc = track(spawnServer({ [variable]: String(port) }));
        const exit = await proc.exited;
        assert.deepEqual([exit.code, exit.signal], [1, null]);
        assert.equal(proc.stderr(), `locus: ${variable}=${port}: port already in use on 127.0.0.1 (LOCUS_HOST)\n`);
        proc.logLines();
      } finally {
        server.close();
      }
    });
  }

  it('a malformed value is one line on stderr naming it, exit code 1', async () => {
    const proc = track(spawnServer({ LOCUS_HTTP_PORT: 'eighty' }));
    const exit = await proc.exited;
    assert.deepEqual([exit.code, exit.signal], [1, null]);
    assert.match(proc.stderr(), /^locus: LOCUS_HTTP_PORT must be a non-negative integer, got "eighty"\n$/);
    assert.equal(proc.stdout(), '');
  });

  it('a headers timeout over the request timeout is refused by name, exit code 1', async () => {
    const proc = track(spawnServer({ LOCUS_HEADERS_TIMEOUT_MS: '5000', LOCUS_REQUEST_TIMEOUT_MS: '1000' }));
    const exit = await proc.exited;
    assert.deepEqual([exit.code, exit.signal], [1, null]);
    assert.equal(proc.stderr(), 'locus: LOCUS_HEADERS_TIMEOUT_MS=5000 must not exceed LOCUS_REQUEST_TIMEOUT_MS=1000\n');
  });

  it('an unusable store path ends start-up with one line and no stack, exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'locus-store-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    // A store "directory" that is a regular file.
    writeFileSync(join(dir, 'file'), '');
    const failing = track(spawnServer({ LOCUS_STORE: `sqlite:${join(dir, 'file', 'x.db')}` }));
    const exit = await failing.exited;
    assert.deepEqual([exit.code, exit.signal], [1, null]);
    assert.doesNotMatch(failing.stderr(), /^\s+at /m, 'no stack on stderr');
    if (failing.stderr() !== '') {
      assert.match(failing.stderr(), /^locus: [^\n]*LOCUS_STORE[^\n]*\n$/);
    } else {
      const lines = failing.logLines();
      assert.equal(lines.length, 1, failing.stdout());
      assert.equal(lines[0]?.level, 60);
      assert.equal(lines[0]?.msg, 'start-up failed');
    }
  });
});
