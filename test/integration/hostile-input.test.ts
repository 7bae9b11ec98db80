/**
 * The fuzz suite of hostile input: what a broken or malicious client can send, over
 * every transport, against one real server. Throughout, a worker thread asks `/healthz`
 * (on its own event loop) and the server must keep answering it; a rejected message must
 * leave the stored data exactly as it was. Liveness, not speed: the bound on `/healthz`
 * is generous (speed is the benchmarks').
 */
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { dumpStore, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, connectV1, postV1, type Json, type V1Transport } from '../support/v1-clients.js';

const transports: V1Transport[] = ['ws', 'tcp'];
/** Longest `/healthz` wait accepted: the server must not stall (a stall was 37 s before). */
const healthBoundMs = 1500;

const proberSource = `
const { parentPort, workerData } = require('node:worker_threads');
let worst = 0;
let failures = 0;
let running = true;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const started = performance.now();
    try {
      const res = await fetch(workerData.url, { signal: AbortSignal.timeout(10000) });
      await res.arrayBuffer();
      if (res.status !== 200) failures++;
    } catch {
      failures++;
    }
    worst = Math.max(worst, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  parentPort.postMessage({ worst, failures });
})();
`;

/** Watches `/healthz` from another thread until stopped. */
function watchHealth(httpUrl: string): { stop: () => Promise<{ worst: number; failures: number }> } {
  const worker = new Worker(proberSource, { eval: true, workerData: { url: `${httpUrl}/healthz` } });
  return {
    stop: async () => {
      const result = new Promise<{ worst: number; failures: number }>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const outcome = await result;
      await worker.terminate();
      return outcome;
    },
  };
}

const pin = { typ: 'sys', act: 'pin' };

/** An `obj cre` (create or update) with a location; `extra` in REST names (label, data). */
function upd(id: string, extra: { label?: unknown; data?: unknown } = {}): Record<string, unknown> {
  const message: Record<string, unknown> = { typ: 'obj', act: 'cre', cid: `cre-${id.slice(0, 16)}`, id, loc: { lon: 13.4, lat: 52.5 } };
  if (extra.label !== undefined) message.lab = extra.label;
  if (extra.data !== undefined) message.dat = extra.data;
  return message;
}

