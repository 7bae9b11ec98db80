/**
 * The v1 protocol over real sockets (WebSocket with `ws`, raw TCP with `net`) and over
 * `/v1/http`: the handshake and each way it fails, message-level and action-level
 * errors, TCP framing, size limits, timeouts, connection limits, shutdown.
 */
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, connectV1, connectWs, postV1, wsUrl, type Json, type V1Client, type V1Transport } from '../support/v1-clients.js';

const transports: V1Transport[] = ['ws', 'tcp'];
const maxMessageBytes = 64 * 1024;

/**
 * The one reply of a refused sign-in (`sys`/`aut` with `err` and `erc` 401). The connection
 * stays open for another `Bearer` frame (compat 1.2.6), unless `closes` (the handshake
 * timeout, a frame over the size limit): then it is closed (WebSocket code 4401 for the timeout).
 */
async function assertAuthFailure(client: V1Client, messagePart?: RegExp, closes: 'open' | 'timeout' | 'fatal' = 'open'): Promise<void> {
  const reply = await client.next();
  assert.equal(reply.length, 1);
  if (closes === 'fatal') {
    assertMessageError(reply, 'too_large');
  } else {
    assert.deepEqual({ ...reply[0], err: '…' }, { typ: 'sys', act: 'aut', res: 'err', err: '…', erc: 401 });
    if (messagePart !== undefined) assert.match(reply[0].err as string, messagePart);
  }
  if (closes === 'open') {
    assert.equal(client.isClosed, false);
    await client.close();
    return;
  }
  const closed = await client.closed;
  if (client.transport === 'ws' && closes === 'timeout') assert.equal(closed.code, 4401);
}

/** The `erc` of each error code these tests expect. */
const ERC: Record<string, number> = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_id: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  timeout: 408,
  too_large: 413,
  unavailable: 503,
};

/** A frame-level error: one `{res, err, erc}` element, without `typ` (compat 3.5). */
function assertMessageError(reply: Json, code: string): void {
  assert.ok(Array.isArray(reply), JSON.stringify(reply));
  assert.equal(reply.length, 1);
  assert.deepEqual(Object.keys(reply[0]), ['res', 'err', 'erc'], JSON.stringify(reply));
  assert.equal(reply[0].res, 'err');
  assert.equal(reply[0].erc, ERC[code], JSON.stringify(reply));
  assert.equal(typeof reply[0].err, 'string');
}

/** Opens a connection without authenticating. */
function open(h: Harness, transport: V1Transport): Promise<V1Client> {
  return connectV1(transport, h.server);
}

