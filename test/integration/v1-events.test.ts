/**
 * Live subscriptions over real sockets: geofence events computed at ingest, filters,
 * ordering (a write's reply before its events), realm isolation, realm deletion, and
 * flow control for a subscriber that does not read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, connectV1, connectWs, type Json, type V1Client, type V1Transport } from '../support/v1-clients.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const loc = (longitude: number, latitude: number, time?: string): Record<string, unknown> =>
  time === undefined ? { longitude, latitude } : { longitude, latitude, time };

/** Events as short strings: `loc o`, `ent o A`, `del object o`, `del area A`. */
function flat(events: readonly Json[]): string[] {
  return events.map((e) => {
    if (e.act === 'loc') return `loc ${e.dat.id as string}`;
    if (e.act === 'ent' || e.act === 'exi') return `${e.act as string} ${e.dat.object as string} ${e.dat.area as string}`;
    return 'object' in e.dat ? `del object ${e.dat.object as string}` : `del area ${e.dat.area as string}`;
  });
}

async function subscribe(client: V1Client, dat: Record<string, unknown> = {}, rea?: string): Promise<string> {
  const result = await client.one({ typ: 'sub', act: 'sub', dat, ...(rea === undefined ? {} : { rea }) });
  assert.equal(result.res, 'suc', JSON.stringify(result));
  assert.match(result.dat.id as string, /^sub_/);
  return result.dat.id as string;
}

/** A REST location (loc()) in v1's short keys. */
function v1Loc(location: Record<string, unknown>): Record<string, unknown> {
  const names: Record<string, string> = { longitude: 'lon', latitude: 'lat', time: 'tim' };
  return Object.fromEntries(Object.entries(location).map(([key, value]) => [names[key] ?? key, value]));
}

/** Waits a little and checks that no (further) event arrived. */
async function assertQuiet(client: V1Client, count: number): Promise<void> {
  await pause(100);
  assert.deepEqual(flat(client.events.slice(count)), []);
}

