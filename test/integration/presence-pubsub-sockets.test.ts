/**
 * Pub/sub (compat 4.8, 12.8) and presence (compat 6) over real WebSocket connections with
 * Hivekit's envelope and JWT sign-in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import type { Config } from '../../internal/config/config.js';
import { adminToken, call, startHarness, type Harness } from '../support/harness.js';


const SECRET = 'CHANGE_ME';
const jwtConfig: Partial<Config> = { jwtSecret: SECRET };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
type Json = any;

function jwt(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().sign(new TextEncoder().encode(SECRET));
}

/** A bare Hivekit-style client: signs in, sends arrays, matches replies by `cid`, keeps pushes. */
class HivekitSocket {
  readonly pushes: Json[] = [];
  private readonly replies = new Map<string, (reply: Json) => void>();
  private nextCid = 0;
  private pushWaiters: (() => void)[] = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      assert.equal(isBinary, false, 'every server frame is a text frame');
      const frame = JSON.parse(data.toString('utf8'));
      assert.ok(Array.isArray(frame), 'every server frame is a JSON array');
      for (const message of frame) {
        if (typeof message.cid === 'string' && this.replies.has(message.cid)) {
          const resolve = this.replies.get(message.cid);
          this.replies.delete(message.cid);
          resolve?.(message);
        } else {
          this.pushes.push(message);
          for (const wake of this.pushWaiters.splice(0)) wake();
        }
      }
    });
  }

  static async open(url: string, token: string): Promise<HivekitSocket> {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const client = new HivekitSocket(ws);
    ws.send(`Bearer ${token}`);
    const auth = await client.nextPush(2000);
    assert.equal(auth.res, 'suc', `sign-in: ${JSON.stringify(auth)}`);
    client.pushes.length = 0;
    return client;
  }

  request(message: Record<string, unknown>): Promise<Json> {
    const cid = `c${++this.nextCid}`;
    const reply = new Promise<Json>((resolve) => this.replies.set(cid, resolve));
    this.ws.send(JSON.stringify([{ ...message, cid }]));
    return reply;
  }

  /** The next push (waits up to `ms`). */
  async nextPush(ms = 400): Promise<Json> {
    const deadline = Date.now() + ms;
    while (this.pushes.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no push within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.pushWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.pushes.shift();
  }

  /** Waits `ms`, then takes every push that came. */
  async pushesAfter(ms: number): Promise<Json[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.pushes.splice(0);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}

const delivery = (sid: string, eve: string, dat: unknown): Json => ({ typ: 'rea', act: 'pub', rea: 'fleet', sid, dat: { eve, dat } });

describe('pub/sub and presence over WebSocket', () => {
  let h: Harness;
  let user: string;
  before(async () => {
    h = await startHarness(jwtConfig);
    assert.equal((await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: {} })).status, 200);
    user = await jwt({ sub: 'userA' });
    const writer = await HivekitSocket.open(h.url, user);
    for (const id of ['car/1', 'car/2', 'truck/1']) {
      const reply = await writer.request({ typ: 'obj', act: 'cre', rea: 'fleet', id, loc: { lon: 13.4, lat: 52.5 } });
      assert.equal(reply.res, 'suc');
    }
    await writer.close();
  });
  after(async () => {
    await h.stop();
  });

  it('patterns * and some-id: some-id reaches both, another-id only *; the publisher receives its own', async () => {
    const a = await HivekitSocket.open(h.url, user);
    const b = await HivekitSocket.open(h.url, await jwt({ sub: 'userB' }));
    for (const idp of ['*', 'some-id']) {
      const reply = await a.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'ping', idp } });
      assert.deepEqual([reply.typ, reply.act, reply.res, reply.err], ['rea', 'sub', 'suc', undefined]);
    }
    assert.equal((await b.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'ping', idp: 'some-id' } })).res, 'suc');
    assert.equal((await b.request({ typ: 'rea', act: 'pub', id: 'fleet', dat: { eve: 'ping', idp: 'some-id', dat: { n: 1 } } })).res, 'suc');
    const gotA = [await a.nextPush(), await a.nextPush()];
    assert.deepEqual(
      gotA.sort((x: Json, y: Json) => (x.sid < y.sid ? -1 : 1)),
      [delivery('*', 'ping', { n: 1 }), delivery('some-id', 'ping', { n: 1 })],
    );
    assert.deepEqual(await b.nextPush(), delivery('some-id', 'ping', { n: 1 }), 'the publisher gets its own');
    await a.request({ typ: 'rea', act: 'pub', id: 'fleet', dat: { eve: 'ping', idp: 'another-id', dat: 'x' } });
    assert.deepEqual(await a.nextPush(), delivery('*', 'ping', 'x'));
    assert.deepEqual(await a.pushesAfter(100), []);
    assert.deepEqual(await b.pushesAfter(0), []);
    await a.close();
    await b.close();
  });

  it('glob patterns (`/object/*`), idp defaulting to *, uns stopping delivery, unknown uns forgiven', async () => {
    const a = await HivekitSocket.open(h.url, user);
    await a.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'e', idp: '/object/*' } });
    await a.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'all' } });
    await a.request({ typ: 'rea', act: 'pub', id: 'fleet', dat: { eve: 'e', idp: '/object/123', dat: 1 } });
    assert.deepEqual(await a.nextPush(), delivery('/object/*', 'e', 1));
    await a.request({ typ: 'rea', act: 'pub', id: 'fleet', dat: { eve: 'all', dat: 2 } });
    assert.deepEqual(await a.nextPush(), delivery('*', 'all', 2));
    assert.equal((await a.request({ typ: 'rea', act: 'uns', id: 'fleet', dat: { eve: 'e', idp: '/object/*' } })).res, 'suc');
    assert.equal((await a.request({ typ: 'rea', act: 'uns', id: 'fleet', dat: { eve: 'never', idp: 'x' } })).res, 'suc');
    await a.request({ typ: 'rea', act: 'pub', id: 'fleet', dat: { eve: 'e', idp: '/object/123', dat: 3 } });
    assert.deepEqual(await a.pushesAfter(150), []);
    await a.close();
  });

  it('errors: unknown realm 404, bad eve 400, sub over HTTP 400; pub over HTTP delivers', async () => {
    const a = await HivekitSocket.open(h.url, user);
    const missing = await a.request({ typ: 'rea', act: 'sub', id: 'nowhere', dat: { eve: 'e' } });
    assert.deepEqual([missing.res, missing.err, missing.erc], ['err', 'unknown realm nowhere', 404]);
    const bad = await a.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: '' } });
    assert.deepEqual([bad.res, bad.erc], ['err', 400]);
    await a.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'e' } });
    const http = await call(h.url, 'POST', '/api/v1', {
      token: user,
      body: [
        { typ: 'rea', act: 'pub', cid: 'p', id: 'fleet', dat: { eve: 'e', idp: 'x', dat: true } },
        { typ: 'rea', act: 'sub', cid: 's', id: 'fleet', dat: { eve: 'e' } },
      ],
    });
    const replies = http.json as Json[];
    assert.equal(replies.find((r: Json) => r.cid === 'p').res, 'suc');
    assert.equal(replies.find((r: Json) => r.cid === 's').erc, 400);
    assert.deepEqual(await a.nextPush(), delivery('*', 'e', true));
    await a.close();
  });

  it('a dpv connection makes car/* con in v1 and v2 reads within 400 ms, dis after close, publishing connectionStatusChanged', async () => {
    const watcher = await HivekitSocket.open(h.url, user);
    assert.equal((await watcher.request({ typ: 'rea', act: 'sub', id: 'fleet', dat: { eve: 'connectionStatusChanged' } })).res, 'suc');
    const v1Status = async (id: string): Promise<string> => (await watcher.request({ typ: 'obj', act: 'rea', rea: 'fleet', id })).dat.cst as string;
    const v2Status = async (id: string): Promise<string> =>
      (await call(h.url, 'GET', `/v2/realm/fleet/object/${encodeURIComponent(id)}`, { token: user })).json.connectionStatus as string;
    assert.equal(await v1Status('car/1'), 'dis');
    assert.equal(await v2Status('car/1'), 'dis');

    const provider = await HivekitSocket.open(h.url, await jwt({ sub: 'dataProviderClient', dpv: { fleet: ['car/*'] } }));
    const started = Date.now();
    const first = [await watcher.nextPush(), await watcher.nextPush()];
    assert.ok(Date.now() - started <= 400);
    assert.deepEqual(
      first.map((m: Json): unknown => m.dat.dat),
      [
        { cst: 'con', id: 'car/1' },
        { cst: 'con', id: 'car/2' },
      ],
    );
    assert.equal(first[0].sid, '*');
    assert.equal(await v1Status('car/1'), 'con');
    assert.equal(await v2Status('car/2'), 'con');
    assert.equal(await v1Status('truck/1'), 'dis');
    const list = await watcher.request({ typ: 'obj', act: 'lis', rea: 'fleet', dat: {} });
    assert.deepEqual(
      Object.fromEntries(Object.entries(list.dat as Record<string, Json>).map(([id, entry]) => [id, entry.cst])),
      { 'car/1': 'con', 'car/2': 'con', 'truck/1': 'dis' },
    );

    await provider.close();
    const then = [await watcher.nextPush(), await watcher.nextPush()];
    assert.deepEqual(
      then.map((m: Json): unknown => m.dat.dat),
      [
        { cst: 'dis', id: 'car/1' },
        { cst: 'dis', id: 'car/2' },
      ],
    );
    assert.equal(await v1Status('car/1'), 'dis');
    assert.equal(await v2Status('car/2'), 'dis');
    // Creating an object publishes no connectionStatusChanged.
    await watcher.request({ typ: 'obj', act: 'cre', rea: 'fleet', id: 'car/3', loc: { lon: 1, lat: 2 } });
    assert.deepEqual(await watcher.pushesAfter(150), []);
    await watcher.close();
  });
});
