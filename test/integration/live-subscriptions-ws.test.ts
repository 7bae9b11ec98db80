/**
 * Hivekit subscriptions over a real WebSocket and the HTTP action endpoint (hivekit-compat.md
 * section 5, 12.9): frames as the client sees them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { makeRealm, startHarness, type Harness } from '../support/harness.js';
import { sleep } from '../support/live-fixture.js';
import { wsUrl } from '../support/v1-clients.js';

type Message = Record<string, unknown> & { obj?: Record<string, Record<string, unknown>> };

/** A raw Hivekit-style client: every frame kept, replies found by cid. */
class RawClient {
  readonly frames: Message[][] = [];
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      assert.equal(isBinary, false, 'every server frame is a text frame');
      const value: unknown = JSON.parse(data.toString('utf8'));
      assert.ok(Array.isArray(value), 'every server frame is a JSON array');
      this.frames.push(value as Message[]);
    });
  }

  static async open(url: string, token: string): Promise<RawClient> {
    const ws = new WebSocket(wsUrl(url));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const client = new RawClient(ws);
    ws.send(`Bearer ${token}`);
    await client.until(() => client.frames.some((f) => f.some((m) => m.act === 'aut')));
    client.frames.length = 0;
    return client;
  }

  send(messages: object[]): void {
    this.ws.send(JSON.stringify(messages));
  }

  /** Sends and waits for the reply with this cid. */
  async call(message: Record<string, unknown>): Promise<Message> {
    this.send([message]);
    let found: Message | undefined;
    await this.until(() => (found = this.frames.flat().find((m) => m.cid === message.cid)) !== undefined);
    return found as Message;
  }

  /** Pushes (cid-less `sub` messages) received so far. */
  peekPushes(): Message[] {
    return this.frames.flat().filter((m) => m.typ === 'sub' && m.cid === undefined);
  }

  /** Pushes received so far, and forgets every frame. */
  takePushes(): Message[] {
    const pushes = this.peekPushes();
    this.frames.length = 0;
    return pushes;
  }

  async until(ready: () => boolean, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await sleep(5);
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close(1000);
    });
  }
}

const keys = (push: Message | undefined, map: string): string[] => Object.keys(push?.obj?.[map] ?? {}).sort();

