/**
 * Level-based repair after a bus outage (issue #30, part 5): two API processes on one store and
 * a real nats-server. nats-server is killed, writes go on through A (creates, updates,
 * deletes, a new area), nats-server comes back on the same port. Then every subscription on B
 * (WebSocket, Hivekit form) holds exactly what the store holds, and the new area drives B's
 * geofencing.
 *
 * Which process reconnects first is decided, not left to chance: each process reaches
 * nats-server through its own TCP gate (support/tcp-gate.ts), and the one that must come back
 * last finds its gate shut until the other has reconnected. A first is the order that lost
 * pushes before repair existed: A flushes what it buffered while B is not subscribed yet.
 */
/* eslint-disable @typescript-eslint/no-unsafe-return -- the wire carries arbitrary JSON */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminToken, call } from '../support/harness.js';
import {
  applyAreaPushes,
  applyObjectPushes,
  assertSuc,
  connectWire,
  postActions,
  signToken,
  sleep,
  testSecret,
  uniqueId,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { mongoTestStore, type TestStore } from '../support/cluster.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { listening, spawnServer, type ServerProcess } from '../support/server-process.js';
import { startTcpGate, type TcpGate } from '../support/tcp-gate.js';

interface Node {
  name: 'A' | 'B';
  proc: ServerProcess;
  gate: TcpGate;
  httpUrl: string;
}

/** Circle subscriptions' centre and radius (metres). */
const centre = { lon: 10, lat: 50 };
const radius = 20_000;

/** Great-circle distance in metres (the same sphere as internal/geo). */
function metres(lon1: number, lat1: number, lon2: number, lat2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** What a client's view and the store must agree on, per object. */
function essence(record: Json): string {
  return JSON.stringify({ lab: record.lab ?? null, lon: record.loc?.lon ?? null, lat: record.loc?.lat ?? null, dat: record.dat ?? {} });
}

function essences(records: Map<string, Json>): Record<string, string> {
  return Object.fromEntries([...records].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, r]) => [id, essence(r)]));
}

