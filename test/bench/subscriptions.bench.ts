/**
 * `npm run bench`: Hivekit subscriptions (service/live) under load, in this process: the real
 * SQLite store (file in a temp dir), ObjectService, geofence engine, local bus and
 * LiveSubscriptions, with 100 in-memory connections that time every push (the layer right
 * above the socket: what a v1 session would write). Socket transport is not in the figure.
 *
 * 1,000 subscriptions on 100 connections (10 each): circles of 300–3,000 m, rectangles,
 * polygons, some with attribute conditions, whole-realm subscriptions with a narrow condition,
 * and target subscriptions (2 km around a moving object). 10,000 objects in a 1° × 0.8° box
 * move at random; 10,000 updates/s are written as bulk writes of 100 every 10 ms. The send
 * time travels as the fix's altitude; every `cre`/`upd` record pushed is timed when the
 * engine hands its frame to the connection. Target: p99 ≤ 50 ms beyond the push cycle
 * (20 ms). The first second is not counted.
 *
 * Also: the ingest cost of the write path's listeners (change records and crossings onto the
 * bus, no subscriber): objectsChanged of 1,000 changes, with and without the realm being
 * listened to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../../internal/auth/principal.js';
import { defaultRealmSettings } from '../../internal/domain/realm-settings.js';
import type { TrackedObject } from '../../internal/domain/types.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { GeofenceEngine } from '../../internal/geofence/geofence-engine.js';
import { ChangePublisher } from '../../internal/service/change-publisher.js';
import { ChangeStream } from '../../internal/service/changes.js';
import { defaultCycleMs, LiveSubscriptions, type RealmRef } from '../../internal/service/live/live-subscriptions.js';
import { ObjectService } from '../../internal/service/objects.js';
import { openStore } from '../../internal/store/open-store.js';
import type { Store } from '../../internal/store/port.js';
import type { SubscriptionUpdate } from '../../internal/service/live/push-port.js';
import { subscriptionMessages } from '../../internal/transport/actions/subscription-pushes.js';
import type { V1Connection } from '../../internal/transport/actions/v1-handler.js';
import { paced } from '../support/bench-clock.js';
import { mulberry32 } from '../support/bench-random.js';
import { moveOne, objectData, startPositions, subscriptionOptions, timeRecords, type PushedObjects } from '../support/bench-live-workload.js';
import { percentile } from '../support/bench-stats.js';
import { createSubscription } from '../../internal/transport/actions/subscription-options.js';

const objectCount = 10_000;
const connections = 100;
const perConnection = 10;
const rate = 10_000;
const batch = 100;
const warmupMs = 1000;
/** LOCUS_BENCH_LIVE_MS shortens the measured run (for profiling the engine part). */
const measureMs = Number(process.env.LOCUS_BENCH_LIVE_MS ?? 5000);

const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};
const now = (): number => performance.now();

const principal: Principal = { tokenId: 'bench', kind: 'jwt', tenant: 'default', realm: null, scope: 'admin' };

class TimingConnection implements V1Connection {
  constructor(
    readonly id: string,
    private readonly onPush: (messages: readonly object[]) => void,
  ) {}
  readonly principal = principal;
  push(messages: readonly object[]): void {
    this.onPush(messages);
  }
  /** As the v1 session does: the updates' v1 messages, one push. */
  pushSubscriptions(updates: readonly SubscriptionUpdate[]): void {
    this.push(subscriptionMessages(updates));
  }
  onClose(): void {
    // never closes during the bench
  }
}

/** Subscription options number `k` (the mix; a target subscription does not match its own object). */
function optionsOf(k: number, rnd: () => number): Record<string, unknown> {
  const options = subscriptionOptions(k, rnd, objectCount);
  return options.sty === 'tar' ? { ...options, atr: [`$id!="obj-${k}"`] } : options;
}

interface Result {
  samples: number[];
  updates: number;
  pushes: number;
  frames: number;
  elu: number;
  /** The engine alone: µs of this process per object change record delivered (no store writes). */
  engineUs: number;
}

