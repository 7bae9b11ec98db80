/**
 * Which v1 messages get a reply (decisions "Replies to messages without `cid`", compat 1.3
 * and 3.5): every message, echoing its `cid` or `rid` when it has one, except a successful
 * `set` without either (Hivekit's fire-and-forget write) and a successful `set` over HTTP.
 * Errors always. The dispatcher alone, over a fake Access, on a socket and over HTTP.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/authenticator.js';
import { invalid } from '../../internal/errors.js';
import type { Access } from '../../internal/service/access.js';
import { parseFrameValue } from '../../internal/transport/actions/codec.js';
import { Dispatcher } from '../../internal/transport/actions/dispatcher.js';
import type { V1Caller, V1Connection, V1HandlerTable } from '../../internal/transport/actions/v1-handler.js';

const principal: Principal = { tokenId: 't', kind: 'token', tenant: 'default', realm: 'r', scope: 'write' };

/** `tst/lis` answers, `tst/set` answers as `obj set` does (null), `tst/bad` fails. */
const handlers: V1HandlerTable = {
  tst: {
    lis: { realm: 'none', need: 'R', run: () => Promise.resolve({ dat: { a: 1 } }) },
    set: { realm: 'none', need: 'U', run: () => Promise.resolve(null) },
    bad: { realm: 'none', need: 'R', run: () => Promise.reject(invalid('bad dat')) },
  },
};

const dispatcher = new Dispatcher({
  access: { countAction: () => Promise.resolve() } as unknown as Access,
  handlers,
  onInternalError: (err) => assert.fail(String(err)),
});

const socket: V1Connection = { id: 'c', principal, push: () => undefined, pushSubscriptions: () => undefined, onClose: () => undefined };
const callers: Record<'socket' | 'http', V1Caller> = {
  socket: { principal, connection: socket },
  http: { principal, connection: null },
};

async function replies(caller: V1Caller, frame: unknown[]): Promise<unknown[]> {
  const parsed = parseFrameValue(frame);
  assert.ok(parsed.ok);
  return dispatcher.dispatch(parsed.items, caller);
}

describe('v1 replies with and without cid', () => {
  for (const [name, caller] of Object.entries(callers)) {
    it(`${name}: a message without cid gets its reply without cid, in order`, async () => {
      assert.deepEqual(await replies(caller, [{ typ: 'tst', act: 'lis' }, { typ: 'tst', act: 'lis', cid: 'x' }]), [
        { typ: 'tst', act: 'lis', res: 'suc', dat: { a: 1 } },
        { typ: 'tst', act: 'lis', cid: 'x', res: 'suc', dat: { a: 1 } },
      ]);
    });

    it(`${name}: a successful set without cid gets no reply; the messages around it get theirs`, async () => {
      assert.deepEqual(await replies(caller, [{ typ: 'tst', act: 'lis' }, { typ: 'tst', act: 'set' }, { typ: 'tst', act: 'lis', rid: 2 }]), [
        { typ: 'tst', act: 'lis', res: 'suc', dat: { a: 1 } },
        { typ: 'tst', act: 'lis', rid: 2, res: 'suc', dat: { a: 1 } },
      ]);
    });

    it(`${name}: a failed message gets its error, with or without cid, with its own typ and act`, async () => {
      assert.deepEqual(await replies(caller, [{ typ: 'tst', act: 'bad' }, { typ: 'tst', act: 'nope' }, { typ: 'tst', act: 'bad', cid: 'y' }]), [
        { typ: 'tst', act: 'bad', res: 'err', err: 'bad dat', erc: 400 },
        { typ: 'tst', act: 'nope', res: 'err', err: 'unknown act "nope" for typ tst; known: lis, set, bad', erc: 400 },
        { typ: 'tst', act: 'bad', cid: 'y', res: 'err', err: 'bad dat', erc: 400 },
      ]);
    });
  }

  it('a successful set with cid or rid: its reply on a socket, none over HTTP (the client makes its own)', async () => {
    const frame = [{ typ: 'tst', act: 'set', cid: 's' }, { typ: 'tst', act: 'set', rid: 'r' }];
    assert.deepEqual(await replies(callers.socket, frame), [
      { typ: 'tst', act: 'set', cid: 's', res: 'suc' },
      { typ: 'tst', act: 'set', rid: 'r', res: 'suc' },
    ]);
    assert.deepEqual(await replies(callers.http, frame), []);
  });
});
