/**
 * Realm pub/sub (compat 4.8, 12.8) above the bus port: the PubSub service with the real
 * in-process bus and fake connections, the `rea` `sub`/`uns`/`pub` handlers, and the input rules.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { Realm } from '../../internal/domain/types.js';
import { MAX_PUBLISH_BYTES, parsePublish, parseSubscribe } from '../../internal/domain/pubsub-input.js';
import { LocusError } from '../../internal/errors.js';
import { LocalEventBus } from '../../internal/events/local-bus.js';
import type { BusSubscription, RealmMessage } from '../../internal/events/port.js';
import { maxPubSubPerConnection, PubSub } from '../../internal/service/pubsub.js';
import type { HandlerDeps } from '../../internal/transport/actions/handlers/deps.js';
import { pubsubHandlers } from '../../internal/transport/actions/handlers/pubsub.js';
import type { V1Caller, V1Handler, V1Message } from '../../internal/transport/actions/v1-handler.js';
import { busTurn, FakeConnection } from '../support/fake-connection.js';
import { expectLocusError } from '../support/locus-error.js';

const fleet = { key: 'fleet', name: 'fleet' };

const delivery = (sid: string, eve: string, dat: unknown, rea = 'fleet'): object => ({ typ: 'rea', act: 'pub', rea, sid, dat: { eve, dat } });

/** The in-process bus, counting its open realm subscriptions. */
class CountingBus extends LocalEventBus {
  listening = 0;
  override subscribe(realm: string, handler: (message: RealmMessage) => void): BusSubscription {
    const subscription = super.subscribe(realm, handler);
    this.listening++;
    return {
      unsubscribe: () => {
        this.listening--;
        subscription.unsubscribe();
      },
    };
  }
}