async function run(): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'locus-bench-live-'));
  const store = await openStore(`sqlite:${join(dir, 'locus.db')}`);
  const bus = new LocalEventBus((err) => {
    throw err;
  });
  try {
    const { realm } = await store.realms.put('bench', { ...defaultRealmSettings }, new Date().toISOString());
    const objects = new ObjectService(store, Date.now, { maxBulk: 10_000, maxPage: 10_000, maxFilterConditions: 100, maxVertices: 1000, maxFutureSkewS: 300 }, writePath(store.areas, bus));
    const live = new LiveSubscriptions({ bus, objects: store.objects, areas: store.areas, tasks: store.tasks, realms: store.realms }, { maxVertices: 1000, maxConditions: 100 });
    const rnd = mulberry32(7);
    const positions = startPositions(objectCount, rnd);
    const dataOf = (i: number): Record<string, string | number> => objectData(i, rnd);
    for (let start = 0; start < objectCount; start += 1000) {
      await objects.bulk(realm, {
        objects: positions.slice(start, start + 1000).map(([longitude, latitude], j) => ({ id: `obj-${start + j}`, location: { longitude, latitude, altitude: 0 }, data: dataOf(start + j) })),
      });
    }
    let measuredFrom = Number.POSITIVE_INFINITY;
    const samples: number[] = [];
    let pushes = 0;
    let frames = 0;
    const onPush = (messages: readonly object[]): void => {
      const at = now();
      frames++;
      for (const message of messages) {
        pushes++;
        // A target subscription's set changes when its target moves: records that enter
        // then were written earlier, so they time nothing; those pushes are counted only.
        if ((message as { id: string }).id.startsWith('tar-')) continue;
        const obj = (message as { obj?: PushedObjects }).obj;
        if (obj !== undefined) timeRecords(obj, at, measuredFrom, samples);
      }
    };
    const ref: RealmRef = { key: realm.id, name: realm.id, tenant: 'default', label: null, data: {} };
    const subRnd = mulberry32(11);
    log(`creating ${connections * perConnection} subscriptions on ${connections} connections`);
    const createdAt = now();
    for (let c = 0; c < (process.env.LOCUS_BENCH_NO_SUBS === '1' ? 0 : connections); c++) {
      const conn = new TimingConnection(`c${c}`, onPush);
      for (let s = 0; s < perConnection; s++) {
        const k = c * perConnection + s;
        const options = optionsOf(k, subRnd);
        await createSubscription(live, conn, `${options.sty === 'tar' ? 'tar' : 'sub'}-${k}`, ref, options);
      }
    }
    log(`created in ${Math.round(now() - createdAt)} ms`);
    const interval = (1000 * batch) / rate;
    const started = now();
    measuredFrom = started + warmupMs;
    let sent = 0;
    const move = mulberry32(99);
    const elu0 = performance.eventLoopUtilization();
    log(`writing ${rate} updates/s for ${(warmupMs + measureMs) / 1000} s (the first ${warmupMs / 1000} s not counted)`);
    await paced(now, started, interval, measuredFrom + measureMs, async (_k, sentAt) => {
      const entries = [];
      for (let i = 0; i < batch; i++) {
        const n = moveOne(positions, move);
        const p = positions[n] as [number, number];
        entries.push({ id: `obj-${n}`, location: { longitude: p[0], latitude: p[1], altitude: sentAt } });
      }
      await objects.bulk(realm, { objects: entries });
      if (sentAt >= measuredFrom) sent += batch;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const elu = performance.eventLoopUtilization(elu0).utilization;
    // The engine alone: the same moves as change records published straight on the bus, as
    // fast as they are taken (batches of 1,000, one bus turn each); pushes still go out.
    measuredFrom = Number.POSITIVE_INFINITY;
    const time = new Date().toISOString();
    const engineUpdates = 100_000;
    // The events are made first, so that only the engine's work is timed.
    const batches = [];
    const last = new Map<string, TrackedObject>();
    for (let k = 0; k < engineUpdates / 1000; k++) {
      const events = [];
      for (let i = 0; i < 1000; i++) {
        const n = moveOne(positions, move);
        const p = positions[n] as [number, number];
        const object = { id: `obj-${n}`, label: null, location: { longitude: p[0], latitude: p[1], altitude: 0, time }, data: dataOf(n), seen: time };
        const change = { realm: realm.id, id: object.id, old: last.get(object.id) ?? null, new: object, history: [object.location], time };
        last.set(object.id, object);
        events.push({ kind: 'object' as const, realm: realm.id, change });
      }
      batches.push(events);
    }
    const cpu0 = process.cpuUsage();
    for (const events of batches) {
      bus.publish(realm.id, events);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cpu = process.cpuUsage(cpu0);
    const engineUs = (cpu.user + cpu.system) / engineUpdates;
    return { samples: samples.sort((a, b) => a - b), updates: sent, pushes, frames, elu, engineUs };
  } finally {
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The write path's listeners as the services register them: the change records, then the crossings. */
function writePath(areas: Pick<Store['areas'], 'list'>, bus: LocalEventBus): ChangeStream {
  const changes = new ChangeStream((err) => {
    throw err;
  });
  changes.add(new ChangePublisher(bus));
  changes.add(new GeofenceEngine(areas, bus));
  return changes;
}

/** objectsChanged of 1,000 moves: µs per change, with the realm listened to or not. */
async function ingest(): Promise<{ quiet: number; listened: number }> {
  const bus = new LocalEventBus();
  const engine = writePath({ list: () => Promise.resolve({ items: [], next: null }) }, bus);
  const time = new Date().toISOString();
  const changes = Array.from({ length: 1000 }, (_, i) => ({
    realm: 'r',
    id: `o${i}`,
    old: { id: `o${i}`, label: null, location: { longitude: 1, latitude: 1, time }, data: {}, seen: time },
    new: { id: `o${i}`, label: null, location: { longitude: 1 + i * 1e-6, latitude: 1, time }, data: {}, seen: time },
    history: [],
    time,
  }));
  // The first change loads the realm's (no) areas.
  engine.objectsChanged('r', []);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const measure = async (): Promise<number> => {
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const t0 = now();
      for (let i = 0; i < 200; i++) engine.objectsChanged('r', changes);
      best = Math.min(best, ((now() - t0) * 1000) / (200 * changes.length));
      // Lets the bus deliver (and drop) what was queued.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return best;
  };
  const quiet = await measure();
  const sub = bus.subscribe('r', () => undefined);
  const listened = await measure();
  sub.unsubscribe();
  return { quiet, listened };
}

async function main(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const costs = await ingest();
  const result = await run();
  const { samples } = result;
  const p50 = percentile(samples, 50);
  const p99 = percentile(samples, 99);
  const max = samples.at(-1) ?? Number.NaN;
  const beyond = p99 - defaultCycleMs;
  const lines = [
    '## Hivekit subscriptions (service/live, in process)',
    '',
    `${connections * perConnection} subscriptions on ${connections} connections (circles, rectangles, polygons, attribute conditions, whole-realm with a condition, targets), ` +
      `${objectCount.toLocaleString('en-US')} objects moving at ${rate.toLocaleString('en-US')} updates/s (bulk writes of ${batch} every ${(1000 * batch) / rate} ms) into the real SQLite store; ` +
      `latency from the write to the frame handed to the connection (push cycle ${defaultCycleMs} ms), the socket write not included.`,
    '',
    '| Measure | Value | Target |',
    '|---|---|---|',
    `| updates written (measured ${measureMs / 1000} s) | ${result.updates.toLocaleString('en-US')} | |`,
    `| records pushed and timed (cre/upd) | ${samples.length.toLocaleString('en-US')} | |`,
    `| push messages / frames | ${result.pushes.toLocaleString('en-US')} / ${result.frames.toLocaleString('en-US')} | |`,
    `| latency p50 | ${p50.toFixed(1)} ms | |`,
    `| latency p99 | ${p99.toFixed(1)} ms | |`,
    `| p99 beyond the ${defaultCycleMs} ms cycle | ${beyond.toFixed(1)} ms | ≤ 50 ms ${beyond <= 50 ? '(met)' : '(NOT met)'} |`,
    `| latency max | ${max.toFixed(1)} ms | |`,
    `| event loop utilisation (writes + engine) | ${(result.elu * 100).toFixed(0)}% | |`,
    `| engine alone, CPU per update (change records on the bus, pushes included) | ${result.engineUs.toFixed(1)} µs | |`,
    `| write path's listeners per change, nobody listening (change records and crossings built and dropped) | ${costs.quiet.toFixed(3)} µs | |`,
    `| write path's listeners per change, the realm listened to (change records queued) | ${costs.listened.toFixed(3)} µs | |`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

await main();
