/**
 * Cluster mode end to end (issue #21, "Done when"): a real nats-server, three real API
 * processes sharing one store, real HAProxy in front. Tests that need a given process talk to
 * it on its own ports (A = api-1, B = api-2, C = api-3); those about the balancer go through
 * HAProxy. One cluster for the whole file; the tests run in order and the later ones kill and
 * restart processes.
 */
/* eslint-disable @typescript-eslint/no-unsafe-return -- the wire carries arbitrary JSON */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ApiNode } from '../../internal/cluster/cluster.js';
import { call } from '../support/harness.js';
import {
  assertSuc,
  connectWire,
  openTcp,
  postActions,
  signToken,
  sleep,
  uniqueId,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { clusterOutput, eventually, mongoTestStore, startTestCluster, type Cluster, type TestStore } from '../support/cluster.js';

/**
 * The suite over one store: the shared SQLite file always; a MongoDB database of its own
 * (dropped afterwards) as well where LOCUS_TEST_MONGODB_URI is set.
 */
function clusterSuite(storeName: string, openStore: () => TestStore): void {
  describe(`cluster on ${storeName}: three API processes behind HAProxy, coordinating through NATS`, { timeout: 120_000 }, () => {
    let cluster: Cluster;
    let A: ApiNode;
    let B: ApiNode;
    let C: ApiNode;
    let token: string;
    let realm: string;
    const wires: HivekitWire[] = [];

    /** A signed-in WebSocket to one process (closed after the file). */
    async function wsTo(node: { httpUrl: string }, as = token): Promise<HivekitWire> {
      const wire = await connectWire(node.httpUrl, as);
      wires.push(wire);
      return wire;
    }

    async function v1(node: { httpUrl: string }, message: Msg): Promise<Json> {
      const res = await postActions(node.httpUrl, token, [message]);
      assert.equal(res.status, 200, res.text);
      return res.json?.[0];
    }

    /** Rectangle area (x longitude, y latitude). */
    function area(id: string, west: number, south: number, east: number, north: number): Msg {
      return { typ: 'are', act: 'cre', id, rea: realm, lab: id, sty: 'rec', sha: { x1: west, y1: south, x2: east, y2: north } };
    }

    function place(id: string, lon: number, lat: number): Msg {
      return { typ: 'obj', act: 'cre', id, rea: realm, loc: { lon, lat } };
    }

    /** The `evt` elements a connection received (its unsolicited, cid-less messages of typ evt). */
    function events(wire: HivekitWire): Json[] {
      return wire.unsolicited.map((r) => r.el).filter((el) => el.typ === 'evt');
    }

    async function until(wire: HivekitWire, what: string, timeoutMs: number, found: () => boolean): Promise<void> {
      await wire.until(found, timeoutMs, what);
    }

    const store = openStore();
    before(async () => {
      cluster = await startTestCluster(store.url === null ? {} : { store: store.url });
      [A, B, C] = cluster.apis as [ApiNode, ApiNode, ApiNode];
      token = await signToken({ sub: 'cluster-test' });
      realm = uniqueId('cluster');
      // Through the balancer: any process may create it.
      const created = await call(cluster.httpUrl, 'PUT', `/admin/v1/realm/${realm}`, { token: cluster.adminToken });
      assert.equal(created.status, 200, created.text);
    });

    after(async () => {
      await Promise.all(wires.map((w) => w.close()));
      await cluster?.stop();
      await store.cleanup();
    });

    /** Runs a test body and, when it fails, adds the processes' last output to the error. */
    function withOutput(body: () => Promise<void>): () => Promise<void> {
      return async () => {
        try {
          await body();
        } catch (err) {
          if (err instanceof Error) err.message += `\n\nprocess output:\n${clusterOutput(cluster)}`;
          throw err;
        }
      };
    }

    it(
      'a write through A reaches an object subscription and a geofence subscription on C (and a WebSocket through HAProxy)',
      withOutput(async () => {
        assertSuc(await v1(A, area('depot', 13.3, 52.4, 13.45, 52.55)));
        const id = uniqueId('tram');
        assertSuc(await v1(A, place(id, 13.6, 52.5))); // outside the depot
        const c = await wsTo(C);
        const sid = uniqueId('objects');
        assertSuc(await c.request({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea' } }));
        assertSuc(await c.request({ typ: 'sub', act: 'sub', rea: realm, dat: { objects: [id] } }));
        const pushes = c.watch(sid);
        // And one through the balancer (a WebSocket upgraded by HAProxy), wherever it lands.
        const balanced = await wsTo({ httpUrl: cluster.httpUrl });
        assertSuc(await balanced.request({ typ: 'sub', act: 'sub', rea: realm, dat: { objects: [id] } }));

        const a = await wsTo(A);
        assertSuc(await a.request(place(id, 13.4, 52.5))); // into the depot

        const [push] = await pushes.atLeast(1, 2000);
        assert.equal(push.uty, 'dta');
        assert.equal(push.obj.upd?.[id]?.loc?.lon, 13.4, JSON.stringify(push));
        await until(c, 'the enter event', 2000, () => events(c).some((e) => e.act === 'ent'));
        const got = events(c);
        assert.deepEqual(
          got.map((e) => e.act),
          ['loc', 'ent'],
          JSON.stringify(got),
        );
        assert.equal(got[0].dat.id, id);
        assert.equal(got[0].dat.location.longitude, 13.4);
        assert.equal(got[1].dat.object, id);
        assert.equal(got[1].dat.area, 'depot');
        assert.equal(got[1].rea, realm);
        await until(balanced, 'the enter event through the balancer', 2000, () => events(balanced).some((e) => e.act === 'ent'));
        assert.deepEqual(events(balanced), got);
      }),
    );

    it(
      'an area created through B drives geofencing on A within one second',
      withOutput(async () => {
        const id = uniqueId('bus');
        const a = await wsTo(A);
        assertSuc(await a.request({ typ: 'sub', act: 'sub', rea: realm, dat: { objects: [id] } }));
        // A has the realm's areas loaded (the first test wrote through it) and now a location for the object.
        assertSuc(await a.request(place(id, 10.05, 50.05)));
        await until(a, 'the loc event', 2000, () => events(a).some((e) => e.dat?.id === id));
        assert.deepEqual(events(a).filter((e) => e.act !== 'loc'), [], 'no area holds the object yet');

        const areaId = uniqueId('yard');
        assertSuc(await v1(B, area(areaId, 10.1, 50.1, 10.2, 50.2)));
        const createdAt = Date.now();
        await sleep(createdAt + 1000 - Date.now());
        assertSuc(await a.request(place(id, 10.15, 50.15))); // into the new area
        await until(a, `the enter event of ${areaId}`, 2000, () => events(a).some((e) => e.act === 'ent'));
        const enters = events(a).filter((e) => e.act === 'ent');
        assert.deepEqual(
          enters.map((e) => e.dat),
          [{ object: id, area: areaId, time: enters[0].dat.time }],
        );
      }),
    );

    it(
      'a token revoked through A is refused by C within one second',
      withOutput(async () => {
        const issued = await call(A.httpUrl, 'POST', `/admin/v1/realm/${realm}/token`, { token: cluster.adminToken, body: { scope: 'write' } });
        assert.equal(issued.status, 200, issued.text);
        const opaque = String(issued.json.token);
        // C has seen the token (and may keep it in a cache) before the revocation.
        assert.equal((await call(C.httpUrl, 'GET', `/v2/realm/${realm}/object`, { token: opaque })).status, 200);
        const ws = await connectWire(C.httpUrl, opaque);
        wires.push(ws);
        assertSuc(await ws.request({ typ: 'sys', act: 'hbt' }));

        const revoked = await call(A.httpUrl, 'DELETE', `/admin/v1/realm/${realm}/token/${String(issued.json.id)}`, { token: cluster.adminToken });
        assert.equal(revoked.status, 200, revoked.text);
        const revokedAt = Date.now();
        await sleep(revokedAt + 1000 - Date.now());
        const refused = await call(C.httpUrl, 'GET', `/v2/realm/${realm}/object`, { token: opaque });
        assert.equal(refused.status, 401, refused.text);
        const v1Refused = await postActions(C.httpUrl, opaque, [{ typ: 'obj', act: 'lis', rea: realm }]);
        assert.equal(v1Refused.status, 401, v1Refused.text);
        // An open connection re-checks its token at every message: refused and closed.
        ws.sendRaw([{ typ: 'sys', act: 'hbt', cid: 'after-revoke' }]);
        await ws.closed;
        const last = ws.unsolicited.at(-1)?.el;
        assert.equal(last?.erc, 401, JSON.stringify(ws.unsolicited.map((r) => r.el)));
      }),
    );

    it(
      'a presence claim on B shows as con on C, and ends when B is killed (its lease expires)',
      withOutput(async () => {
        const car = `car/${uniqueId('x')}`;
        assertSuc(await v1(A, place(car, 13.4, 52.5)));
        const cst = async (): Promise<string> => String((await v1(C, { typ: 'obj', act: 'rea', id: car, rea: realm })).dat?.cst);
        assert.equal(await cst(), 'dis');
        const provider = await signToken({ sub: 'dataProviderClient' }, { claims: { dpv: { [realm]: ['car/*'] } } });
        await wsTo(B, provider);
        await eventually(cst, (s) => s === 'con', 2000, `${car} con on C`);

        const killedAt = Date.now();
        await B.kill('SIGKILL');
        const seen = await eventually(cst, (s) => s === 'dis', 30_000, `${car} dis on C after B died`);
        assert.equal(seen, 'dis');
        // Bounded: the lease, not a process that stays `con` forever; report how long it took.
        process.stderr.write(`presence of a killed process ended after ${Date.now() - killedAt} ms\n`);
        await B.start();
        await cluster.waitForServer(B.name, 'UP');
      }),
    );

    it(
      'killing and restarting nats-server mid-stream loses no acknowledged write, and events resume',
      withOutput(async () => {
        const prefix = uniqueId('stream');
        const subscriber = await wsTo(B);
        assertSuc(await subscriber.request({ typ: 'sub', act: 'sub', rea: realm }));
        const writer = await wsTo(A);
        const acked: { id: string; lon: number }[] = [];
        let failed = 0;
        let n = 0;
        let natsDown = false;
        let ackedWhileDown = 0;
        const write = async (): Promise<void> => {
          const id = `${prefix}/${n}`;
          const lon = 10 + (n % 1000) / 1000;
          n++;
          const reply = await writer.request(place(id, lon, 50), 5000).catch((err: unknown) => ({ res: 'err', err: String(err) }));
          if (reply.res === 'suc') {
            acked.push({ id, lon });
            if (natsDown) ackedWhileDown++;
          } else failed++;
        };
        const stream = async (ms: number): Promise<void> => {
          const until = Date.now() + ms;
          while (Date.now() < until) {
            await write();
            await sleep(5);
          }
        };

        await stream(500);
        await until(subscriber, 'events before the outage', 2000, () => events(subscriber).some((e) => String(e.dat?.id).startsWith(prefix)));
        await cluster.nats.kill('SIGKILL');
        natsDown = true;
        await stream(1500);
        natsDown = false;
        await cluster.nats.start();
        await stream(500);

        // Events resume: a write made now reaches the subscriber on B (the processes reconnect with backoff).
        const resumed = `${prefix}/after`;
        await eventually(
          async () => {
            assertSuc(await writer.request(place(resumed, 11, 50)));
            await sleep(200);
            return events(subscriber).some((e) => e.dat?.id === resumed);
          },
          (seen) => seen,
          15_000,
          'events to resume after nats-server came back',
        );

        assert.ok(acked.length > 0);
        assert.equal(failed, 0, `${failed} writes failed while NATS was away (REST writes and ingest must keep working)`);
        assert.ok(ackedWhileDown > 0, 'writes were acknowledged while nats-server was down');
        // Every acknowledged write is readable, from another process.
        const reads = await postActions(
          C.httpUrl,
          token,
          acked.map((w) => ({ typ: 'obj', act: 'rea', id: w.id, rea: realm })),
        );
        assert.equal(reads.status, 200, reads.text.slice(0, 500));
        const missing = acked.filter((w, i) => reads.json[i]?.res !== 'suc' || reads.json[i].dat.loc.lon !== w.lon);
        assert.deepEqual(missing, [], `${missing.length} of ${acked.length} acknowledged writes are not readable`);
      }),
    );

    it(
      'killing one API process leaves the others serving, and TCP devices reconnecting through the balancer land on a live one',
      withOutput(async () => {
        const connections = async (node: ApiNode): Promise<number> => {
          const res = await call(node.httpUrl, 'GET', '/health-check');
          return Number(res.json.connections);
        };
        const before = await Promise.all(cluster.apis.map(connections));
        const devices: HivekitWire[] = [];
        for (let i = 0; i < 6; i++) {
          const device = await openTcp(cluster.tcpPort);
          await device.signIn(token);
          devices.push(device);
        }
        const spread = (await Promise.all(cluster.apis.map(connections))).map((n, i) => n - (before[i] ?? 0));
        assert.ok(spread[2]! > 0, `least-connections spreads the devices over every process: ${JSON.stringify(spread)}`);

        await C.kill('SIGKILL');
        // The others serve at once, through the balancer (a refused connection is sent elsewhere).
        for (let i = 0; i < 10; i++) {
          const res = await call(cluster.httpUrl, 'GET', `/v2/realm/${realm}/object?limit=1`, { token });
          assert.equal(res.status, 200, res.text);
        }
        // The devices that were on C see their connection end; each one that did reconnects.
        await sleep(200);
        const dropped = devices.filter((d) => d.isClosed);
        assert.equal(dropped.length, spread[2], 'exactly the devices on the killed process lost their connection');
        const liveBefore = (await Promise.all([A, B].map(connections))).reduce((x, y) => x + y, 0);
        for (let i = 0; i < dropped.length; i++) {
          const device = await openTcp(cluster.tcpPort);
          await device.signIn(token);
          assertSuc(await device.request(place(uniqueId('device'), 13.4, 52.5)));
          devices.push(device);
        }
        const liveAfter = (await Promise.all([A, B].map(connections))).reduce((x, y) => x + y, 0);
        assert.equal(liveAfter - liveBefore, dropped.length, 'every reconnected device landed on A or B');
        await cluster.waitForServer(C.name, 'DOWN');
        await Promise.all(devices.map((d) => d.close()));
      }),
    );
  });
}

clusterSuite('one SQLite file', () => ({ url: null, cleanup: () => Promise.resolve() }));
const mongoUri = process.env.LOCUS_TEST_MONGODB_URI;
if (mongoUri !== undefined && mongoUri !== '') clusterSuite('MongoDB', () => mongoTestStore(mongoUri));