describe('pub/sub service', () => {
  let bus: CountingBus;
  let pubsub: PubSub;
  beforeEach(() => {
    bus = new CountingBus((err) => assert.fail(String(err)));
    pubsub = new PubSub(bus);
  });
  afterEach(() => bus.close());

  it("delivers once per matching pattern: * and some-id (the client suite's multi-pattern test)", async () => {
    const a = new FakeConnection();
    const b = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'ping', idp: '*' });
    pubsub.subscribe(a, fleet, { eve: 'ping', idp: 'some-id' });
    pubsub.subscribe(b, fleet, { eve: 'ping', idp: 'some-id' });
    pubsub.publish('fleet', { eve: 'ping', idp: 'some-id', dat: { n: 1 } });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'ping', { n: 1 }), delivery('some-id', 'ping', { n: 1 })]);
    assert.equal(a.pushes, 1, 'one push per connection and publication');
    assert.deepEqual(b.take(), [delivery('some-id', 'ping', { n: 1 })]);
    pubsub.publish('fleet', { eve: 'ping', idp: 'another-id', dat: 'x' });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'ping', 'x')]);
    assert.deepEqual(b.take(), []);
  });

  it('matches globs against the literal published id; a publish under * reaches only patterns matching "*"', async () => {
    const a = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '/object/*' });
    pubsub.subscribe(a, fleet, { eve: 'e', idp: 'car/1' });
    pubsub.publish('fleet', { eve: 'e', idp: '/object/123', dat: 1 });
    pubsub.publish('fleet', { eve: 'e', idp: '*', dat: 2 });
    pubsub.publish('fleet', { eve: 'e', idp: '/objects/1', dat: 3 });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('/object/*', 'e', 1)]);
  });

  it('delivers to the publisher too, only for the event subscribed, only in the realm subscribed', async () => {
    const a = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    pubsub.publish('fleet', { eve: 'other', idp: 'x', dat: 1 });
    pubsub.publish('elsewhere', { eve: 'e', idp: 'x', dat: 1 });
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 2 });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'e', 2)]);
  });

  it('shows the realm name, not its storage key, and leaves out an absent payload', async () => {
    const a = new FakeConnection();
    pubsub.subscribe(a, { key: 't:acme/fleet', name: 'fleet' }, { eve: 'e', idp: '*' });
    pubsub.publish('t:acme/fleet', { eve: 'e', idp: 'x', dat: undefined });
    await busTurn();
    assert.deepEqual(a.take(), [{ typ: 'rea', act: 'pub', rea: 'fleet', sid: '*', dat: { eve: 'e' } }]);
  });

  it('uns stops delivery; an unknown or repeated uns is no error; a repeated sub delivers once', async () => {
    const a = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    assert.equal(pubsub.countOf(a.id), 1);
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 1 });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'e', 1)]);
    pubsub.unsubscribe(a, 'fleet', { eve: 'e', idp: '*' });
    pubsub.unsubscribe(a, 'fleet', { eve: 'e', idp: '*' });
    pubsub.unsubscribe(a, 'fleet', { eve: 'never', idp: 'y' });
    pubsub.unsubscribe(a, 'nowhere', { eve: 'e', idp: '*' });
    assert.equal(pubsub.countOf(a.id), 0);
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 2 });
    await busTurn();
    assert.deepEqual(a.take(), []);
  });

  it("drops a connection's subscriptions when it closes, and lets go of the realm on the bus", async () => {
    const a = new FakeConnection();
    const b = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    pubsub.subscribe(b, fleet, { eve: 'e', idp: '*' });
    a.close();
    assert.equal(pubsub.countOf(a.id), 0);
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 1 });
    await busTurn();
    assert.deepEqual(a.pushed, []);
    assert.deepEqual(b.take(), [delivery('*', 'e', 1)]);
    b.close();
    assert.equal(bus.listening, 0, 'no bus subscription left');
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 2 });
    await busTurn();
    assert.deepEqual(b.pushed, []);
  });

  it("ends a realm's subscriptions silently when the realm is deleted", async () => {
    const a = new FakeConnection();
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    bus.publishRealmDeleted('fleet');
    await busTurn();
    assert.equal(pubsub.countOf(a.id), 0);
    assert.equal(bus.listening, 0);
    assert.deepEqual(a.pushed, []);
    // Subscribing again after a re-create works.
    pubsub.subscribe(a, fleet, { eve: 'e', idp: '*' });
    pubsub.publish('fleet', { eve: 'e', idp: 'x', dat: 1 });
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'e', 1)]);
  });

  it(`caps a connection at ${maxPubSubPerConnection} subscriptions`, () => {
    const a = new FakeConnection();
    for (let i = 0; i < maxPubSubPerConnection; i++) pubsub.subscribe(a, fleet, { eve: 'e', idp: `id-${i}` });
    pubsub.subscribe(a, fleet, { eve: 'e', idp: 'id-0' });
    expectLocusError(() => pubsub.subscribe(a, fleet, { eve: 'e', idp: 'one-more' }), 'invalid_request', /at most 1000 pub\/sub subscriptions/);
    pubsub.unsubscribe(a, 'fleet', { eve: 'e', idp: 'id-0' });
    pubsub.subscribe(a, fleet, { eve: 'e', idp: 'one-more' });
    assert.equal(pubsub.countOf(a.id), maxPubSubPerConnection);
  });
});

describe('pub/sub input', () => {
  it('reads eve and idp (default *), ignoring other keys', () => {
    assert.deepEqual(parseSubscribe({ dat: { eve: 'e' } }), { eve: 'e', idp: '*' });
    assert.deepEqual(parseSubscribe({ dat: { eve: 'e', idp: 'car/*', extra: 1 } }), { eve: 'e', idp: 'car/*' });
    assert.deepEqual(parsePublish({ dat: { eve: 'e', idp: 'car/1', dat: { a: [1] } } }), { eve: 'e', idp: 'car/1', dat: { a: [1] } });
    assert.deepEqual(parsePublish({ dat: { eve: 'e' } }), { eve: 'e', idp: '*', dat: undefined });
  });

  it('refuses bad values with clear errors', () => {
    expectLocusError(() => parseSubscribe({}), 'invalid_request', 'dat must be a JSON object holding eve (got nothing)');
    expectLocusError(() => parseSubscribe({ dat: { idp: '*' } }), 'invalid_request', 'dat.eve must be the event name, a string (got nothing)');
    expectLocusError(() => parseSubscribe({ dat: { eve: '' } }), 'invalid_request', 'dat.eve must not be empty');
    expectLocusError(() => parseSubscribe({ dat: { eve: 'x'.repeat(257) } }), 'invalid_request', /dat\.eve is too long/);
    expectLocusError(() => parseSubscribe({ dat: { eve: 'a\nb' } }), 'invalid_request', /control characters/);
    expectLocusError(() => parseSubscribe({ dat: { eve: 'e', idp: 5 } }), 'invalid_id', 'dat.idp must be a string (got 5)');
    expectLocusError(() => parsePublish({ dat: { eve: 'e', idp: '' } }), 'invalid_id', 'dat.idp must not be empty');
    parsePublish({ dat: { eve: 'e', dat: 'x'.repeat(MAX_PUBLISH_BYTES - 2) } });
    expectLocusError(() => parsePublish({ dat: { eve: 'e', dat: 'x'.repeat(MAX_PUBLISH_BYTES - 1) } }), 'too_large', /at most 65536 bytes/);
    expectLocusError(() => parsePublish({ dat: { eve: 'e', dat: 'é'.repeat(MAX_PUBLISH_BYTES / 2) } }), 'too_large');
  });
});

