/**
 * The bus contract against every adapter: the in-process bus, and the NATS bus on a real
 * nats-server (two buses = two processes), plus what only NATS has: interest-based
 * subscriptions, outages and reconnects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../internal/config/config.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { openNatsBus, type NatsBus, type NatsBusOptions } from '../../internal/events/nats-bus.js';
import { natsConnection, openBus } from '../../internal/events/open-bus.js';
import { realmToken, type LocusEvent } from '../../internal/events/port.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { busContract, collect, eventually, loc, numberOf } from './bus-contract.js';

busContract({
  name: 'local',
  pair: () => {
    const bus = new LocalEventBus();
    return Promise.resolve({ a: bus, b: bus, settle: () => Promise.resolve(), close: () => bus.close() });
  },
});

let server: NatsServer;
before(async () => {
  server = await startNatsServer();
});
after(async () => {
  await server.stop();
});

const fast = { reconnectDelayMs: 50, maxReconnectDelayMs: 200 };

/** The publisher reconnects slower than the receiver (`slow`): what it buffered in an outage finds the receiver's subscription back on the server. */
const slow = { reconnectDelayMs: 800, maxReconnectDelayMs: 800 };

async function natsPair(aOptions: Partial<NatsBusOptions> = fast): Promise<{ a: NatsBus; b: NatsBus; settle: () => Promise<void>; close: () => Promise<void> }> {
  const a = await openNatsBus({ servers: [server.url], name: 'bus-a', ...aOptions });
  const b = await openNatsBus({ servers: [server.url], name: 'bus-b', ...fast });
  return {
    a,
    b,
    settle: async () => {
      await b.flush();
      await a.flush();
    },
    close: async () => {
      await a.close();
      await b.close();
    },
  };
}

busContract({ name: 'nats', pair: () => natsPair() });

interface Subsz {
  subscriptions_list?: { subject: string }[];
}

/** The subjects the server has subscriptions for. */
async function subjects(): Promise<string[]> {
  const subsz = await server.monitor<Subsz>('/subsz?subs=1&limit=10000');
  return (subsz.subscriptions_list ?? []).map((s) => s.subject);
}

