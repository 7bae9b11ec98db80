/**
 * What bounds one client's claim on the server, over real sockets: the number of actions
 * in a message (LOCUS_MAX_ACTIONS), the rate limit that every action and every failed
 * authentication counts against, and the time a begun TCP line or WebSocket frame has to
 * end.
 */
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { call, dumpStore, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, connectV1, postV1, type Json, type V1Transport } from '../support/v1-clients.js';

const transports: V1Transport[] = ['ws', 'tcp'];

async function tokensFor(h: Harness, realm: string): Promise<{ read: string; write: string }> {
  await h.server.realms.put('default', realm, {});
  const read = await h.server.realms.createToken('default', realm, { scope: 'read' });
  const write = await h.server.realms.createToken('default', realm, { scope: 'write' });
  return { read: read.token, write: write.token };
}

const upd = (i: number): Record<string, unknown> => ({
  typ: 'obj',
  act: 'cre',
  cid: `c${i}`,
  id: `o${i}`,
  loc: { lon: 1, lat: 1 },
});

describe('actions per message (LOCUS_MAX_ACTIONS)', () => {
  let h: Harness;
  let tokens: { read: string; write: string };
  before(async () => {
    h = await startHarness({ maxActions: 100 });
    tokens = await tokensFor(h, 'cap');
  });
  after(() => h.stop());

  it('/v1/http: a message of one action too many is refused whole with 413 too_large; none of its actions ran', async () => {
    const before = (await dumpStore(h.server.store));
    const refused = await postV1(h.url, tokens.write, Array.from({ length: 101 }, (_, i) => upd(i)));
    assert.equal(refused.status, 413);
    assert.equal(refused.json.error.code, 'too_large');
    assert.match(refused.json.error.message, /101 messages; at most 100/);
    assert.equal((await dumpStore(h.server.store)), before);
    const taken = await postV1(h.url, tokens.write, Array.from({ length: 100 }, (_, i) => upd(i)));
    assert.equal(taken.status, 200);
    assert.equal((taken.json as Json[]).filter((r) => r.res === 'suc').length, 100);
  });

  for (const transport of transports) {
    it(`${transport}: one too_large error for the whole message, nothing stored, the connection stays open`, async () => {
      const client = await connectV1(transport, h.server, tokens.write);
      try {
        const before = (await dumpStore(h.server.store));
        const reply = await client.request(Array.from({ length: 101 }, (_, i) => upd(1000 + i)));
        assert.equal(reply.length, 1);
        assert.deepEqual([Object.keys(reply[0]), reply[0].res, reply[0].erc], [['res', 'err', 'erc'], 'err', 413]);
        assert.equal((await dumpStore(h.server.store)), before);
        const pin = await client.one({ typ: 'sys', act: 'pin' });
        assert.equal(pin.res, 'suc');
      } finally {
        await client.close();
      }
    });
  }
});