describe('pub/sub v1 handlers', () => {
  const realm: Realm = { id: 'fleet', tenant: 'default', name: 'fleet', label: null, data: {}, settings: { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null }, created: '2026-01-01T00:00:00.000Z' };
  let bus: LocalEventBus;
  let pubsub: PubSub;
  let handlers: Record<string, V1Handler>;
  beforeEach(() => {
    bus = new LocalEventBus();
    pubsub = new PubSub(bus);
    handlers = pubsubHandlers({ pubsub } as unknown as HandlerDeps).rea as Record<string, V1Handler>;
  });
  afterEach(() => bus.close());

  const message = (act: string, dat: unknown): V1Message => ({ typ: 'rea', act, cid: 'c1', raw: { typ: 'rea', act, cid: 'c1', id: 'fleet', dat } });
  const run = (act: string, dat: unknown, caller: V1Caller): Promise<unknown> => {
    const handler = handlers[act];
    assert.ok(handler);
    return handler.run(message(act, dat), realm, caller);
  };

  it('names the realm in id; sub and uns need R, pub needs U', () => {
    assert.deepEqual(
      Object.entries(handlers).map(([act, h]) => [act, h.realm, h.need]),
      [
        ['sub', 'id', 'R'],
        ['uns', 'id', 'R'],
        ['pub', 'id', 'U'],
      ],
    );
  });

  it('sub, pub and uns answer suc with nothing more; deliveries reach the connection', async () => {
    const a = new FakeConnection();
    const caller = { principal: a.principal, connection: a };
    assert.deepEqual(await run('sub', { eve: 'e', idp: '*' }, caller), {});
    assert.deepEqual(await run('pub', { eve: 'e', idp: 'x', dat: { k: 'v' } }, caller), {});
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'e', { k: 'v' })]);
    assert.deepEqual(await run('uns', { eve: 'e', idp: '*' }, caller), {});
    assert.deepEqual(await run('uns', { eve: 'e', idp: 'never' }, caller), {});
    await run('pub', { eve: 'e', idp: 'x', dat: 1 }, caller);
    await busTurn();
    assert.deepEqual(a.take(), []);
  });

  it('over HTTP: pub reaches the connections, sub and uns are 400 (no push channel)', async () => {
    const a = new FakeConnection();
    await run('sub', { eve: 'e' }, { principal: a.principal, connection: a });
    const http = { principal: a.principal, connection: null };
    assert.deepEqual(await run('pub', { eve: 'e', idp: 'y', dat: 3 }, http), {});
    await busTurn();
    assert.deepEqual(a.take(), [delivery('*', 'e', 3)]);
    for (const act of ['sub', 'uns']) {
      await assert.rejects(run(act, { eve: 'e' }, http), (err: unknown) => {
        assert.ok(err instanceof LocusError);
        assert.equal(err.status, 400);
        assert.match(err.message, new RegExp(`^rea ${act} needs a WebSocket or TCP connection`));
        return true;
      });
    }
  });

  it('a bad payload is an error and subscribes nothing', async () => {
    const a = new FakeConnection();
    await assert.rejects(run('sub', { idp: '*' }, { principal: a.principal, connection: a }), LocusError);
    assert.equal(pubsub.countOf(a.id), 0);
  });
});