describe('v1 over WebSocket and TCP', () => {
  let h: Harness;
  let r1: { read: string; write: string; admin: string };
  let r2: { read: string; write: string; admin: string };

  before(async () => {
    h = await startHarness({ maxMessageBytes });
    r1 = await makeRealm(h.url, 'r1');
    r2 = await makeRealm(h.url, 'r2');
  });
  after(async () => {
    await h.stop();
  });

  for (const transport of transports) {
    describe(transport, () => {
      it('handshake: "Bearer <token>" is answered with sys/aut/suc, version and build date', async () => {
        const client = await open(h, transport);
        client.sendText(`Bearer ${r1.read}`);
        const reply = await client.next();
        assert.equal(reply.length, 1);
        assert.deepEqual(Object.keys(reply[0]), ['typ', 'act', 'res', 'dat']);
        assert.equal(reply[0].typ, 'sys');
        assert.equal(reply[0].act, 'aut');
        assert.equal(reply[0].res, 'suc');
        assert.equal(reply[0].dat.version, '0.1.0');
        assert.ok(!Number.isNaN(Date.parse(reply[0].dat.buildDate as string)));
        const pong = await client.one({ typ: 'sys', act: 'pin', rid: 1 });
        assert.equal(pong.res, 'suc');
        assert.equal(pong.rid, 1);
        await client.close();
      });

      it('handshake fails on an unknown token; the connection stays open', async () => {
        const client = await open(h, transport);
        client.sendText('Bearer lcs_not-a-real-token');
        await assertAuthFailure(client, /not valid/);
      });

      it('handshake fails on an action array sent first', async () => {
        const client = await open(h, transport);
        client.sendText('[{"typ":"sys","act":"pin"}]');
        await assertAuthFailure(client, /Bearer/);
      });

      it('handshake fails on "Bearer" without a token, and on another scheme', async () => {
        for (const text of ['Bearer', 'Basic abc', `bearer${r1.read}`]) {
          const client = await open(h, transport);
          client.sendText(text);
          await assertAuthFailure(client);
        }
      });

      it('a message pipelined right behind the token is answered after the handshake', async () => {
        const client = await open(h, transport);
        client.sendText(`Bearer ${r1.read}`);
        client.sendText('[{"typ":"sys","act":"pin","rid":"after"}]');
        assert.equal((await client.next())[0].act, 'aut');
        assert.equal((await client.next())[0].rid, 'after');
        await client.close();
      });

      it('garbage and JSON that is not an array get one frame error each; the connection stays', async () => {
        const client = await connectV1(transport, h.server, r1.read);
        client.sendText('this is not json');
        assertMessageError(await client.next(), 'invalid_json');
        for (const text of ['{"typ":"sys","act":"pin"}', '5', '"x"', 'null']) {
          client.sendText(text);
          assertMessageError(await client.next(), 'invalid_request');
        }
        // An empty frame is answered by nothing (no reply is due).
        client.sendText('[]');
        assert.equal((await client.one({ typ: 'sys', act: 'pin' })).res, 'suc');
        assert.equal(client.isClosed, false);
        await client.close();
      });

      it('unknown typ or act, and malformed messages, fail alone; cid and rid are echoed; unknown keys are ignored', async () => {
        const client = await connectV1(transport, h.server, r1.write);
        const replies = await client.request([
          { typ: 'nope', act: 'rea', cid: 'a' },
          { typ: 'obj', act: 'zap', rid: 'b' },
          { typ: 'sys', act: 'pin', cid: 'c' },
          7,
          { typ: 'obj' },
          { typ: 'obj', act: 'lis', dat: [], cid: 9 },
          { typ: 'obj', act: 'lis', extra: 1, cid: 'x' },
          { typ: 'obj', act: 'rea', cid: { no: 1 } },
          { typ: 'obj', act: 'rea', id: 'missing', cid: 'd' },
          { typ: 'constructor', act: 'rea' },
          { typ: 'obj', act: '__proto__' },
        ]);
        assert.equal(replies.length, 11);
        const summary = replies.map((r: Json): unknown[] => [r.typ, r.act, r.res, r.res === 'err' ? r.erc : 'ok', r.cid ?? r.rid]);
        assert.deepEqual(summary, [
          ['nope', 'rea', 'err', 400, 'a'],
          ['obj', 'zap', 'err', 400, 'b'],
          ['sys', 'pin', 'suc', 'ok', 'c'],
          [undefined, undefined, 'err', 400, undefined],
          ['obj', undefined, 'err', 400, undefined],
          ['obj', 'lis', 'err', 400, 9],
          ['obj', 'lis', 'suc', 'ok', 'x'],
          ['obj', 'rea', 'err', 400, undefined],
          ['obj', 'rea', 'err', 404, 'd'],
          ['constructor', 'rea', 'err', 400, undefined],
          ['obj', '__proto__', 'err', 400, undefined],
        ]);
        assert.match(replies[0].err as string, /unknown typ "nope"/);
        assert.match(replies[1].err as string, /unknown act "zap" for typ obj/);
        assert.equal(replies[8].err, 'unknown object missing');
        assert.ok(!('cid' in replies[3]));
        assert.equal(client.isClosed, false);
        await client.close();
      });

      it('sys/pin answers with the server time; sys/hbt echoes its cid; sys/aut after the handshake is an error', async () => {
        const client = await connectV1(transport, h.server, r1.read);
        const [pin, hbt, aut] = await client.request([
          { typ: 'sys', act: 'pin', cid: 'p' },
          { typ: 'sys', act: 'hbt', cid: 'heartbeat-x' },
          { typ: 'sys', act: 'aut', dat: { token: 'x' } },
        ]);
        assert.ok(Math.abs(Date.parse(pin.dat.time as string) - Date.now()) < 5000);
        assert.deepEqual(hbt, { typ: 'sys', act: 'hbt', cid: 'heartbeat-x', res: 'suc' });
        assert.equal(aut.res, 'err');
        assert.equal(aut.erc, 400);
        await client.close();
      });

      it('the admin token belongs to no realm: actions must name rea', async () => {
        const client = await connectV1(transport, h.server, adminToken);
        const [missing, named, pin] = await client.request([
          { typ: 'obj', act: 'lis', cid: '1' },
          { typ: 'obj', act: 'lis', rea: 'r1', cid: '2' },
          { typ: 'sys', act: 'pin', cid: '3' },
        ]);
        assert.equal(missing.res, 'err');
        assert.equal(missing.erc, 400);
        assert.match(missing.err as string, /rea/);
        assert.equal(named.res, 'suc');
        assert.equal(pin.res, 'suc');
        const [nowhere] = await client.request([{ typ: 'obj', act: 'lis', rea: 'no-such-realm', cid: '4' }]);
        assert.equal(nowhere.err, 'unknown realm no-such-realm');
        assert.equal(nowhere.erc, 404);
        await client.close();
      });

      it('two realms never see each other: rea of another realm is 403, data stays apart', async () => {
        const one = await connectV1(transport, h.server, r1.write);
        const two = await connectV1(transport, h.server, r2.write);
        const id = `secret-${transport}`;
        assert.equal((await one.one({ typ: 'obj', act: 'cre', id, lab: 'r1 only' })).res, 'suc');
        const [get, lis, cross, crossWrite] = await two.request([
          { typ: 'obj', act: 'rea', id, cid: '1' },
          { typ: 'obj', act: 'lis', cid: '2' },
          { typ: 'obj', act: 'rea', rea: 'r1', id, cid: '3' },
          { typ: 'obj', act: 'upd', rea: 'r1', id, lab: 'hijack', cid: '4' },
        ]);
        assert.equal(get.erc, 404);
        assert.ok(!(id in lis.dat));
        assert.equal(cross.erc, 403);
        assert.equal(crossWrite.erc, 403);
        const mine = await one.one({ typ: 'obj', act: 'rea', id });
        assert.equal(mine.dat.lab, 'r1 only');
        await Promise.all([one.close(), two.close()]);
      });

      it('a read token cannot write: 403 for that action only', async () => {
        const client = await connectV1(transport, h.server, r1.read);
        const [write, read] = await client.request([
          { typ: 'obj', act: 'set', id: 'x', lab: 'no' },
          { typ: 'obj', act: 'lis', cid: 'l' },
        ]);
        assert.equal(write.erc, 403);
        assert.equal(write.act, 'set');
        assert.equal(read.res, 'suc');
        await client.close();
      });

      it('pipelined messages: writes apply in order, reads see the writes before them, replies keep their order', async () => {
        const client = await connectV1(transport, h.server, r1.write);
        const id = `piped-${transport}`;
        const upd = (cid: number, lab: unknown): Json => ({ typ: 'obj', act: 'cre', cid, id, lab });
        const get = (cid: number): Json => ({ typ: 'obj', act: 'rea', cid, id });
        const messages: (Json[] | string)[] = [
          [upd(1, 'one')],
          [{ typ: 'obj', act: 'blk', cid: 2, dat: { objects: [{ id, label: 'two' }, { id: `${id}-b` }] } }],
          [get(3), upd(4, 'four'), get(5)],
          // Failures in the middle change nothing and stop nothing.
          [upd(6, 66)],
          'not json',
          [{ typ: 'obj', act: 'blk', cid: 7, dat: { objects: [{ id, label: 'seven' }, { id: '' }] } }],
          [upd(8, 'eight'), upd(9, 'nine'), get(10)],
          [{ typ: 'obj', act: 'del', cid: 11, id: `${id}-b` }, upd(12, 'twelve')],
        ];
        // Sent together: the server reads them in one go and starts each behind the last.
        for (const message of messages) client.sendText(typeof message === 'string' ? message : JSON.stringify(message));
        const replies: Json[] = [];
        for (let k = 0; k < messages.length; k++) replies.push(await client.next());
        const summary = replies.map((reply: Json): unknown =>
          Array.isArray(reply)
            ? reply.map((r: Json) => `${r.cid as number} ${r.res as string}${r.act === 'rea' && r.res === 'suc' ? ` ${r.dat.lab as string}` : ''}`)
            : (reply as Json[])[0],
        );
        assert.deepEqual(summary.slice(0, 4), [['1 suc'], ['2 suc'], ['3 suc two', '4 suc', '5 suc four'], ['6 err']]);
        assertMessageError(replies[4], 'invalid_json');
        assert.deepEqual(summary.slice(5), [['7 err'], ['8 suc', '9 suc', '10 suc nine'], ['11 suc', '12 suc']]);
        const [obj] = await client.request([get(13)]);
        assert.equal(obj.dat.lab, 'twelve');
        const [gone] = await client.request([{ typ: 'obj', act: 'rea', cid: 14, id: `${id}-b` }]);
        assert.equal(gone.erc, 404);
        await client.close();
      });

      it('pipelined messages past one message\'s worth of text wait for the replies before them, and are all answered', async () => {
        const client = await connectV1(transport, h.server, r1.write);
        const id = (k: number, i: number): string => `big-${transport}-${k}-${i}`;
        // Each about 40 KB: two under way would pass maxMessageBytes (64 KiB), so each waits.
        const messages = Array.from({ length: 5 }, (_v, k) =>
          JSON.stringify([{ typ: 'obj', act: 'blk', cid: k, dat: { objects: Array.from({ length: 300 }, (_w, i) => ({ id: id(k, i), label: `${k}`.repeat(100) })) } }]),
        );
        assert.ok(messages.every((text) => text.length > 33_000 && text.length < 60_000));
        for (const text of messages) client.sendText(text);
        client.sendText(JSON.stringify([{ typ: 'obj', act: 'rea', cid: 'last', id: id(4, 299) }]));
        for (let k = 0; k < messages.length; k++) {
          const [reply] = (await client.next()) as Json[];
          assert.deepEqual([reply.cid, reply.res, reply.dat.count], [k, 'suc', 300]);
        }
        const [last] = (await client.next()) as Json[];
        assert.equal(last.cid, 'last');
        assert.equal(last.dat.lab, '4'.repeat(100));
        await client.close();
      });

      it('a token revoked after the handshake ends the connection at the next message', async () => {
        const issued = await call(h.url, 'POST', '/admin/v1/realm/r1/token', { token: adminToken, body: { scope: 'read' } });
        const client = await connectV1(transport, h.server, issued.json.token as string);
        assert.equal((await client.one({ typ: 'sys', act: 'pin' })).res, 'suc');
        const revoked = await call(h.url, 'DELETE', `/admin/v1/realm/r1/token/${issued.json.id as string}`, { token: adminToken });
        assert.equal(revoked.status, 200);
        client.sendText('[{"typ":"sys","act":"pin","cid":"after"}]');
        assertMessageError(await client.next(), 'unauthorized');
        const closed = await client.closed;
        if (transport === 'ws') assert.equal(closed.code, 4401);
      });
    });
  }

  describe('TCP framing', () => {
    it('answers a message split over several writes', async () => {
      const client = await connectTcp(h.server.tcpPort, r1.read);
      const text = JSON.stringify([{ typ: 'sys', act: 'pin', rid: 'split' }]) + '\n';
      for (const part of [text.slice(0, 3), text.slice(3, 10), text.slice(10)]) {
        client.sendBytes(part);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal((await client.next())[0].rid, 'split');
      await client.close();
    });

    it('answers coalesced messages in order, one reply line each, with \\r\\n and blank lines', async () => {
      const client = await connectTcp(h.server.tcpPort);
      client.sendBytes(`Bearer ${r1.read}\r\n\r\n[{"typ":"sys","act":"pin","rid":1}]\r\n[{"typ":"sys","act":"pin","rid":2}]\n\n[{"typ":"sys","act":"pin","rid":3}]\n`);
      assert.equal((await client.next())[0].act, 'aut');
      for (const rid of [1, 2, 3]) assert.equal((await client.next())[0].rid, rid);
      await client.close();
    });

    it('keeps a UTF-8 character split across writes', async () => {
      const client = await connectTcp(h.server.tcpPort, r1.write);
      const bytes = Buffer.from(JSON.stringify([{ typ: 'obj', act: 'cre', cid: 'u', id: 'utf8', lab: 'Zürich 🚚' }]) + '\n');
      const cut = bytes.indexOf(Buffer.from('🚚')) + 2;
      client.sendBytes(bytes.subarray(0, cut));
      await new Promise((resolve) => setTimeout(resolve, 20));
      client.sendBytes(bytes.subarray(cut));
      assert.equal((await client.next())[0].res, 'suc');
      const get = await client.one({ typ: 'obj', act: 'rea', id: 'utf8' });
      assert.equal(get.dat.lab, 'Zürich 🚚');
      await client.close();
    });

    it('a line that is not UTF-8 is one invalid_json error; the connection stays', async () => {
      const client = await connectTcp(h.server.tcpPort, r1.read);
      client.sendBytes(Buffer.from([0x5b, 0xc3, 0x28, 0x5d, 0x0a]));
      assertMessageError(await client.next(), 'invalid_json');
      assert.equal((await client.one({ typ: 'sys', act: 'pin' })).res, 'suc');
      await client.close();
    });

    it('a line over the limit is a too_large error, then the connection closes', async () => {
      const client = await connectTcp(h.server.tcpPort, r1.read);
      client.sendText('[{"typ":"sys","act":"pin","rid":"before"}]');
      client.sendBytes('[' + ' '.repeat(maxMessageBytes + 10));
      assert.equal((await client.next())[0].rid, 'before');
      assertMessageError(await client.next(), 'too_large');
      await client.closed;
    });

    it('a line over the limit before the handshake is a too_large error, then the connection closes', async () => {
      const client = await connectTcp(h.server.tcpPort);
      client.sendBytes('x'.repeat(maxMessageBytes + 10));
      await assertAuthFailure(client, undefined, 'fatal');
    });

    it('a client that half-closes gets the answers to what it sent, then the end', async () => {
      const socket = netConnect({ port: h.server.tcpPort, host: '127.0.0.1' });
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (received += chunk));
      const ended = new Promise((resolve) => socket.on('end', resolve));
      socket.end(`Bearer ${r1.read}\n[{"typ":"sys","act":"pin","rid":"last"}]`);
      await ended;
      socket.destroy();
      const lines = received.trim().split('\n').map((line): Json => JSON.parse(line));
      assert.equal(lines.length, 2);
      assert.equal(lines[1][0].rid, 'last');
    });
  });

  describe('WebSocket specifics', () => {
    it('a message over the limit is a too_large error, then close code 1009; the messages before it are answered', async () => {
      const client = await connectWs(h.url, r1.read);
      client.sendText('[{"typ":"sys","act":"pin","rid":"before"}]');
      client.sendText('[' + ' '.repeat(maxMessageBytes) + ']');
      assert.equal((await client.next())[0].rid, 'before');
      assertMessageError(await client.next(), 'too_large');
      assert.equal((await client.closed).code, 1009);
    });

    it('a message over twice the limit is refused while it arrives, with close code 1009', async () => {
      const client = await connectWs(h.url, r1.read);
      client.sendText('[' + ' '.repeat(2 * maxMessageBytes) + ']');
      assert.equal((await client.closed).code, 1009);
    });

    it('a message over the limit before the handshake is a too_large error, then close', async () => {
      const client = await connectWs(h.url);
      client.sendText('x'.repeat(maxMessageBytes + 10));
      await assertAuthFailure(client, undefined, 'fatal');
    });

    it('/ws is the same endpoint as /v1/ws', async () => {
      const client = await connectWs(h.url, r1.read, '/ws');
      assert.equal((await client.one({ typ: 'sys', act: 'hbt' })).res, 'suc');
      await client.close();
    });

    it('binary frames carry UTF-8 JSON too; invalid UTF-8 there is invalid_json', async () => {
      const client = await connectWs(h.url, r1.read);
      client.sendBytes(Buffer.from('[{"typ":"sys","act":"pin","rid":"bin"}]'));
      assert.equal((await client.next())[0].rid, 'bin');
      client.sendBytes(Buffer.from([0x5b, 0xff, 0x5d]));
      assertMessageError(await client.next(), 'invalid_json');
      await client.close();
    });

    it('an upgrade on another path is a 404', async () => {
      const ws = new WebSocket(wsUrl(h.url).replace('/v1/ws', '/v1/other'));
      ws.on('error', () => undefined);
      const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
      assert.equal(status, 404);
    });
  });

  describe('/v1/http', () => {
    it('answers an array of messages with one reply per cid (and per failure) inside a 200', async () => {
      await postV1(h.url, r1.write, [{ typ: 'obj', act: 'cre', id: 'h1', lab: 'x', cid: 'c' }]);
      const res = await postV1(h.url, r1.read, [
        { typ: 'obj', act: 'rea', id: 'h1', cid: 'g' },
        { typ: 'obj', act: 'upd', id: 'h1', cid: 'u' },
        { typ: 'huh', act: 'rea' },
      ]);
      assert.equal(res.status, 200);
      assert.equal(res.json.length, 3);
      assert.equal(res.json[0].dat.lab, 'x');
      assert.equal(res.json[0].cid, 'g');
      assert.equal(res.json[1].erc, 403);
      assert.equal(res.json[2].erc, 400);
    });

    it('errors of the request itself use HTTP status and a body with both err/erc and the v2 keys', async () => {
      const none = await postV1(h.url, null, []);
      assert.equal(none.status, 401);
      assert.deepEqual(none.json.error.code, 'unauthorized');
      assert.equal(none.json.result, 'error');
      assert.equal(none.json.res, 'err');
      assert.equal(none.json.erc, 401);
      assert.equal(none.json.err, none.json.error.message);
      const bad = await postV1(h.url, 'lcs_bogus', []);
      assert.equal(bad.status, 401);
      const malformed = await postV1(h.url, r1.read, '[{"typ":');
      assert.equal(malformed.status, 400);
      assert.equal(malformed.json.error.code, 'invalid_json');
      const notArray = await postV1(h.url, r1.read, { typ: 'sys', act: 'pin' });
      assert.equal(notArray.status, 400);
      assert.equal(notArray.json.error.code, 'invalid_request');
      const media = await postV1(h.url, r1.read, '[]', { 'content-type': 'text/plain' });
      assert.equal(media.status, 415);
      const big = await postV1(h.url, r1.read, '[' + ' '.repeat(h.config.maxBodyBytes) + ']');
      assert.equal(big.status, 413);
      assert.equal(big.json.error.code, 'too_large');
      const get = await call(h.url, 'GET', '/v1/http', { token: r1.read });
      assert.equal(get.status, 405);
    });

    it('sub and uns are errors: there is no push channel', async () => {
      const res = await postV1(h.url, r1.read, [{ typ: 'sub', act: 'sub', cid: 's' }, { typ: 'sub', act: 'uns', cid: 'u' }]);
      assert.equal(res.status, 200);
      assert.equal(res.json[0].res, 'err');
      assert.match(res.json[0].err as string, /WebSocket or TCP/);
      assert.equal(res.json[1].res, 'err');
    });
  });
});