describe('LOCUS_BUS validation', () => {
  it('accepts local and nats:// / tls:// server lists', () => {
    for (const bus of ['local', 'nats://127.0.0.1:4222', 'nats://a:4222,nats://b:4222', 'tls://nats.example.com:4222', 'nats://user:secret@a:4222']) {
      assert.equal(loadConfig({ LOCUS_BUS: bus }).bus, bus);
    }
  });

  it('refuses anything else with one ConfigError naming what it accepts', () => {
    for (const [bus, problem] of [
      ['kafka', /"kafka" is not a supported bus/],
      ['nats://', /"nats:\/\/" names no host|"nats:\/\/" is not a URL/],
      ['nats://a:4222/x', /must not have a path/],
      ['nats://a:4222,', /"" is not a URL/],
      ['nats://a:4222,redis://b', /must start with nats:\/\/ or tls:\/\//],
      ['NATS', /not a supported bus/],
    ] as const) {
      assert.throws(
        () => loadConfig({ LOCUS_BUS: bus }),
        (err: unknown) => err instanceof ConfigError && /^LOCUS_BUS must be local, or nats:\/\/host:4222/.test(err.message) && problem.test(err.message),
        bus,
      );
    }
  });

  it('takes credentials out of the server URLs (the NATS client would ignore them there)', () => {
    assert.deepEqual(natsConnection('nats://u%40x:p%3Aw@a:4222,nats://b:4222'), { servers: ['nats://a:4222', 'nats://b:4222'], user: 'u@x', pass: 'p:w' });
    assert.deepEqual(natsConnection('tls://s3cret@a:4222'), { servers: ['tls://a:4222'], token: 's3cret' });
    assert.deepEqual(natsConnection('nats://a'), { servers: ['nats://a'] });
  });

  it('never shows credentials in its messages', () => {
    assert.throws(() => loadConfig({ LOCUS_BUS: 'nats://locus:s3cret@a:4222/x' }), (err: unknown) => err instanceof Error && err.message.includes('"nats://***@a:4222/x"') && !err.message.includes('s3cret'));
  });

  it('openBus refuses what it cannot open, the same way', async () => {
    await assert.rejects(openBus('kafka://x'), /LOCUS_BUS must be .*"kafka:\/\/x" is not a supported bus/);
  });
});

describe('nats bus', () => {
  it('openBus opens it from a nats:// URL list', async () => {
    const bus = await openBus(`${server.url},${server.url}`);
    try {
      assert.equal(bus.health().ok, true);
      assert.match(bus.health().detail, /nats connected/);
    } finally {
      await bus.close();
    }
  });

  it('connects with the user and password of the URL to a server that requires them', async () => {
    const secured = await startNatsServer({ args: ['--user', 'locus', '--pass', 'p@ss'] });
    try {
      await assert.rejects(openBus(secured.url), /cannot reach NATS.*(Authorization|AUTHORIZATION)/i);
      const bus = await openBus(secured.url.replace('nats://', 'nats://locus:p%40ss@'));
      assert.equal(bus.health().ok, true);
      await bus.close();
    } finally {
      await secured.stop();
    }
  });

  it('openBus rejects, naming the servers, when no server answers', async () => {
    await assert.rejects(openBus('nats://127.0.0.1:1'), /cannot reach NATS at nats:\/\/127\.0\.0\.1:1/);
  });

  it('subscribes to a realm\'s subjects only while it has a local handler (interest)', async () => {
    const bus = await openNatsBus({ servers: [server.url], ...fast });
    try {
      const realm = 'interest.realm';
      const subject = `locus.${realmToken(realm)}.>`;
      await bus.flush();
      assert.ok(!(await subjects()).includes(subject));
      assert.ok((await subjects()).includes('locus.ctl.>'), 'control subjects always');
      const first = collect(bus, realm);
      const second = collect(bus, realm);
      await bus.flush();
      assert.equal((await subjects()).filter((s) => s === subject).length, 1, 'one NATS subscription for many handlers');
      first.stop();
      await bus.flush();
      assert.ok((await subjects()).includes(subject));
      second.stop();
      await bus.flush();
      assert.ok(!(await subjects()).includes(subject));

      const tenant = bus.subscribeTenant('acme', () => undefined);
      await bus.flush();
      assert.ok((await subjects()).includes('locus.tenant.acme.realm'));
      tenant.unsubscribe();
      await bus.flush();
      assert.ok(!(await subjects()).includes('locus.tenant.acme.realm'));
    } finally {
      await bus.close();
    }
  });

  it('sends the consecutive events of one kind of one publish in one message', async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const got = collect(b, 'batch');
      await settle();
      const before = await server.monitor<{ in_msgs: number }>('/varz');
      const events = Array.from({ length: 500 }, (_, i) => loc('batch', `o${i}`, i));
      a.publish('batch', events);
      await eventually(() => got.events.length === 500, '500 events');
      await a.flush();
      const afterVarz = await server.monitor<{ in_msgs: number }>('/varz');
      assert.equal(got.messages.length, 1);
      assert.deepEqual(got.events, events);
      assert.equal(afterVarz.in_msgs - before.in_msgs, 1);
    } finally {
      await close();
    }
  });

  it('sends interleaved kinds (cst a, pub a, cst b, pub b, …) as one message per kind, each object\'s events in order', async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const got = collect(b, 'bulk');
      await settle();
      const before = await server.monitor<{ in_msgs: number }>('/varz');
      const events: LocusEvent[] = Array.from({ length: 300 }, (_, i) => [
        { kind: 'cst' as const, realm: 'bulk', object: `o${i}`, status: 'con' as const },
        loc('bulk', `o${i}`, i),
      ]).flat();
      a.publish('bulk', events);
      await eventually(() => got.events.length === 600, '600 events');
      await a.flush();
      const afterVarz = await server.monitor<{ in_msgs: number }>('/varz');
      assert.equal(afterVarz.in_msgs - before.in_msgs, 2);
      assert.deepEqual(got.events, [...events.filter((e) => e.kind === 'cst'), ...events.filter((e) => e.kind === 'pub')]);
    } finally {
      await close();
    }
  });

  it('splits a batch bigger than the server\'s max payload, in order', async () => {
    const { a, b, settle, close } = await natsPair();
    try {
      const got = collect(b, 'big');
      await settle();
      const events: LocusEvent[] = Array.from({ length: 6000 }, (_, i) => ({ kind: 'pub', realm: 'big', eve: 'e', idp: `object-${i}`, dat: { i, text: 'x'.repeat(200) } }));
      a.publish('big', events);
      await eventually(() => got.events.length === 6000, '6000 events');
      assert.ok(got.messages.length > 1);
      assert.deepEqual(got.events, events);
    } finally {
      await close();
    }
  });

  it('keeps publishing without throwing while the server is down, shows the outage, and delivers again after restart on the same port', async () => {
    const { a, b, settle, close } = await natsPair(slow);
    try {
      const remote = collect(b, 'outage');
      const own = collect(a, 'outage');
      await settle();
      a.publish('outage', [loc('outage', 'x', 1)]);
      await eventually(() => remote.events.length === 1, 'the event before the outage');

      await server.kill();
      await eventually(() => !a.health().ok && !b.health().ok, 'both buses to notice the outage');
      assert.match(a.health().detail, /nats disconnected since .*reconnecting/);
      // Writers go on: nothing throws, local subscribers still get their events.
      a.publish('outage', [loc('outage', 'x', 2)]);
      a.publishControl({ kind: 'realm.changed', realm: 'outage' });
      await eventually(() => own.events.length === 2, 'the local event during the outage');

      await server.restart();
      await eventually(() => a.health().ok && b.health().ok, 'both buses to reconnect', 10_000);
      await settle();
      a.publish('outage', [loc('outage', 'x', 3)]);
      await eventually(() => remote.events.some((e) => numberOf(e) === 3), 'the event after the restart', 10_000);
      // What was buffered during the outage went out first, in order.
      assert.deepEqual(
        remote.events.map(numberOf),
        [1, 2, 3],
      );
    } finally {
      await close();
    }
  });

  it('tells onResync listeners after a reconnect once the subscriptions are back on the server, and tells the processes that were back first', async () => {
    // b comes back first; a later, after what it buffered (more than fits: some is dropped).
    const a = await openNatsBus({ servers: [server.url], name: 'resync-a', ...slow, maxBufferedBytes: 2_000 });
    const b = await openNatsBus({ servers: [server.url], name: 'resync-b', ...fast });
    const local = new LocalEventBus();
    try {
      const remote = collect(b, 'resync');
      const heard = { a: 0, b: 0, local: 0 };
      // When b is told that a came back, a is connected: what it publishes then reaches b.
      b.onResync(() => {
        heard.b++;
        if (heard.b === 2) a.publish('resync', [loc('resync', 'x', 1000)]);
      });
      a.onResync(() => heard.a++);
      local.onResync(() => heard.local++);
      const gone = a.onResync(() => assert.fail('an unsubscribed listener was told'));
      gone.unsubscribe();
      await a.flush();
      await b.flush();

      await server.kill();
      await eventually(() => !a.health().ok && !b.health().ok, 'the outage');
      for (let i = 0; i < 100; i++) a.publish('resync', [loc('resync', 'x', i)]);
      await server.restart();
      await eventually(() => heard.b === 1, 'b to be told once it is back', 10_000);
      assert.equal(heard.a, 0, 'a is not back yet');
      await eventually(() => heard.a === 1, 'a to be told once it is back', 10_000);
      // a dropped messages (and b may have missed what a flushed): b is told again.
      await eventually(() => heard.b === 2, 'b to be told that a came back', 10_000);
      await eventually(() => remote.events.some((e) => numberOf(e) === 1000), 'what a sent after b was told', 10_000);
      assert.equal(heard.local, 0, 'the local bus never tells');
      // Nothing more without another outage.
      await a.flush();
      await b.flush();
      assert.deepEqual(heard, { a: 1, b: 2, local: 0 });
    } finally {
      await a.close();
      await b.close();
      await local.close();
    }
  });

  it('drops (counts) what does not fit the outage buffer, and never throws', async () => {
    const a = await openNatsBus({ servers: [server.url], ...slow, maxBufferedBytes: 2_000 });
    const b = await openNatsBus({ servers: [server.url], ...fast });
    try {
      const remote = collect(b, 'small-buffer');
      await b.flush();
      await server.kill();
      await eventually(() => !a.health().ok && !b.health().ok, 'the outage');
      for (let i = 0; i < 100; i++) a.publish('small-buffer', [loc('small-buffer', 'x', i)]);
      assert.match(a.health().detail, /[1-9]\d* messages dropped in this outage/);
      await server.restart();
      await eventually(() => a.health().ok && b.health().ok, 'reconnect', 10_000);
      await a.flush();
      await eventually(() => remote.events.length > 0, 'the buffered events');
      const ns = remote.events.map(numberOf);
      assert.ok(ns.length < 100);
      assert.deepEqual(ns, ns.map((_, i) => i), 'the first ones, in order');
    } finally {
      await a.close();
      await b.close();
    }
  });
});