describe('Hivekit subscriptions over WebSocket', () => {
  let h: Harness;
  let token = '';
  const realm = 'live-ws';

  before(async () => {
    h = await startHarness();
    token = (await makeRealm(h.url, realm)).write;
    const probe = await RawClient.open(h.url, token);
    const reply = await probe.call({ typ: 'sub', act: 'cre', id: 'probe', rea: realm, dat: { typ: 'obj', sty: 'rea' }, cid: 'probe' }).catch(() => null);
    assert.equal(reply?.res, 'suc', 'the server serves Hivekit sub cre');
    await probe.close();
  });
  after(() => h.stop());

  it('the exe push comes in a later frame than the create reply, and holds the current set', async () => {
    const c = await RawClient.open(h.url, token);
    c.send([{ typ: 'obj', act: 'cre', id: 'ws-a', rea: realm, loc: { lon: 13.4, lat: 52.5 }, dat: { type: 'car' }, cid: 'w1' }]);
    await c.until(() => c.frames.flat().some((m) => m.cid === 'w1'));
    c.frames.length = 0;
    c.send([{ typ: 'sub', act: 'cre', id: 's1', rea: realm, dat: { typ: 'obj', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 1000 }, exe: true }, cid: 'c1' }]);
    await c.until(() => c.peekPushes().length > 0);
    const replyFrame = c.frames.findIndex((f) => f.some((m) => m.cid === 'c1'));
    const pushFrame = c.frames.findIndex((f) => f.some((m) => m.typ === 'sub' && m.cid === undefined));
    assert.ok(replyFrame >= 0 && pushFrame > replyFrame, 'reply first, push in a later frame');
    const [push] = c.takePushes();
    assert.deepEqual(Object.keys(push ?? {}), ['typ', 'id', 'uty', 'obj']);
    assert.equal(push?.uty, 'ful');
    assert.deepEqual(keys(push, 'cre'), ['ws-a']);
    await sleep(150);
    assert.deepEqual(c.takePushes(), [], 'exactly one initial push');
    await c.close();
  });

  it('a write in the circle is pushed to the writer itself; leaving is one del; after del nothing', async () => {
    const c = await RawClient.open(h.url, token);
    assert.equal((await c.call({ typ: 'sub', act: 'cre', id: 's2', rea: realm, dat: { typ: 'obj', sty: 'cir', sha: { cx: 20, cy: 10, r: 1000 } }, cid: 'c2' })).res, 'suc');
    c.send([{ typ: 'obj', act: 'set', id: 'ws-b', rea: realm, loc: { lon: 20, lat: 10 } }]);
    await c.until(() => c.peekPushes().length > 0);
    await sleep(100);
    let pushes = c.takePushes();
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.uty, 'dta');
    assert.deepEqual(keys(pushes[0], 'cre'), ['ws-b']);
    c.send([{ typ: 'obj', act: 'set', id: 'ws-b', rea: realm, loc: { lon: 21, lat: 10 } }]);
    await c.until(() => c.peekPushes().length > 0);
    await sleep(100);
    pushes = c.takePushes();
    assert.equal(pushes.length, 1);
    assert.deepEqual(keys(pushes[0], 'del'), ['ws-b']);
    assert.equal((await c.call({ typ: 'sub', act: 'del', id: 's2', rea: realm, cid: 'c3' })).res, 'suc');
    c.send([{ typ: 'obj', act: 'set', id: 'ws-b', rea: realm, loc: { lon: 20, lat: 10 } }]);
    await sleep(150);
    assert.deepEqual(c.takePushes(), []);
    const unknown = await c.call({ typ: 'sub', act: 'del', id: 's2', rea: realm, cid: 'c4' });
    assert.deepEqual([unknown.res, unknown.err, unknown.erc], ['err', 'unknown subscription s2', 404]);
    await c.close();
  });

  it('object records in pushes carry tds: in the exe push (read from the store) and as an upd when only the task ids change', async () => {
    const c = await RawClient.open(h.url, token);
    const id = 'ws-tasks';
    assert.equal((await c.call({ typ: 'obj', act: 'cre', id, rea: realm, loc: { lon: 30, lat: 30 }, tds: ['job/1', 'job/2'], cid: 't1' })).res, 'suc');
    c.frames.length = 0;
    c.send([{ typ: 'sub', act: 'cre', id: 'st', rea: realm, dat: { typ: 'obj', sty: 'cir', sha: { cx: 30, cy: 30, r: 1000 }, exe: true }, cid: 't2' }]);
    await c.until(() => c.peekPushes().length > 0);
    let [push] = c.takePushes();
    assert.equal(push?.uty, 'ful');
    assert.deepEqual(push?.obj?.cre?.[id], { id, loc: { gcs: '', lon: 30, lat: 30, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0, tim: (push?.obj?.cre?.[id] as { loc: { tim: string } }).loc.tim }, cst: 'dis', tds: ['job/1', 'job/2'] });
    // Only the task ids change: one upd with the new ones.
    c.send([{ typ: 'obj', act: 'set', id, rea: realm, tds: ['job/3'] }]);
    await c.until(() => c.peekPushes().length > 0);
    await sleep(100);
    const pushes = c.takePushes();
    assert.equal(pushes.length, 1);
    push = pushes[0];
    assert.deepEqual(keys(push, 'upd'), [id]);
    assert.deepEqual((push?.obj?.upd?.[id] as { tds?: unknown }).tds, ['job/3']);
    // The same ids again: nothing to push. Cleared: an upd without tds.
    c.send([{ typ: 'obj', act: 'set', id, rea: realm, tds: ['job/3'] }]);
    await sleep(150);
    assert.deepEqual(c.takePushes(), []);
    c.send([{ typ: 'obj', act: 'set', id, rea: realm, tds: [] }]);
    await c.until(() => c.peekPushes().length > 0);
    [push] = c.takePushes();
    assert.deepEqual(keys(push, 'upd'), [id]);
    assert.equal('tds' in (push?.obj?.upd?.[id] as object), false);
    await c.close();
  });

  it('the same id on a new connection after a close is a new subscription', async () => {
    const first = await RawClient.open(h.url, token);
    await first.call({ typ: 'sub', act: 'cre', id: 'again', rea: realm, dat: { typ: 'are', sty: 'rea' }, cid: 'a1' });
    await first.close();
    const second = await RawClient.open(h.url, token);
    const reply = await second.call({ typ: 'sub', act: 'cre', id: 'again', rea: realm, dat: { typ: 'are', sty: 'rea', exe: true }, cid: 'a2' });
    assert.equal(reply.res, 'suc');
    await second.until(() => second.peekPushes().length > 0);
    const [push] = second.takePushes();
    assert.deepEqual(Object.keys(push ?? {}), ['typ', 'id', 'uty', 'are']);
    await second.close();
  });

  it('over HTTP sub cre is refused with 400', async () => {
    const res = await fetch(`${h.url}/v1/http`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ typ: 'sub', act: 'cre', id: 'h1', rea: realm, dat: { typ: 'obj' }, cid: 'h1' }]),
    });
    const [reply] = (await res.json()) as Message[];
    assert.equal(reply?.res, 'err');
    assert.equal(reply?.erc, 400);
    assert.match(String(reply?.err), /HTTP has no push channel/);
  });
});
