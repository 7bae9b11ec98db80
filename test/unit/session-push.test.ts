/**
 * A v1 session over a fake wire: sign-in that fails keeps the connection open, pushes are
 * written as their own frame after the replies already due (never with a reply), and close
 * listeners run once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { Principal } from '../../internal/auth/principal.js';
import { LocusError } from '../../internal/errors.js';
import type { Access } from '../../internal/service/access.js';
import type { Subscriptions } from '../../internal/service/subscriptions.js';
import { Dispatcher } from '../../internal/transport/actions/dispatcher.js';
import { Session, type Wire } from '../../internal/transport/actions/session.js';
import type { V1HandlerTable } from '../../internal/transport/actions/v1-handler.js';

const principal: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'r', scope: 'read' };

function fakeWire(): Wire & { sent: string[]; closedWith: number | null } {
  const wire = {
    sent: [] as string[],
    closedWith: null as number | null,
    send: (text: string) => wire.sent.push(text),
    bufferedBytes: () => 0,
    close: (code: number) => {
      wire.closedWith = code;
    },
    pause: () => undefined,
    resume: () => undefined,
    remoteAddress: '127.0.0.1',
  };
  return wire;
}

/** `tst` `push`: pushes `{typ:"sub",id:"s"}` while it runs, then answers after a turn of the event loop. */
const handlers: V1HandlerTable = {
  tst: {
    push: {
      realm: 'none',
      need: 'R',
      run: async (_message, _realm, caller) => {
        caller.connection?.push([{ typ: 'sub', id: 's', uty: 'ful' }]);
        await new Promise((resolve) => setImmediate(resolve));
        return { dat: 'done' };
      },
    },
  },
};

function session(wire: Wire): Session {
  const access = {
    authenticate: (secret: string | null) =>
      secret === 'good' ? Promise.resolve(principal) : Promise.reject(new LocusError('unauthorized', 'signature is invalid')),
    countAction: () => Promise.resolve(),
  } as unknown as Access;
  const dispatcher = new Dispatcher({ access, handlers, onInternalError: (err) => assert.fail(String(err)) });
  return new Session(
    {
      access,
      dispatcher,
      subscriptions: { remove: () => undefined } as unknown as Subscriptions,
      build: { version: '1.0.0', buildDate: '2026-01-01' },
      limits: {
        handshakeTimeoutMs: 10_000,
        idleTimeoutMs: 0,
        sendBufferBytes: 1 << 20,
        slowConsumerMs: 1000,
        tokenRecheckMs: 60_000,
        pipelineChars: 1 << 20,
        maxActions: 100,
      },
      logger: pino({ level: 'silent' }),
    },
    wire,
    () => undefined,
  );
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

describe('v1 session', () => {
  it('a failed sign-in is answered and the connection stays open; a later Bearer frame signs in', async () => {
    const wire = fakeWire();
    const s = session(wire);
    s.receive('Bearer bad');
    await settle();
    s.receive('Bearer good');
    await settle();
    assert.deepEqual(wire.sent, [
      '[{"typ":"sys","act":"aut","res":"err","err":"signature is invalid","erc":401}]',
      '[{"typ":"sys","act":"aut","res":"suc","dat":{"version":"1.0.0","buildDate":"2026-01-01"}}]',
    ]);
    assert.equal(wire.closedWith, null);
    s.closed();
  });

  it('a push made while a message runs is written after its reply, as a frame of its own; close listeners run once', async () => {
    const wire = fakeWire();
    const s = session(wire);
    s.receive('Bearer good');
    await settle();
    wire.sent.length = 0;
    s.receive('[{"typ":"tst","act":"push","cid":"1"}]');
    await settle();
    assert.deepEqual(wire.sent, ['[{"typ":"tst","act":"push","cid":"1","res":"suc","dat":"done"}]', '[{"typ":"sub","id":"s","uty":"ful"}]']);
    // With no reply due, a push goes out at once.
    s.push([{ typ: 'sub', id: 's', uty: 'dta' }]);
    assert.equal(wire.sent.at(-1), '[{"typ":"sub","id":"s","uty":"dta"}]');
    let closes = 0;
    s.onClose(() => closes++);
    s.closed();
    s.closed();
    assert.equal(closes, 1);
    s.push([{ typ: 'sub', id: 's' }]);
    assert.equal(wire.sent.length, 3, 'nothing is pushed once closed');
    assert.equal(s.principal.tokenId, 't');
  });
});
