/**
 * Presence across processes (issue #21): two presence registries on two NATS buses (two
 * processes) over a real nats-server and one store. A data provider connected to one makes
 * its objects `con` for readers on the other; a clean shutdown withdraws at once; a process
 * that dies loses its claims when its lease runs out; each change is one `cst` event per
 * subscriber.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/principal.js';
import { openNatsBus, type NatsBus } from '../../internal/events/nats-bus.js';
import { PresenceRegistry } from '../../internal/service/presence-registry.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import { FakeConnection, principalWith } from '../support/fake-connection.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { eventually } from './bus-contract.js';

const NOW = '2026-01-01T00:00:00.000Z';
const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

interface Process {
  bus: NatsBus;
  presence: PresenceRegistry;
  /** `cst` events its `fleet` subscriber got, as `id status`. */
  cst: string[];
}

let server: NatsServer;
let store: SqliteStore;
let processes: Process[] = [];

before(async () => {
  server = await startNatsServer();
});
after(async () => {
  await server.stop();
});

beforeEach(async () => {
  store = openSqliteStore(':memory:');
  await store.realms.put('fleet', SETTINGS, NOW);
  await store.objects.upsertMany(
    'fleet',
    ['a1', 'a2', 'b1'].map((id) => ({ id, location: { longitude: 1, latitude: 2, time: NOW } })),
    NOW,
  );
});
afterEach(async () => {
  for (const p of processes) {
    p.presence.close();
    await p.bus.close();
  }
  processes = [];
  await store.close();
});

async function startProcess(heartbeatMs: number): Promise<Process> {
  const bus = await openNatsBus({ servers: [server.url], reconnectDelayMs: 50, maxReconnectDelayMs: 200, onError: (err) => assert.fail(String(err)) });
  const presence = new PresenceRegistry({
    bus,
    objects: store.objects,
    resolveRealm: async (_principal: Principal, name: string) => ((await store.realms.get(name)) === null ? null : { key: name }),
    onError: (err) => assert.fail(String(err)),
    heartbeatMs,
  });
  const cst: string[] = [];
  bus.subscribe('fleet', (message) => {
    if (message.kind !== 'events') return;
    for (const event of message.events) if (event.kind === 'cst') cst.push(`${event.object} ${event.status}`);
  });
  await bus.flush();
  const p = { bus, presence, cst };
  processes.push(p);
  return p;
}

const device = (patterns: string[]): FakeConnection => new FakeConnection(principalWith({ fleet: patterns }));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const statuses = (p: Process): string => ['a1', 'a2', 'b1'].map((id) => `${id}:${p.presence.statusOf('fleet', id)}`).join(' ');