describe('v1 connection limits and lifecycle', () => {
  it('handshake timeout: no token in time fails the handshake and closes', async () => {
    const h = await startHarness({ handshakeTimeoutMs: 150 });
    try {
      for (const transport of transports) {
        const client = await open(h, transport);
        await assertAuthFailure(client, /within 150 ms/, 'timeout');
      }
    } finally {
      await h.stop();
    }
  });

  it('idle timeout: a silent TCP connection gets a timeout error and is closed; WebSocket pongs keep one open', async () => {
    const h = await startHarness({ idleTimeoutMs: 300 });
    try {
      const realm = await makeRealm(h.url, 'idle');
      const tcp = await connectTcp(h.server.tcpPort, realm.read);
      const ws = await connectWs(h.url, realm.read);
      assertMessageError(await tcp.next(2000), 'timeout');
      await tcp.closed;
      // Three more timeouts: the server's pings (each connection's own timer) keep it open.
      await new Promise((resolve) => setTimeout(resolve, 900));
      assert.equal(ws.isClosed, false);
      assert.equal((await ws.one({ typ: 'sys', act: 'pin' })).res, 'suc');
      await ws.close();
    } finally {
      await h.stop();
    }
  });

  it('a revoked token ends a quiet subscriber within 1.5 × LOCUS_TOKEN_RECHECK_MS, without a message from it', async () => {
    const h = await startHarness({ tokenRecheckMs: 100 });
    try {
      const realm = await makeRealm(h.url, 'quiet');
      const issued = await call(h.url, 'POST', '/admin/v1/realm/quiet/token', { token: adminToken, body: { scope: 'read' } });
      const revoked = await connectTcp(h.server.tcpPort, issued.json.token as string);
      const kept = await connectWs(h.url, realm.read);
      for (const client of [revoked, kept]) assert.equal((await client.one({ typ: 'sub', act: 'sub', rea: 'quiet' })).res, 'suc');
      await call(h.url, 'DELETE', `/admin/v1/realm/quiet/token/${issued.json.id as string}`, { token: adminToken });
      assertMessageError(await revoked.next(2000), 'unauthorized');
      await revoked.closed;
      // A valid token survives the rechecks.
      assert.equal(kept.isClosed, false);
      await kept.close();
    } finally {
      await h.stop();
    }
  });

  it('max connections: one more is told unavailable and closed (1013); a freed slot is reused', async () => {
    const h = await startHarness({ maxConnections: 2 });
    try {
      const realm = await makeRealm(h.url, 'full');
      const a = await connectWs(h.url, realm.read);
      const b = await connectTcp(h.server.tcpPort, realm.read);
      for (const transport of transports) {
        const extra = await open(h, transport);
        assertMessageError(await extra.next(), 'unavailable');
        const closed = await extra.closed;
        if (transport === 'ws') assert.equal(closed.code, 1013);
      }
      assert.equal(h.server.v1Stats().connections, 2);
      await a.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const c = await connectTcp(h.server.tcpPort, realm.read);
      await Promise.all([b.close(), c.close()]);
    } finally {
      await h.stop();
    }
  });

  it('shutdown: every connection is told and closed with 1001 (WebSocket: going away) before the store closes', async () => {
    const h = await startHarness();
    const realm = await makeRealm(h.url, 'bye');
    const ws = await connectWs(h.url, realm.read);
    const tcp = await connectTcp(h.server.tcpPort, realm.read);
    const pending = await connectTcp(h.server.tcpPort);
    await h.stop();
    for (const client of [ws, tcp, pending]) {
      assertMessageError(await client.next(), 'unavailable');
      await client.closed;
    }
    assert.equal((await ws.closed).code, 1001);
  });
});
