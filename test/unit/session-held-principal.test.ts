/**
 * A signed-in v1 session checks its token at every message: from memory while the held
 * lookups decide it (SessionDeps.heldPrincipal, given the secret's hash, no promise), else
 * through Access.authenticate with the hash it computed once. Once memory no longer holds
 * the token and the store refuses it, the next message ends the connection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { Principal } from '../../internal/auth/principal.js';
import { hashSecret } from '../../internal/auth/tokens.js';
import { LocusError } from '../../internal/errors.js';
import type { Access } from '../../internal/service/access.js';
import type { Subscriptions } from '../../internal/service/subscriptions.js';
import { Dispatcher } from '../../internal/transport/actions/dispatcher.js';
import { Session, type Wire } from '../../internal/transport/actions/session.js';
import type { V1HandlerTable } from '../../internal/transport/actions/v1-handler.js';

const principal: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'r', scope: 'read' };

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

const handlers: V1HandlerTable = {
  tst: { who: { realm: 'none', need: 'R', run: (_message, _realm, caller) => Promise.resolve({ dat: caller.principal.tokenId }) } },
};

describe('v1 session: the token checked at every message', () => {
  it('is answered from memory by hash while held; once neither memory nor the store holds it, the connection ends', async () => {
    const sent: string[] = [];
    let closedWith: number | null = null;
    const wire: Wire = {
      send: (text) => sent.push(text),
      bufferedBytes: () => 0,
      close: (code) => {
        closedWith = code;
      },
      pause: () => undefined,
      resume: () => undefined,
      remoteAddress: '127.0.0.1',
    };
    /** authenticate's calls: the secret and the hash it was given. */
    const asked: [string | null, string | null][] = [];
    let valid = true;
    const access = {
      authenticate: (secret: string | null, _source: string | null, hash: string | null = null) => {
        asked.push([secret, hash]);
        return valid ? Promise.resolve(principal) : Promise.reject(new LocusError('unauthorized', 'the token is not valid'));
      },
      countAction: () => Promise.resolve(),
    } as unknown as Access;
    const held = new Map<string, Principal>();
    const session = new Session(
      {
        access,
        dispatcher: new Dispatcher({ access, handlers, onInternalError: (err) => assert.fail(String(err)) }),
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
        heldPrincipal: (hash) => held.get(hash),
      },
      wire,
      () => undefined,
    );
    const hash = hashSecret('good');
    session.receive('Bearer good');
    await settle();
    assert.equal(asked.length, 1, 'the sign-in asks');
    held.set(hash, { ...principal, tokenId: 'held' });
    session.receive('[{"typ":"tst","act":"who","cid":"1"}]');
    session.receive('[{"typ":"tst","act":"who","cid":"2"}]');
    await settle();
    assert.equal(asked.length, 1, 'held: no message asks');
    assert.deepEqual(sent.slice(1), ['[{"typ":"tst","act":"who","cid":"1","res":"suc","dat":"held"}]', '[{"typ":"tst","act":"who","cid":"2","res":"suc","dat":"held"}]']);

    // No longer held (its hold is over, or a control message dropped it): the store is asked, by hash.
    held.clear();
    session.receive('[{"typ":"tst","act":"who","cid":"3"}]');
    await settle();
    assert.deepEqual(asked[1], ['good', hash]);
    assert.equal(sent.at(-1), '[{"typ":"tst","act":"who","cid":"3","res":"suc","dat":"t"}]');

    // Revoked: the store refuses, and the message ends the connection.
    valid = false;
    session.receive('[{"typ":"tst","act":"who","cid":"4"}]');
    await settle();
    assert.match(sent.at(-1) as string, /"err":"the token is no longer valid/);
    assert.notEqual(closedWith, null);
    session.closed();
  });
});