/** `depth` levels of nested objects. */
function deepObject(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('hostile input: the server stays healthy and rejected messages change nothing', () => {
  let h: Harness;
  let token: string;
  let health: ReturnType<typeof watchHealth>;
  before(async () => {
    h = await startHarness({
      rateLimit: 10_000_000,
      rateBurst: 10_000_000,
      handshakeTimeoutMs: 1500,
      maxConnections: 5000,
    });
    await h.server.realms.put('default', 'fuzz', {});
    token = (await h.server.realms.createToken('default', 'fuzz', { scope: 'write' })).token;
    // Something stored, that must stay as it is.
    const seeded = await postV1(h.url, token, [upd('kept', { label: 'Kept', data: { fuel: 0.5 } })]);
    assert.equal(seeded.status, 200);
    health = watchHealth(h.url);
  });
  after(async () => {
    const outcome = await health.stop();
    await h.stop();
    assert.equal(outcome.failures, 0, 'every /healthz was answered with 200');
    assert.ok(outcome.worst < healthBoundMs, `the worst /healthz took ${outcome.worst.toFixed(0)} ms`);
  });

  it('messages of 10,000 pins are answered whole on every transport', async () => {
    const message = Array.from({ length: 10_000 }, (_, i) => ({ ...pin, rid: i }));
    const http = await postV1(h.url, token, message);
    assert.equal(http.status, 200);
    assert.equal((http.json as Json[]).length, 10_000);
    for (const transport of transports) {
      const client = await connectV1(transport, h.server, token);
      try {
        const reply = await client.request(message, 30_000);
        assert.equal(reply.length, 10_000);
        assert.ok(reply.every((r: Json, i: number) => r.res === 'suc' && r.rid === i));
      } finally {
        await client.close();
      }
    }
  });

  it('a message of 200,000 actions is refused whole (too_large) and none of its writes happen', async () => {
    const before = (await dumpStore(h.server.store));
    const message = [upd('kept', { label: 'Changed' }), upd('new-one'), ...Array.from({ length: 199_998 }, () => ({}))];
    const http = await postV1(h.url, token, message);
    assert.equal(http.status, 413);
    assert.equal(http.json.error.code, 'too_large');
    for (const transport of transports) {
      const client = await connectV1(transport, h.server, token);
      try {
        const reply = await client.request(message, 30_000);
        assert.equal(reply.length, 1);
        assert.equal(reply[0].erc, 413);
        assert.equal((await client.one(pin)).res, 'suc');
      } finally {
        await client.close();
      }
    }
    assert.equal((await dumpStore(h.server.store)), before);
  });

  it('deep nesting, in the message and in data, is an error of its own and changes nothing', async () => {
    const before = (await dumpStore(h.server.store));
    const deepArray = '['.repeat(100_000) + ']'.repeat(100_000);
    const deepData = `[{"typ":"obj","act":"cre","cid":"deep","id":"kept","loc":{"lon":1,"lat":1},"dat":${deepObject(20_000)}}]`;
    // An array of (an array of …) is a message whose one action is not an object.
    const http = await postV1(h.url, token, deepArray);
    assert.equal(http.status, 200);
    assert.equal(http.json[0].res, 'err');
    const httpData = await postV1(h.url, token, deepData);
    assert.ok(httpData.status === 400 || (httpData.status === 200 && httpData.json[0].res === 'err'), JSON.stringify(httpData.json).slice(0, 300));
    for (const transport of transports) {
      const client = await connectV1(transport, h.server, token);
      try {
        client.sendText(deepArray);
        const reply = await client.next(30_000);
        assert.equal(reply[0].res, 'err');
        client.sendText(deepData);
        const data = await client.next(30_000);
        assert.equal(data[0].res, 'err', JSON.stringify(data).slice(0, 300));
        assert.equal((await client.one(pin)).res, 'suc');
      } finally {
        await client.close();
      }
    }
    assert.equal((await dumpStore(h.server.store)), before);
  });

  it('data of 100,000 keys and megabyte strings are refused and change nothing', async () => {
    const before = (await dumpStore(h.server.store));
    const manyKeys = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const megabyte = 'x'.repeat(1024 * 1024);
    const cases: Record<string, unknown>[] = [
      upd('kept', { data: manyKeys }),
      upd('kept', { label: megabyte }),
      upd('kept', { data: { note: megabyte } }),
      upd(megabyte),
    ];
    for (const action of cases) {
      const http = await postV1(h.url, token, [action]);
      assert.ok(http.status >= 400 || http.json[0].res === 'err', JSON.stringify(http.json).slice(0, 300));
    }
    for (const transport of transports) {
      const client = await connectV1(transport, h.server, token);
      try {
        // Over the message size limit (1 MiB): the connection is told and closed.
        client.sendText(JSON.stringify([cases[1]]));
        const reply = await client.next(30_000);
        assert.equal(reply[0].erc, 413);
        await client.closed;
      } finally {
        await client.close();
      }
      const small = await connectV1(transport, h.server, token);
      try {
        const reply = await small.request([upd('kept', { data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])) })], 30_000);
        assert.equal(reply[0].res, 'err');
      } finally {
        await small.close();
      }
    }
    assert.equal((await dumpStore(h.server.store)), before);
  });

  it('lines and frames that stall half way, and thousands of idle connections, do not hold the server', async () => {
    const sockets: Socket[] = [];
    const open = (port: number): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = netConnect({ port, host: '127.0.0.1' });
        socket.on('error', () => undefined);
        socket.resume();
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      });
    // 1,500 TCP connections that never authenticate, some with half a line.
    for (let i = 0; i < 1500; i++) {
      const socket = await open(h.server.tcpPort);
      if (i % 3 === 0) socket.write('Bearer ' + token.slice(0, 5));
      sockets.push(socket);
    }
    // 500 on the HTTP port: half a request, or half an upgrade.
    for (let i = 0; i < 500; i++) {
      const socket = await open(h.server.httpPort);
      socket.write(i % 2 === 0 ? 'GET /healthz HTTP/1.1\r\nHost: x\r\n' : 'GET /v1/ws HTTP/1.1\r\nUpgrade: websocket\r\n');
      sockets.push(socket);
    }
    // Authenticated and idle.
    const idle = await Promise.all(Array.from({ length: 200 }, () => connectTcp(h.server.tcpPort, token)));
    // The server still serves a real client at once.
    const client = await connectV1('ws', h.server, token);
    assert.equal((await client.one(pin)).res, 'suc');
    await client.close();
    // The v1 connections that never authenticated are closed by the handshake timeout.
    const closed = await Promise.all(
      sockets.slice(0, 1500).map((socket) => new Promise<boolean>((resolve) => {
        if (socket.destroyed) resolve(true);
        socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 10_000).unref();
      })),
    );
    assert.equal(closed.filter((c) => !c).length, 0);
    for (const socket of sockets) socket.destroy();
    await Promise.all(idle.map((c) => c.close()));
  });
});