function busSuite(storeName: string, openStore: () => TestStore): void {
  describe(`bus repair on ${storeName}: after nats-server comes back, B's subscribers converge on the store`, { timeout: 240_000 }, () => {
    let nats: NatsServer;
    let dir: string;
    let A: Node;
    let B: Node;
    let token: string;
    const store = openStore();
    const wires: HivekitWire[] = [];

    async function startNode(name: 'A' | 'B', storeUrl: string): Promise<Node> {
      const gate = await startTcpGate(nats.port);
      const proc = spawnServer(
        {
          LOCUS_STORE: storeUrl,
          LOCUS_BUS: `nats://127.0.0.1:${gate.port}`,
          LOCUS_ADMIN_TOKEN: adminToken,
          LOCUS_JWT_SECRET: testSecret,
          LOCUS_LOG_LEVEL: 'info',
          // The scale test writes thousands of objects with one token.
          LOCUS_RATE_LIMIT: '1000000',
          LOCUS_RATE_BURST: '1000000',
        },
        { killAfterMs: 600_000 },
      );
      const { httpUrl } = await listening(proc);
      return { name, proc, gate, httpUrl };
    }

    before(async () => {
      nats = await startNatsServer();
      dir = mkdtempSync(join(tmpdir(), 'locus-bus-repair-'));
      const storeUrl = store.url ?? `sqlite:${join(dir, 'shared.db')}`;
      A = await startNode('A', storeUrl);
      B = await startNode('B', storeUrl);
      token = await signToken({ sub: 'bus-repair' });
    });

    after(async () => {
      await Promise.all(wires.map((w) => w.close()));
      for (const node of [A, B]) {
        node?.proc.cleanup();
        await node?.gate.close();
      }
      await nats?.stop();
      rmSync(dir, { recursive: true, force: true });
      await store.cleanup();
    });

    /** How many log lines with this message a process has written. */
    const logged = (node: Node, msg: string): number => node.proc.logLines().filter((line) => line.msg === msg).length;

    async function untilLogged(node: Node, msg: string, count: number, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (logged(node, msg) < count) {
        if (Date.now() > deadline) assert.fail(`${node.name} did not log "${msg}" (${count} times) within ${timeoutMs} ms:\n${node.proc.stdout().slice(-4000)}`);
        await sleep(20);
      }
    }

    async function v1(node: Node, messages: Msg[]): Promise<Json[]> {
      const res = await postActions(node.httpUrl, token, messages);
      assert.equal(res.status, 200, res.text);
      for (const reply of res.json as Json[]) assertSuc(reply);
      return res.json as Json[];
    }

    /** Every object of the realm as the store holds it: the ids `obj lis` lists, each one's record as `obj rea` reads it (through A). */
    async function stored(realm: string): Promise<Map<string, Json>> {
      const [list] = await v1(A, [{ typ: 'obj', act: 'lis', rea: realm, dat: {} }]);
      const ids = Object.keys(list.dat as Record<string, Json>).sort();
      if (ids.length === 0) return new Map();
      const reads = await v1(A, ids.map((id) => ({ typ: 'obj', act: 'rea', id, rea: realm })));
      return new Map(ids.map((id, i) => [id, reads[i].dat]));
    }

    async function storedAreas(realm: string): Promise<string[]> {
      const [reply] = await v1(A, [{ typ: 'are', act: 'lis', rea: realm, dat: {} }]);
      return Object.keys(reply.dat as Record<string, Json>).sort();
    }

    function inCircle(records: Map<string, Json>): Map<string, Json> {
      return new Map([...records].filter(([, r]) => r.loc !== undefined && metres(centre.lon, centre.lat, r.loc.lon, r.loc.lat) <= radius));
    }

    const place = (realm: string, id: string, lon: number, lat: number, dat: Record<string, unknown> = {}): Msg => ({
      typ: 'obj',
      act: 'cre',
      id,
      rea: realm,
      loc: { lon, lat },
      dat,
    });
    const rectangle = (realm: string, id: string, west: number, south: number, east: number, north: number): Msg => ({
      typ: 'are',
      act: 'cre',
      id,
      rea: realm,
      lab: id,
      sty: 'rec',
      sha: { x1: west, y1: south, x2: east, y2: north },
    });

    const down = 'event bus disconnected from NATS; reconnecting';
    const resubscribed = 'event bus resubscribed after an outage; repairing from the store';
    const repaired = 'live subscriptions read again from the store after a bus outage';

    /**
     * Kills nats-server, runs `during`, restarts it; `first` reconnects, then the other (its gate
     * was shut). Resolves once the late one has its subscriptions back on the server.
     */
    async function outage(first: 'A' | 'B', during: () => Promise<void>): Promise<{ late: Node; reconnectMs: number }> {
      const [early, late] = first === 'A' ? [A, B] : [B, A];
      const downBefore = [logged(A, down), logged(B, down)];
      const upBefore = [logged(early, resubscribed), logged(late, resubscribed)];
      late.gate.shut();
      await nats.kill();
      await untilLogged(A, down, (downBefore[0] ?? 0) + 1, 10_000);
      await untilLogged(B, down, (downBefore[1] ?? 0) + 1, 10_000);
      await during();
      await nats.restart();
      await untilLogged(early, resubscribed, (upBefore[0] ?? 0) + 1, 15_000);
      // What the early one buffered has gone out by now (before its resubscription was confirmed).
      await sleep(300);
      late.gate.open();
      const opened = Date.now();
      await untilLogged(late, resubscribed, (upBefore[1] ?? 0) + 1, 15_000);
      return { late, reconnectMs: Date.now() - opened };
    }

    function scenario(first: 'A' | 'B'): () => Promise<void> {
      return async () => {
        const realm = uniqueId('repair');
        const created = await call(A.httpUrl, 'PUT', `/admin/v1/realm/${realm}`, { token: adminToken });
        assert.equal(created.status, 200, created.text);

        // Before: an area, objects to keep, update and delete, all inside the circle.
        await v1(A, [
          rectangle(realm, 'north', 9.9, 50.1, 10.1, 50.2),
          ...['keep', 'upd', 'del'].flatMap((kind, k) => [1, 2, 3].map((i) => place(realm, `${kind}-${i}`, 10 + k * 0.01, 50 + i * 0.01, { n: i }))),
        ]);
        // B writes too, so that its geofencing holds the realm's areas before the outage.
        await v1(B, [place(realm, 'walker', 10, 49.9)]);

        const b = await connectWire(B.httpUrl, token);
        wires.push(b);
        assertSuc(await b.request({ typ: 'sub', act: 'cre', id: 'all', rea: realm, dat: { typ: 'obj', sty: 'rea', exe: true } }));
        assertSuc(await b.request({ typ: 'sub', act: 'cre', id: 'near', rea: realm, dat: { typ: 'obj', sty: 'cir', sha: { cx: centre.lon, cy: centre.lat, r: radius }, exe: true } }));
        assertSuc(await b.request({ typ: 'sub', act: 'cre', id: 'areas', rea: realm, dat: { typ: 'are', sty: 'rea', exe: true } }));
        assertSuc(await b.request({ typ: 'sub', act: 'sub', rea: realm }));
        const views = (): { all: Map<string, Json>; near: Map<string, Json>; areas: string[] } => ({
          all: applyObjectPushes(b.pushesOf('all')),
          near: applyObjectPushes(b.pushesOf('near')),
          areas: [...applyAreaPushes(b.pushesOf('areas')).keys()].sort(),
        });
        const converged = async (): Promise<boolean> => {
          const [objects, areas] = [await stored(realm), await storedAreas(realm)];
          const view = views();
          return (
            JSON.stringify(essences(view.all)) === JSON.stringify(essences(objects)) &&
            JSON.stringify(essences(view.near)) === JSON.stringify(essences(inCircle(objects))) &&
            JSON.stringify(view.areas) === JSON.stringify(areas)
          );
        };
        const untilConverged = async (timeoutMs: number, what: string): Promise<number> => {
          const started = Date.now();
          while (!(await converged())) {
            if (Date.now() - started > timeoutMs) {
              const objects = await stored(realm);
              const view = views();
              assert.deepEqual(
                { all: essences(view.all), near: essences(view.near), areas: view.areas },
                { all: essences(objects), near: essences(inCircle(objects)), areas: await storedAreas(realm) },
                `${what}: B's subscribers do not hold what the store holds after ${timeoutMs} ms`,
              );
            }
            await sleep(25);
          }
          return Date.now() - started;
        };
        await untilConverged(5000, 'before the outage');

        // Writes through A while nats-server is away: creates, updates (one leaves the circle), deletes, a new area.
        const { late, reconnectMs } = await outage(first, async () => {
          await v1(A, [
          ...[1, 2, 3].map((i) => place(realm, `new-${i}`, 10.05, 50 + i * 0.01, { n: i, born: 'outage' })),
          { typ: 'obj', act: 'upd', id: 'upd-1', rea: realm, loc: { lon: 11, lat: 50 }, dat: { n: 10 } },
          { typ: 'obj', act: 'upd', id: 'upd-2', rea: realm, dat: { n: 20, note: 'changed' } },
          { typ: 'obj', act: 'upd', id: 'upd-3', rea: realm, loc: { lon: 10.02, lat: 50.05 } },
          ...[1, 2, 3].map((i) => ({ typ: 'obj', act: 'del', id: `del-${i}`, rea: realm })),
          rectangle(realm, 'fresh', 9.95, 49.85, 10.05, 49.88),
          ]);
        });
        const convergedMs = await untilConverged(10_000, `${first} reconnecting first`);
        process.stderr.write(`bus repair (${storeName}, ${first} first): ${late.name} reconnected ${reconnectMs} ms after its gate opened; B converged ${convergedMs} ms after that\n`);

        // The new area drives B's geofencing: an object moved into it through B enters it.
        const events = (): Json[] => b.unsolicited.map((r) => r.el).filter((el) => el.typ === 'evt');
        await v1(B, [{ typ: 'obj', act: 'upd', id: 'walker', rea: realm, loc: { lon: 10, lat: 49.86 } }]);
        await b.until(() => events().some((e) => e.act === 'ent' && e.dat?.object === 'walker' && e.dat?.area === 'fresh'), 5000, 'walker entering the new area (geofenced by B)');
        await untilConverged(5000, 'after the walker entered the new area');
        await b.close();
      };
    }

    it('A reconnects first and flushes what it buffered before B is back: B repairs from the store', scenario('A'));
    it('B reconnects first and receives what A flushes later: B holds the store too', scenario('B'));

    /**
     * Thousands of writes through A during the outage, three connections of five subscriptions
     * each on B. `stream`: ingest also goes on throughout, about 500 moves a second through A,
     * from before the outage until a second after B is back (then no figure is taken: pushes of
     * the stream and of the repair mix).
     */
    async function atScale(stream: boolean): Promise<void> {
      const realm = uniqueId('repair-scale');
      const created = await call(A.httpUrl, 'PUT', `/admin/v1/realm/${realm}`, { token: adminToken });
      assert.equal(created.status, 200, created.text);
      const side = 60;
      const at = (i: number, shift = 0): { lon: number; lat: number } => ({ lon: 10 + ((i % side) + shift) * 0.002, lat: 50 + Math.floor(i / side) * 0.002 });
      const writeAll = async (messages: Msg[]): Promise<void> => {
        for (let k = 0; k < messages.length; k += 1000) await v1(A, messages.slice(k, k + 1000));
      };
      const initial = 3000;
      await writeAll(Array.from({ length: initial }, (_, i) => ({ typ: 'obj', act: 'cre', id: `o-${i}`, rea: realm, loc: at(i), dat: { n: 0 } })));
      // Five subscriptions per connection: the whole realm, three circles, the areas.
      const circles = [0, 1, 2].map((c) => ({ cx: 10 + 0.02 + c * 0.03, cy: 50 + 0.02 + c * 0.03, r: 2500 }));
      const connections: HivekitWire[] = [];
      for (let w = 0; w < 3; w++) {
        const wire = await connectWire(B.httpUrl, token);
        wires.push(wire);
        connections.push(wire);
        assertSuc(await wire.request({ typ: 'sub', act: 'cre', id: 'all', rea: realm, dat: { typ: 'obj', sty: 'rea', exe: true } }, 10_000));
        for (const [c, sha] of circles.entries()) assertSuc(await wire.request({ typ: 'sub', act: 'cre', id: `c${c}`, rea: realm, dat: { typ: 'obj', sty: 'cir', sha, exe: true } }, 10_000));
        assertSuc(await wire.request({ typ: 'sub', act: 'cre', id: 'areas', rea: realm, dat: { typ: 'are', sty: 'rea', exe: true } }));
      }
      /** id → data `n` per subscription, as the store answers (`obj lis` with the same shape) and as each client holds it. */
      const storeView = async (): Promise<Record<string, string>> => {
        const out: Record<string, string> = {};
        for (const [sub, sha] of [['all', undefined], ...circles.map((c, i) => [`c${i}`, c] as const)] as const) {
          const [reply] = await v1(A, [{ typ: 'obj', act: 'lis', rea: realm, dat: { fie: ['n'], ...(sha === undefined ? {} : { sha }) } }]);
          out[sub] = JSON.stringify(Object.entries(reply.dat as Record<string, Json>).map(([id, e]) => [id, e.dat?.n]).sort());
        }
        out.areas = JSON.stringify(await storedAreas(realm));
        return out;
      };
      const clientView = (wire: HivekitWire): Record<string, string> => {
        const out: Record<string, string> = {};
        for (const sub of ['all', 'c0', 'c1', 'c2']) {
          out[sub] = JSON.stringify([...applyObjectPushes(wire.pushesOf(sub))].map(([id, r]) => [id, r.dat?.n]).sort());
        }
        out.areas = JSON.stringify([...applyAreaPushes(wire.pushesOf('areas')).keys()].sort());
        return out;
      };
      const untilSame = async (timeoutMs: number, what: string): Promise<number> => {
        const started = Date.now();
        for (;;) {
          const expected = await storeView();
          if (connections.every((wire) => JSON.stringify(clientView(wire)) === JSON.stringify(expected))) return Date.now() - started;
          if (Date.now() - started > timeoutMs) assert.deepEqual(connections.map(clientView), connections.map(() => expected), `${what}: B's subscribers differ from the store`);
          await sleep(50);
        }
      };
      await untilSame(20_000, 'before the outage');

      // Ingest goes on throughout, as in the field: about 500 moves a second through A, from
      // before the outage until a second after B is back.
      let writing = stream;
      let streamed = 0;
      const streaming = (async (): Promise<void> => {
        while (writing) {
          const batch = Array.from({ length: 10 }, (_, k) => {
            const i = ((streamed + k) * 7) % initial;
            return { typ: 'obj', act: 'upd', id: `o-${i - (i % 2)}`, rea: realm, loc: at(i - (i % 2), (streamed % 5) + 1), dat: { n: 100 + streamed + k } };
          });
          streamed += batch.length;
          await v1(A, batch);
          await sleep(20);
        }
      })();
      const repairsBefore = logged(B, repaired);
      const { reconnectMs } = await outage('A', async () => {
        await writeAll([
          ...Array.from({ length: 1000 }, (_, i) => ({ typ: 'obj', act: 'cre', id: `new-${i}`, rea: realm, loc: at(i, 7), dat: { n: 1 } })),
          ...Array.from({ length: 1500 }, (_, i) => ({ typ: 'obj', act: 'upd', id: `o-${i * 2}`, rea: realm, loc: at(i * 2, 3), dat: { n: 2 } })),
          ...Array.from({ length: 1000 }, (_, i) => ({ typ: 'obj', act: 'del', id: `o-${i * 2 + 1}`, rea: realm })),
          rectangle(realm, 'fresh', 9.95, 49.85, 10.05, 49.88),
        ]);
      });
      if (stream) await sleep(1000);
      writing = false;
      await streaming;
      const convergedMs = await untilSame(20_000, 'after the outage');
      await untilLogged(B, repaired, repairsBefore + 1, 5000);
      const line = B.proc.logLines().filter((l) => l.msg === repaired).at(-1);
      if (stream) {
        process.stderr.write(`bus repair with ingest throughout (${storeName}): ${streamed} moves streamed; B re-read ${String(line?.subscriptions)} subscriptions in ${String(line?.ms)} ms; every client held the store ${convergedMs} ms after the stream stopped\n`);
      } else {
        // Client side: the last push that reached a client after B's resubscription (the same host's clock).
        const since = Number(B.proc.logLines().filter((l) => l.msg === resubscribed).at(-1)?.time);
        const lastPush = Math.max(...connections.flatMap((wire) => wire.pushes.map((r) => r.at)));
        process.stderr.write(
          `bus repair at scale (${storeName}): ${initial} objects, 3,500 writes during the outage; B reconnected ${reconnectMs} ms after its gate opened; ` +
            `B re-read ${String(line?.subscriptions)} subscriptions in ${String(line?.ms)} ms; the last repair push reached its client ${lastPush - since} ms after B's resubscription; ` +
            `the test saw every client hold the store ${convergedMs} ms after it (its own polling included)\n`,
        );
      }
      await Promise.all(connections.map((wire) => wire.close()));
    }

    it('at scale: thousands of writes through A during the outage, three connections of five subscriptions each on B converge', () => atScale(false));
    it('with ingest throughout (about 500 moves a second through A, during the outage, the reconnects and the repair), B converges once it stops', () => atScale(true));
  });
}

busSuite('SQLite (one file, two processes)', () => ({ url: null, cleanup: () => Promise.resolve() }));
const mongoUri = process.env.LOCUS_TEST_MONGODB_URI;
if (mongoUri !== undefined && mongoUri !== '') busSuite('MongoDB', () => mongoTestStore(mongoUri));
