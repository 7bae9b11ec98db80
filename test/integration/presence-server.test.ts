/**
 * Presence and pub/sub inside a running server: a data-provider connection (a fake one,
 * handed to the server's registry as the v1 session does after sign-in) makes its objects
 * `con` in REST v2 reads and lists within 400 ms, and `dis` again after it closes; the
 * server's pub/sub delivers connectionStatusChanged. A location write makes nothing `con`.
 * Socket-level tests of the same: presence-pubsub-sockets.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { FakeConnection, principalWith } from '../support/fake-connection.js';

/** Polls until `check` holds or `ms` pass; returns the time it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > ms) assert.fail(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('presence in the server', () => {
  let h: Harness;
  let tokens: { read: string; write: string; admin: string };
  before(async () => {
    h = await startHarness();
    tokens = await makeRealm(h.url, 'fleet');
    for (const id of ['car/1', 'car/2', 'truck/1']) {
      const put = await call(h.url, 'PUT', `/v2/realm/fleet/object/${encodeURIComponent(id)}`, {
        token: tokens.write,
        body: { location: { longitude: 13.4, latitude: 52.5 } },
      });
      assert.equal(put.status, 200);
    }
  });
  after(async () => {
    await h.stop();
  });

  const status = async (id: string): Promise<string> =>
    (await call(h.url, 'GET', `/v2/realm/fleet/object/${encodeURIComponent(id)}`, { token: tokens.read })).json.connectionStatus as string;
  const listed = async (): Promise<Record<string, string>> => {
    const list = await call(h.url, 'GET', '/v2/realm/fleet/object', { token: tokens.read });
    return Object.fromEntries(Object.values(list.json as Record<string, { id: string; connectionStatus: string }>).map((e) => [e.id, e.connectionStatus]));
  };

  it('freshly located objects read and list as dis', async () => {
    assert.equal(await status('car/1'), 'dis');
    assert.deepEqual(await listed(), { 'car/1': 'dis', 'car/2': 'dis', 'truck/1': 'dis' });
  });

  it('a dpv connection makes matching objects con within 400 ms and dis after close, with connectionStatusChanged', async () => {
    const watcher = new FakeConnection();
    h.server.pubsub.subscribe(watcher, { key: 'fleet', name: 'fleet' }, { eve: 'connectionStatusChanged', idp: 'car/*' });
    const device = new FakeConnection(principalWith({ fleet: ['car/*'] }));
    h.server.presence.connectionOpened(device);
    await within(400, async () => (await status('car/1')) === 'con');
    assert.deepEqual(await listed(), { 'car/1': 'con', 'car/2': 'con', 'truck/1': 'dis' });
    await within(400, () => Promise.resolve(watcher.pushed.length === 2));
    assert.deepEqual(watcher.take(), [
      { typ: 'rea', act: 'pub', rea: 'fleet', sid: 'car/*', dat: { eve: 'connectionStatusChanged', dat: { cst: 'con', id: 'car/1' } } },
      { typ: 'rea', act: 'pub', rea: 'fleet', sid: 'car/*', dat: { eve: 'connectionStatusChanged', dat: { cst: 'con', id: 'car/2' } } },
    ]);

    device.close();
    await within(400, async () => (await status('car/1')) === 'dis');
    assert.deepEqual(await listed(), { 'car/1': 'dis', 'car/2': 'dis', 'truck/1': 'dis' });
    await within(400, () => Promise.resolve(watcher.pushed.length === 2));
    assert.deepEqual(
      watcher.take().map((m) => (m as { dat: { dat: unknown } }).dat.dat),
      [
        { cst: 'dis', id: 'car/1' },
        { cst: 'dis', id: 'car/2' },
      ],
    );
    watcher.close();
  });

  it('the realm setting connectionTimeout is still accepted, and changes nothing', async () => {
    const put = await call(h.url, 'PUT', '/admin/v1/realm/fleet', { token: adminToken, body: { settings: { connectionTimeout: 3600 } } });
    assert.equal(put.status, 200);
    await call(h.url, 'PUT', '/v2/realm/fleet/object/car%2F3', { token: tokens.write, body: { location: { longitude: 1, latitude: 2 } } });
    assert.equal(await status('car/3'), 'dis');
  });
});
