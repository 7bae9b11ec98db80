/**
 * The dispatcher over a fake Access (the layer above the port): a long message runs in
 * linear time and gives the event loop back while it runs, so that timers, health checks
 * and other connections keep their pace.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/authenticator.js';
import type { Access } from '../../internal/service/access.js';
import { parseFrameValue } from '../../internal/transport/actions/codec.js';
import { Dispatcher } from '../../internal/transport/actions/dispatcher.js';
import type { HandlerDeps } from '../../internal/transport/actions/handlers/deps.js';
import { systemHandlers } from '../../internal/transport/actions/handlers/system.js';

const principal: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'r', scope: 'read' };

function dispatcher(counted: { n: number }): Dispatcher {
  const access = {
    countAction: () => {
      counted.n++;
      return Promise.resolve();
    },
  } as unknown as Access;
  const deps = { clock: () => Date.parse('2026-01-01T00:00:00Z') } as unknown as HandlerDeps;
  return new Dispatcher({ access, handlers: systemHandlers(deps), onInternalError: (err) => assert.fail(String(err)) });
}

describe('dispatcher: long messages', () => {
  it('50,000 pins: every one answered in order, each counted once, with turns of the event loop in between', async () => {
    const counted = { n: 0 };
    const parsed = parseFrameValue(
      Array.from({ length: 50_000 }, (_, i) => ({ typ: 'sys', act: 'pin', cid: i })),
      50_000,
    );
    assert.ok(parsed.ok);
    let turns = 0;
    let running = true;
    const tick = (): void => {
      if (!running) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const results = await dispatcher(counted).dispatch(parsed.items, { principal, connection: null });
    running = false;
    assert.equal(results.length, 50_000);
    assert.ok(results.every((r, i) => r.res === 'suc' && r.cid === i));
    assert.equal(counted.n, 50_000);
    assert.ok(turns >= 2, `the event loop turned ${turns} times while the message ran`);
  });

  it('unknown and invalid actions are counted like known ones', async () => {
    const counted = { n: 0 };
    const parsed = parseFrameValue([{ typ: 'sys', act: 'nope' }, { typ: 1 }, 'x', { typ: 'zzz', act: 'a' }]);
    assert.ok(parsed.ok);
    const results = await dispatcher(counted).dispatch(parsed.items, { principal, connection: null });
    assert.deepEqual(
      results.map((r) => r.res),
      ['err', 'err', 'err', 'err'],
    );
    assert.equal(counted.n, 4);
  });
});