describe('presence across processes (NATS bus)', () => {
  it('a data provider on A makes its objects con for readers on B, and dis again when it closes; one cst per change per process', async () => {
    const a = await startProcess(200);
    const b = await startProcess(200);
    const conn = device(['a*']);
    a.presence.connectionOpened(conn);
    await eventually(() => statuses(b) === 'a1:con a2:con b1:dis', 'B to see A\'s claim');
    assert.equal(statuses(a), 'a1:con a2:con b1:dis');
    await eventually(() => a.cst.length === 2 && b.cst.length === 2, 'the con events on both');
    conn.close();
    await eventually(() => statuses(b) === 'a1:dis a2:dis b1:dis', 'B to see the claim end');
    await eventually(() => b.cst.length === 4 && a.cst.length === 4, 'the dis events on both');
    // Heartbeats repeat the state; they announce nothing new.
    await pause(700);
    for (const p of [a, b]) assert.deepEqual([...p.cst].sort(), ['a1 con', 'a1 dis', 'a2 con', 'a2 dis']);
    assert.deepEqual(b.cst.slice(0, 2).sort(), ['a1 con', 'a2 con']);
  });

  it('an object claimed on both processes stays con until the last claim ends', async () => {
    const a = await startProcess(200);
    const b = await startProcess(200);
    const onA = device(['b1']);
    const onB = device(['b*']);
    a.presence.connectionOpened(onA);
    await eventually(() => b.presence.statusOf('fleet', 'b1') === 'con', 'B to see A\'s claim');
    b.presence.connectionOpened(onB);
    await b.presence.idle();
    // `bx` (no such object) is `con` only by B's `b*`: A has heard of B's claim.
    await eventually(() => a.presence.statusOf('fleet', 'bx') === 'con' && a.cst.length === 1 && b.cst.length === 1, 'one con each');
    onA.close();
    await pause(400);
    for (const p of [a, b]) {
      assert.equal(p.presence.statusOf('fleet', 'b1'), 'con');
      assert.deepEqual(p.cst, ['b1 con']);
    }
    onB.close();
    await eventually(() => a.presence.statusOf('fleet', 'b1') === 'dis' && a.cst.length === 2 && b.cst.length === 2, 'one dis each');
    for (const p of [a, b]) assert.deepEqual(p.cst, ['b1 con', 'b1 dis']);
  });

  it('a process that starts later learns the claims at once (hello), not at the next heartbeat', async () => {
    const a = await startProcess(10_000);
    a.presence.connectionOpened(device(['a1']));
    await a.presence.idle();
    await pause(100); // A's own announcement went out before B existed
    const b = await startProcess(10_000);
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'con', 'B to hear A\'s claims', 2_000);
    await eventually(() => b.cst.length === 1, 'the con event on B');
    assert.deepEqual(b.cst, ['a1 con']);
  });

  it('after a bus outage (resync) a process says hello and sends its claims at once, not at the next heartbeat', async () => {
    const a = await startProcess(10_000);
    const b = await startProcess(10_000);
    a.presence.connectionOpened(device(['a1']));
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'con', 'B to see A\'s claim');
    const heard: string[] = [];
    const watcher = await openNatsBus({ servers: [server.url] });
    try {
      watcher.subscribePresence((message) => heard.push(`${message.process === a.presence.processId ? 'A' : 'B'} ${message.kind}`));
      await watcher.flush();
      a.presence.resync();
      b.presence.resync();
      // Each says hello; A has claims, so A's claims follow (each hello also asks A for them), B's (none) do not.
      await eventually(() => heard.includes('A claims'), 'A\'s claims', 2_000);
      await pause(200);
      assert.deepEqual([...new Set(heard)].sort(), ['A claims', 'A hello', 'B hello']);
    } finally {
      await watcher.close();
    }
  });

  it('a clean shutdown withdraws the claims at once (long before the lease would run out)', async () => {
    const a = await startProcess(10_000);
    const b = await startProcess(10_000);
    a.presence.connectionOpened(device(['a1']));
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'con', 'B to see A\'s claim');
    a.presence.close();
    await a.bus.close();
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'dis', 'the withdrawal', 2_000);
    await eventually(() => b.cst.length === 2, 'the dis event');
    assert.deepEqual(b.cst, ['a1 con', 'a1 dis']);
  });

  it('a process that dies (its NATS connection gone, no withdrawal) loses its claims when the lease runs out, never staying con', async () => {
    const a = await startProcess(150);
    const b = await startProcess(150);
    a.presence.connectionOpened(device(['a*']));
    await eventually(() => statuses(b) === 'a1:con a2:con b1:dis', 'B to see A\'s claim');
    const died = Date.now();
    await a.bus.close(); // the connection ends; the registry never withdraws
    assert.equal(statuses(b), 'a1:con a2:con b1:dis', 'still con until the lease runs out');
    await eventually(() => statuses(b) === 'a1:dis a2:dis b1:dis', 'the lease to run out', 5_000);
    const after = Date.now() - died;
    assert.ok(after >= 150, `dropped after ${after} ms, before a heartbeat passed`);
    await eventually(() => b.cst.length === 4, 'the dis events');
    assert.deepEqual([...b.cst].sort(), ['a1 con', 'a1 dis', 'a2 con', 'a2 dis']);
  });

  it('a NATS outage ends the claims the other processes cannot renew, and they come back after reconnect', async () => {
    const a = await startProcess(150);
    const b = await startProcess(150);
    a.presence.connectionOpened(device(['a1']));
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'con', 'B to see A\'s claim');
    await server.kill();
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'dis', 'the lease to run out during the outage', 5_000);
    assert.equal(a.presence.statusOf('fleet', 'a1'), 'con', 'A\'s own claim holds');
    await server.restart();
    await eventually(() => b.presence.statusOf('fleet', 'a1') === 'con', 'the claim back after reconnect', 10_000);
  });
});
