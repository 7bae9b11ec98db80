/**
 * Delivery lag (metrics, locus_bus_delivery_lag_seconds): the local bus and the NATS bus
 * (against a real nats-server) tell `onDelivered` once per realm message delivered, with the
 * seconds since it was published, on whichever process publishes it; a bus without
 * `onDelivered` sends no publish-time header.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from 'nats';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import { openNatsBus } from '../../internal/events/nats-bus.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { collect, eventually, loc } from './bus-contract.js';

describe('bus delivery lag: local bus', () => {
  it('is heard once per realm message delivered, only where someone listens', async () => {
    const lags: number[] = [];
    const bus = new LocalEventBus(undefined, { onDelivered: (lag) => lags.push(lag) });
    bus.publish('nobody', [loc('nobody', 'a', 1)]);
    const got = collect(bus, 'r');
    bus.publish('r', [loc('r', 'a', 1), loc('r', 'a', 2)]);
    bus.publish('r', [loc('r', 'a', 3)]);
    bus.publishRealmDeleted('r');
    await bus.close();
    assert.equal(got.events.length, 3);
    assert.equal(lags.length, 2, 'two event messages delivered; the realm deletion and the realm nobody listens to are not timed');
    for (const lag of lags) assert.ok(lag >= 0 && lag < 5, `lag ${lag}`);
    got.stop();
  });
});

describe('bus delivery lag: NATS bus', () => {
  let server: NatsServer;

  before(async () => {
    server = await startNatsServer();
  });

  after(async () => {
    await server.stop();
  });

  it('carries the publish time in a header to the other process, which times the delivery', async () => {
    const lagsA: number[] = [];
    const lagsB: number[] = [];
    const a = await openNatsBus({ servers: [server.url], name: 'lag-a', onDelivered: (lag) => lagsA.push(lag) });
    const b = await openNatsBus({ servers: [server.url], name: 'lag-b', onDelivered: (lag) => lagsB.push(lag) });
    const raw = await connect({ servers: server.url });
    const headers: (string | undefined)[] = [];
    raw.subscribe('locus.r.evt.>', { callback: (_err, msg) => headers.push(msg.headers?.get('Locus-Published-At')) });
    await raw.flush();
    const onA = collect(a, 'r');
    const onB = collect(b, 'r');
    await b.flush();
    const before = Date.now();
    a.publish('r', [loc('r', 'x', 1)]);
    await eventually(() => onA.events.length === 1 && onB.events.length === 1 && headers.length === 1, 'delivery on both processes');
    assert.equal(lagsA.length, 1, 'the publisher times its own local delivery');
    assert.equal(lagsB.length, 1, 'the other process times the delivery from the header');
    for (const lag of [...lagsA, ...lagsB]) assert.ok(lag >= 0 && lag < 5, `lag ${lag}`);
    const stamped = Number(headers[0]);
    assert.ok(Math.abs(stamped - before) < 5000, `header ${headers[0]}`);
    onA.stop();
    onB.stop();
    await Promise.all([a.close(), b.close()]);

    // Without onDelivered (metrics off) nothing is stamped.
    const plain = await openNatsBus({ servers: [server.url], name: 'plain' });
    plain.publish('r', [loc('r', 'x', 2)]);
    await plain.flush();
    await eventually(() => headers.length === 2, 'the unstamped message');
    assert.equal(headers[1], undefined);
    await plain.close();
    await raw.close();
  });
});