describe('every action counts against the rate limit', () => {
  let h: Harness;
  before(async () => {
    // Five at once, then one a second: the bucket does not refill during a test.
    h = await startHarness({ rateLimit: 1, rateBurst: 5, authFailureRate: 1, authFailureBurst: 3 });
    await tokensFor(h, 'rated');
  });
  after(() => h.stop());

  const kinds: [string, Record<string, unknown>][] = [
    ['sys pin', { typ: 'sys', act: 'pin', cid: 'p' }],
    ['an unknown action', { typ: 'sys', act: 'nope' }],
    ['an invalid action', { typ: 7 }],
  ];
  for (const [name, action] of kinds) {
    it(`${name}: the sixth in a burst of five is rate_limited`, async () => {
      const token = (await h.server.realms.createToken('default', 'rated', { scope: 'read' })).token;
      const reply = (await postV1(h.url, token, Array.from({ length: 7 }, () => action))).json as Json[];
      const codes = reply.map((r): string => (r.res === 'suc' ? 'suc' : String(r.erc)));
      assert.equal(codes.length, 7);
      assert.equal(codes.slice(5).join(), '429,429', JSON.stringify(codes));
      assert.ok(!codes.slice(0, 5).includes('429'), JSON.stringify(codes));
    });
  }

  it('a run of object writes (one batch to the store) counts each message: the sixth and seventh are rate_limited alone', async () => {
    const token = (await h.server.realms.createToken('default', 'rated', { scope: 'write' })).token;
    const writes = Array.from({ length: 7 }, (_v, i) => ({ typ: 'obj', act: 'cre', cid: `w${i}`, id: `run-${i}`, rea: 'rated', loc: { lon: 5, lat: 45 } }));
    const reply = (await postV1(h.url, token, writes)).json as Json[];
    assert.deepEqual(
      reply.map((r): string => `${String(r.cid)}:${r.res === 'suc' ? 'suc' : String(r.erc)}`),
      ['w0:suc', 'w1:suc', 'w2:suc', 'w3:suc', 'w4:suc', 'w5:429', 'w6:429'],
    );
    const read = await h.server.realms.createToken('default', 'rated', { scope: 'read' });
    const listed = (await postV1(h.url, read.token, [{ typ: 'obj', act: 'lis', cid: 'l', rea: 'rated' }])).json as Json[];
    assert.deepEqual(Object.keys(listed[0]?.dat as Record<string, unknown>).sort(), ['run-0', 'run-1', 'run-2', 'run-3', 'run-4']);
  });

  it('over WebSocket and TCP too, pins included', async () => {
    for (const transport of transports) {
      const token = (await h.server.realms.createToken('default', 'rated', { scope: 'read' })).token;
      const client = await connectV1(transport, h.server, token);
      try {
        const reply = await client.request(Array.from({ length: 6 }, (_v, i) => ({ typ: 'sys', act: 'pin', cid: i })));
        assert.deepEqual(
          reply.map((r: Json): string => String(r.res)),
          ['suc', 'suc', 'suc', 'suc', 'suc', 'err'],
        );
        assert.equal(reply[5].erc, 429);
      } finally {
        await client.close();
      }
    }
  });

  it('failed authentications count per source address: 401 three times, then 429 with Retry-After even for a valid token', async () => {
    const other = await startHarness({ authFailureRate: 1, authFailureBurst: 3 });
    try {
      const realm = await tokensFor(other, 'guarded');
      for (let i = 0; i < 3; i++) {
        const res = await call(other.url, 'GET', '/v2/realm/guarded/object', { token: `wrong-${i}` });
        assert.equal(res.status, 401);
      }
      const limited = await call(other.url, 'GET', '/v2/realm/guarded/object', { token: 'wrong-again' });
      assert.equal(limited.status, 429);
      assert.equal(limited.json.error.code, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      const valid = await call(other.url, 'GET', '/v2/realm/guarded/object', { token: realm.read });
      assert.equal(valid.status, 429);
      const v1 = await postV1(other.url, realm.read, [{ typ: 'sys', act: 'pin', cid: 'p' }]);
      assert.equal(v1.status, 429);
      const handshake = await connectTcp(other.server.tcpPort);
      handshake.sendText(`Bearer ${realm.read}`);
      const reply = await handshake.next();
      assert.deepEqual([reply[0].act, reply[0].res], ['aut', 'err']);
      assert.match(reply[0].err as string, /too many failed authentications/);
      assert.equal(reply[0].erc, 429);
      await handshake.close();
    } finally {
      await other.stop();
    }
  });

  it('failed v1 handshakes count too', async () => {
    const other = await startHarness({ authFailureRate: 1, authFailureBurst: 2 });
    try {
      const messages: string[] = [];
      for (let i = 0; i < 3; i++) {
        const client = await connectTcp(other.server.tcpPort);
        client.sendText(`Bearer wrong-${i}`);
        const reply = await client.next();
        messages.push(reply[0].err as string);
        await client.close();
      }
      assert.doesNotMatch(messages[1] ?? '', /too many/);
      assert.match(messages[2] ?? '', /too many failed authentications/);
    } finally {
      await other.stop();
    }
  });
});

/** Opens a WebSocket by hand (raw TCP), so that a test can send part of a frame. */
async function rawWebSocket(httpPort: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = netConnect({ port: httpPort, host: '127.0.0.1' });
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    'GET /v1/ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  while (!text.includes('\r\n\r\n')) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.match(text, /^HTTP\/1\.1 101/);
  return { socket, received: () => text, closed };
}

/** A masked client text frame. */
function frame(payload: string): Buffer {
  const data = Buffer.from(payload, 'utf8');
  assert.ok(data.length < 126);
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(data.map((byte, i) => byte ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | data.length]), mask, masked]);
}

describe('a begun line or frame must end (LOCUS_PARTIAL_TIMEOUT_MS)', () => {
  let h: Harness;
  let tokens: { read: string; write: string };
  before(async () => {
    h = await startHarness({ partialTimeoutMs: 300, idleTimeoutMs: 600_000 });
    tokens = await tokensFor(h, 'partial');
  });
  after(() => h.stop());

  it('TCP: a line that stalls half way is answered with timeout and closed', async () => {
    const client = await connectTcp(h.server.tcpPort, tokens.read);
    const started = Date.now();
    client.sendBytes('[{"typ":"sys","act":"pi');
    const reply = await client.next(5000);
    assert.equal(reply[0].erc, 408);
    assert.match(reply[0].err as string, /line was begun and not ended within 300 ms/);
    await client.closed;
    assert.ok(Date.now() - started < 5000);
  });

  it('TCP: lines sent whole, however slowly, are not cut', async () => {
    const client = await connectTcp(h.server.tcpPort, tokens.read);
    try {
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.equal((await client.one({ typ: 'sys', act: 'pin' })).res, 'suc');
      }
      // A line sent in two parts in time is one message.
      client.sendBytes('[{"typ":"sys",');
      await new Promise((resolve) => setTimeout(resolve, 100));
      client.sendBytes('"act":"pin","cid":"two-parts"}]\n');
      assert.equal((await client.next())[0].res, 'suc');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(client.isClosed, false);
    } finally {
      await client.close();
    }
  });

  it('WebSocket: a frame that stalls half way closes the connection; whole frames do not', async () => {
    const ws = await rawWebSocket(h.server.httpPort);
    ws.socket.write(frame(`Bearer ${tokens.read}`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.match(ws.received(), /"act":"aut","res":"suc"/);
    const whole = frame('[{"typ":"sys","act":"pin"}]');
    ws.socket.write(whole.subarray(0, 4));
    const started = Date.now();
    await ws.closed;
    assert.ok(Date.now() - started < 5000);
    assert.match(ws.received(), /frame was begun and not ended within 300 ms/);
  });
});