describe('v1 live events', () => {
  let h: Harness;
  let realm: { read: string; write: string; admin: string };
  let other: { read: string; write: string; admin: string };

  const rest = (method: string, path: string, body?: unknown): Promise<Json> =>
    call(h.url, method, `/v2/realm/ev${path}`, { token: realm.write, body }).then((r): Json => {
      assert.ok(r.status === 200, `${method} ${path}: ${r.status} ${r.text}`);
      return r.json;
    });

  before(async () => {
    h = await startHarness();
    realm = await makeRealm(h.url, 'ev');
    other = await makeRealm(h.url, 'ev-other');
    await rest('POST', '/area/A', { label: 'A', shape: { w: 0, s: 0, e: 2, n: 2 } });
    await rest('POST', '/area/B', { label: 'B', shape: { w: 1, s: 0, e: 3, n: 2 } });
    await rest('POST', '/area/C', { label: 'C', shape: { cx: 10, cy: 10, r: 5000 } });
  });
  after(async () => {
    await h.stop();
  });

  for (const transport of ['ws', 'tcp'] as V1Transport[]) {
    it(`${transport}: enter, move between overlapping areas, exit: loc, then exits, then enters`, async () => {
      const sub = await connectV1(transport, h.server, realm.read);
      await subscribe(sub);
      const id = `truck-${transport}`;
      await rest('PUT', `/object/${id}`, { location: loc(-1, 1) });
      await rest('PUT', `/object/${id}`, { location: loc(0.5, 1) });
      await rest('PUT', `/object/${id}`, { location: loc(2.5, 1) });
      await rest('PUT', `/object/${id}`, { location: loc(5, 1) });
      const events = await sub.waitForEvents(8);
      assert.deepEqual(flat(events), [`loc ${id}`, `loc ${id}`, `ent ${id} A`, `loc ${id}`, `exi ${id} A`, `ent ${id} B`, `loc ${id}`, `exi ${id} B`]);
      const [first, , enter] = events;
      assert.deepEqual(Object.keys(first), ['typ', 'act', 'rea', 'dat']);
      assert.equal(first.rea, 'ev');
      assert.deepEqual(Object.keys(first.dat), ['id', 'label', 'location', 'data', 'connectionStatus']);
      assert.equal(first.dat.connectionStatus, 'dis', 'a location write does not make an object con');
      assert.deepEqual(enter.dat, { object: id, area: 'A', time: events[1].dat.location.time });
      await assertQuiet(sub, 8);
      await sub.close();
    });
  }

  it('a write on the subscribed connection: the reply comes before the events it causes', async () => {
    const client = await connectWs(h.url, realm.write);
    await subscribe(client);
    const before = client.log.length;
    const [reply] = await client.request([{ typ: 'obj', act: 'cre', rid: 'w', id: 'self', loc: v1Loc(loc(1.5, 1)) }]);
    assert.equal(reply.rid, 'w');
    await client.waitForEvents(3);
    const after = client.log.slice(before);
    assert.equal(after[0][0].rid, 'w');
    assert.deepEqual(flat(after.slice(1).flat()), ['loc self', 'ent self A', 'ent self B']);
    await client.close();
  });

  it('pipelined writes on the subscribed connection: each reply comes before the events its write causes', async () => {
    const client = await connectTcp(h.server.tcpPort, realm.write);
    await subscribe(client, { objects: ['piped'] });
    const before = client.log.length;
    const moves = [loc(1.5, 1), loc(2.5, 1), loc(5, 5), loc(1.5, 1.5)];
    moves.forEach((location, k) => client.sendText(JSON.stringify([{ typ: 'obj', act: 'cre', rid: `m${k}`, id: 'piped', loc: v1Loc(location) }])));
    for (let k = 0; k < moves.length; k++) await client.next();
    await client.waitForEvents(10);
    await assertQuiet(client, 10);
    assert.deepEqual(flat(client.events), [
      'loc piped', 'ent piped A', 'ent piped B',
      'loc piped', 'exi piped A',
      'loc piped', 'exi piped B',
      'loc piped', 'ent piped A', 'ent piped B',
    ]);
    // The log as replies (`m0` …) and events, in arrival order: the k-th loc follows reply k.
    const order: string[] = client.log
      .slice(before)
      .flatMap((message: Json[]) => message.map((m: Json): string => (m.typ === 'evt' ? (flat([m])[0] as string) : (m.rid as string))));
    moves.forEach((_move, k) => {
      const reply = order.indexOf(`m${k}`);
      const locs = order.flatMap((entry: string, i: number) => (entry === 'loc piped' ? [i] : []));
      assert.ok(reply >= 0 && (locs[k] ?? -1) > reply, order.join(', '));
    });
    await client.close();
  });

  it('a bulk write compares the old location with the final one; an older fix raises nothing', async () => {
    const sub = await connectTcp(h.server.tcpPort, realm.read);
    await subscribe(sub, { objects: ['bulky'] });
    await rest('PUT', '/object/bulky', { location: loc(5, 5, '2026-01-01T00:00:10Z') });
    await rest('POST', '/object', {
      objects: [
        { id: 'bulky', location: loc(1, 1, '2026-01-01T00:00:11Z') },
        { id: 'bulky', location: loc(5, 6, '2026-01-01T00:00:12Z') },
      ],
    });
    // An older fix goes to history only: the current location stays, so no event.
    await rest('PUT', '/object/bulky', { location: loc(1, 1, '2026-01-01T00:00:05Z') });
    await rest('PUT', '/object/bulky', { label: 'no location change' });
    await sub.waitForEvents(2);
    assert.deepEqual(flat(sub.events), ['loc bulky', 'loc bulky']);
    assert.deepEqual(sub.events[1].dat.location, loc(5, 6, '2026-01-01T00:00:12.000Z'));
    await assertQuiet(sub, 2);
    await sub.close();
  });

  it('an area created around an object raises nothing until the object moves; a deleted area only del', async () => {
    const sub = await connectWs(h.url, realm.read);
    await subscribe(sub, { objects: ['parked'] });
    const areas = await connectWs(h.url, realm.read);
    await subscribe(areas, { areas: ['D'] });
    await rest('PUT', '/object/parked', { location: loc(20, 20) });
    await rest('POST', '/area/D', { label: 'D', shape: { w: 19, s: 19, e: 21, n: 21 } });
    await sub.waitForEvents(1);
    await assertQuiet(sub, 1);
    await rest('PUT', '/object/parked', { location: loc(25, 25) });
    await sub.waitForEvents(3);
    assert.deepEqual(flat(sub.events), ['loc parked', 'loc parked', 'exi parked D']);
    await rest('PUT', '/object/parked', { location: loc(20, 20) });
    await rest('DELETE', '/area/D');
    await rest('PUT', '/object/parked', { location: loc(25, 25) });
    await sub.waitForEvents(6);
    // An object filter passes nothing about areas alone (the area's own del).
    assert.deepEqual(flat(sub.events.slice(3)), ['loc parked', 'ent parked D', 'loc parked']);
    // An area filter passes only ent/exi of that area.
    await areas.waitForEvents(2);
    assert.deepEqual(flat(areas.events), ['exi parked D', 'ent parked D']);
    await assertQuiet(areas, 2);
    await Promise.all([sub.close(), areas.close()]);
  });

  it('deletes raise del for the object and for the area', async () => {
    const sub = await connectTcp(h.server.tcpPort, realm.read);
    await subscribe(sub);
    await rest('PUT', '/object/gone', { label: 'no location' });
    await rest('DELETE', '/object/gone');
    await rest('POST', '/area/tmp', { label: 'tmp', shape: { w: 50, s: 50, e: 51, n: 51 } });
    await rest('DELETE', '/area/tmp');
    await sub.waitForEvents(2);
    assert.deepEqual(sub.events, [
      { typ: 'evt', act: 'del', rea: 'ev', dat: { object: 'gone' } },
      { typ: 'evt', act: 'del', rea: 'ev', dat: { area: 'tmp' } },
    ]);
    await sub.close();
  });

  it('filters: objects narrow everything, areas pass only ent/exi, both must hold; events are not duplicated', async () => {
    const client = await connectWs(h.url, realm.read);
    await subscribe(client, { objects: ['f1'] });
    await subscribe(client, { objects: ['f1', 'f2'], areas: ['B'] });
    await rest('POST', '/object', { objects: [{ id: 'f1', location: loc(1.5, 1) }, { id: 'f2', location: loc(1.5, 1) }, { id: 'f3', location: loc(1.5, 1) }] });
    await client.waitForEvents(4);
    assert.deepEqual(flat(client.events), ['loc f1', 'ent f1 A', 'ent f1 B', 'ent f2 B']);
    await assertQuiet(client, 4);
    await client.close();
  });

  it('uns ends one subscription by id, or all of the realm without one', async () => {
    const client = await connectTcp(h.server.tcpPort, realm.read);
    const a = await subscribe(client, { objects: ['u1'] });
    const b = await subscribe(client, { objects: ['u2'] });
    const c = await subscribe(client, { objects: ['u3'] });
    const [one, missing] = await client.request([
      { typ: 'sub', act: 'uns', id: a, cid: '1' },
      { typ: 'sub', act: 'uns', id: a, cid: '2' },
    ]);
    assert.deepEqual(one.dat, { ids: [a] });
    assert.equal(missing.erc, 404);
    await rest('POST', '/object', { objects: [{ id: 'u1', location: loc(40, 40) }, { id: 'u2', location: loc(40, 40) }] });
    await client.waitForEvents(1);
    assert.deepEqual(flat(client.events), ['loc u2']);
    const all = await client.one({ typ: 'sub', act: 'uns' });
    assert.deepEqual(all.dat, { ids: [b, c] });
    await rest('PUT', '/object/u3', { location: loc(41, 41) });
    await assertQuiet(client, 1);
    await client.close();
  });

  it('bad sub payloads fail that action only', async () => {
    const client = await connectWs(h.url, realm.read);
    const results = await client.request([
      { typ: 'sub', act: 'sub', dat: { objects: [] } },
      { typ: 'sub', act: 'sub', dat: { objects: 'o1' } },
      { typ: 'sub', act: 'sub', dat: { areas: [1] } },
      { typ: 'sub', act: 'sub', dat: { kinds: ['loc'] } },
      { typ: 'sub', act: 'uns', id: 5 },
      { typ: 'sys', act: 'pin', cid: 'p' },
    ]);
    assert.deepEqual(
      results.map((r: Json): string => (r.res === 'suc' ? 'ok' : String(r.erc))),
      ['400', '400', '400', '400', '400', 'ok'],
    );
    await client.close();
  });

  it('two realms never see each other’s events; an admin token subscribes to a named realm', async () => {
    const mine = await connectWs(h.url, realm.read);
    const theirs = await connectTcp(h.server.tcpPort, other.read);
    const admin = await connectWs(h.url, adminToken);
    await subscribe(mine);
    await subscribe(theirs);
    await subscribe(admin, { objects: ['iso'] }, 'ev-other');
    const [forbidden] = await theirs.request([{ typ: 'sub', act: 'sub', rea: 'ev' }]);
    assert.equal(forbidden.erc, 403);
    await rest('PUT', '/object/iso', { location: loc(0.5, 1) });
    const put = await call(h.url, 'PUT', '/v2/realm/ev-other/object/iso', { token: other.write, body: { location: loc(0.5, 1) } });
    assert.equal(put.status, 200);
    await mine.waitForEvents(2);
    await theirs.waitForEvents(1);
    await admin.waitForEvents(1);
    await pause(100);
    assert.deepEqual(flat(mine.events), ['loc iso', 'ent iso A']);
    assert.ok(mine.events.every((e: Json) => e.rea === 'ev'));
    assert.deepEqual(flat(theirs.events), ['loc iso']);
    assert.equal(theirs.events[0].rea, 'ev-other');
    assert.deepEqual(flat(admin.events), ['loc iso']);
    await Promise.all([mine.close(), theirs.close(), admin.close()]);
  });

  it('events of writes over /v1/http and over another socket reach subscribers', async () => {
    const sub = await connectWs(h.url, realm.read);
    await subscribe(sub, { objects: ['via-http', 'via-tcp'] });
    const res = await fetch(h.url + '/v1/http', {
      method: 'POST',
      headers: { authorization: `Bearer ${realm.write}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ typ: 'obj', act: 'set', cid: 'h', id: 'via-http', loc: v1Loc(loc(60, 60)) }]),
    });
    assert.equal(res.status, 200);
    const writer = await connectTcp(h.server.tcpPort, realm.write);
    await writer.request([{ typ: 'obj', act: 'blk', cid: 'b', dat: { objects: [{ id: 'via-tcp', location: loc(61, 61) }] } }]);
    await sub.waitForEvents(2);
    assert.deepEqual(flat(sub.events), ['loc via-http', 'loc via-tcp']);
    await Promise.all([sub.close(), writer.close()]);
  });

  it('a deleted realm ends its subscriptions (the subscriber is told) and revokes its tokens', async () => {
    const doomed = await makeRealm(h.url, 'doomed');
    const admin = await connectWs(h.url, adminToken);
    const own = await connectTcp(h.server.tcpPort, doomed.read);
    const id = await subscribe(admin, {}, 'doomed');
    await subscribe(own);
    const del = await call(h.url, 'DELETE', '/admin/v1/realm/doomed', { token: adminToken });
    assert.equal(del.status, 200);
    const notice = await admin.next();
    assert.deepEqual(Object.keys(notice[0]), ['res', 'err', 'erc']);
    assert.equal(notice[0].erc, 404);
    assert.match(notice[0].err as string, new RegExp(id));
    assert.equal(admin.isClosed, false);
    await own.next();
    own.sendText('[{"typ":"sys","act":"pin","cid":"p"}]');
    assert.equal((await own.next())[0].erc, 401);
    await own.closed;
    // Recreated under the same id: the old subscription does not come back.
    const again = await makeRealm(h.url, 'doomed');
    await call(h.url, 'PUT', '/v2/realm/doomed/object/x', { token: again.write, body: { location: loc(1, 1) } });
    await assertQuiet(admin, 0);
    await admin.close();
  });
});

describe('v1 flow control', () => {
  it('a subscriber that does not read loses events (counted), then is told and closed; writers and others are not held up', async () => {
    const slowConsumerMs = 400;
    const h = await startHarness({ sendBufferBytes: 64 * 1024, slowConsumerMs });
    try {
      const realm = await makeRealm(h.url, 'flow');
      const slow = await connectTcp(h.server.tcpPort, realm.read);
      const fast = await connectWs(h.url, realm.read);
      await subscribe(slow);
      await subscribe(fast);
      slow.socket.pause();
      // Once the server drops events for it and slowConsumerMs has passed, the slow client reads
      // again, in time to see why it is being closed.
      const resumed = (async () => {
        while (h.server.v1Stats().droppedEvents === 0) await pause(10);
        await pause(slowConsumerMs + 200);
        slow.socket.resume();
      })();
      const writer = await connectTcp(h.server.tcpPort, realm.write);
      const label = 'x'.repeat(1000);
      const data = { note: 'y'.repeat(1000) };
      let sent = 0;
      const started = Date.now();
      for (let batch = 0; batch < 40; batch++) {
        const objects = Array.from({ length: 250 }, (_, i) => ({ id: `o${i}`, label, data, location: loc(batch * 0.01, i * 0.001) }));
        const [reply] = await writer.request([{ typ: 'obj', act: 'blk', cid: batch, dat: { objects } }], 10_000);
        assert.equal(reply.res, 'suc', JSON.stringify(reply));
        sent += objects.length;
      }
      const writeMs = Date.now() - started;
      await fast.waitForEvents(sent, 20_000);
      assert.equal(fast.events.length, sent, 'the reading subscriber got every event');
      await resumed;
      await slow.closed;
      assert.ok(slow.events.length < sent, 'the slow subscriber lost events');
      const notices = slow.log.filter((m: Json) => Array.isArray(m) && m[0]?.res === 'err' && m[0].erc === 503 && /dropped|fast enough/.test(m[0].err as string));
      assert.ok(notices.length > 0, 'the slow subscriber was told');
      assert.ok(writeMs < 15_000);
      await Promise.all([fast.close(), writer.close()]);
    } finally {
      await h.stop();
    }
  });
});
