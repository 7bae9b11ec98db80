/** The v1 codec and subscription filters, without sockets. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import type { LocusEvent } from '../../internal/events/port.js';
import { eventSubject, realmToken } from '../../internal/events/port.js';
import { filterPasses, parseSubscriptionFilter } from '../../internal/service/subscriptions.js';
import {
  encodeAuthFailure,
  encodeEvent,
  encodeEventMessages,
  encodeMessageError,
  encodeResults,
  errorResult,
  parseMessage,
  successResult,
} from '../../internal/transport/actions/codec.js';

const loc: LocusEvent = {
  kind: 'loc',
  realm: 'r',
  object: { id: 'o', label: null, location: { longitude: 1, latitude: 2, time: '2026-01-01T00:00:00.000Z' }, data: {}, connectionStatus: 'con' },
};
const ent: LocusEvent = { kind: 'ent', realm: 'r', object: 'o', area: 'A', time: '2026-01-01T00:00:00.000Z' };
const delArea: LocusEvent = { kind: 'del', realm: 'r', area: 'A' };
const delObject: LocusEvent = { kind: 'del', realm: 'r', object: 'o' };

describe('v1 codec', () => {
  it('parses a message into actions, with dat defaulting to {}', () => {
    const parsed = parseMessage('[{"typ":"obj","act":"get","rea":"r","rid":3,"dat":{"id":"x"}},{"typ":"sys","act":"pin"}]');
    assert.deepEqual(parsed, {
      ok: true,
      actions: [
        { ok: true, action: { typ: 'obj', act: 'get', rea: 'r', rid: 3, dat: { id: 'x' } } },
        { ok: true, action: { typ: 'sys', act: 'pin', dat: {} } },
      ],
    });
  });

  it('tells message-level errors from action-level ones', () => {
    const notJson = parseMessage('{');
    assert.equal(notJson.ok, false);
    assert.equal(!notJson.ok && notJson.error.code, 'invalid_json');
    const notArray = parseMessage('{"typ":"sys"}');
    assert.equal(!notArray.ok && notArray.error.code, 'invalid_request');
    const bad = parseMessage('[1,{"typ":"obj","act":"get","rid":"k","rea":5}]');
    assert.ok(bad.ok);
    const [first, second] = bad.actions;
    assert.equal(first?.ok, false);
    assert.deepEqual(second && !second.ok ? [second.typ, second.act, second.rid] : null, ['obj', 'get', 'k']);
  });

  it('encodes results with rid and nxt only when present, in key order typ, act, res, dat, rid, nxt', () => {
    const action = { typ: 'obj', act: 'lis', rid: 'a', dat: {} };
    assert.equal(
      encodeResults([successResult(action, {}, 'c1'), successResult({ typ: 'sys', act: 'pin', dat: {} }, { time: 't' }, null)]),
      '[{"typ":"obj","act":"lis","res":"suc","dat":{},"rid":"a","nxt":"c1"},{"typ":"sys","act":"pin","res":"suc","dat":{"time":"t"}}]',
    );
    assert.equal(
      encodeResults([errorResult('obj', 'get', undefined, new LocusError('not_found', 'gone'))]),
      '[{"typ":"obj","act":"get","res":"err","dat":{"code":"not_found","message":"gone"}}]',
    );
    assert.equal(
      encodeMessageError(new LocusError('too_large', 'big')),
      '[{"typ":"sys","act":"err","res":"err","dat":{"code":"too_large","message":"big"}}]',
    );
    assert.equal(encodeAuthFailure('no'), '[{"typ":"sys","act":"aut","res":"err","dat":{"code":"unauthorized","message":"no"}}]');
  });

  it('encodes events once each and several as one message', () => {
    assert.equal(encodeEvent(ent), '{"typ":"evt","act":"ent","rea":"r","dat":{"object":"o","area":"A","time":"2026-01-01T00:00:00.000Z"}}');
    assert.equal(encodeEvent(ent), encodeEvent(ent));
    assert.deepEqual(encodeEventMessages([delObject, delArea]), [
      '[{"typ":"evt","act":"del","rea":"r","dat":{"object":"o"}},{"typ":"evt","act":"del","rea":"r","dat":{"area":"A"}}]',
    ]);
    assert.deepEqual((JSON.parse(encodeEvent(loc)) as { dat: unknown }).dat, (loc as { object: unknown }).object);
  });

  it('cuts events sent together into messages of at most the limit, and encodes a list once for all who get it', () => {
    const events = [delObject, delArea, delObject, delArea];
    const one = (event: LocusEvent): number => encodeEvent(event).length;
    // Room for the first two events (brackets and a comma), not for the third.
    const limit = 2 + one(delObject) + 1 + one(delArea);
    const texts = encodeEventMessages(events, limit);
    assert.deepEqual(
      texts.map((text) => JSON.parse(text) as unknown),
      [[delObject, delArea], [delObject, delArea]].map((group) => group.map((event) => JSON.parse(encodeEvent(event)) as unknown)),
    );
    assert.ok(texts.every((text) => text.length <= limit));
    assert.equal(encodeEventMessages(events, limit), texts);
    // An event longer than the limit still goes, alone.
    assert.deepEqual(encodeEventMessages([ent, delArea], 10), [`[${encodeEvent(ent)}]`, `[${encodeEvent(delArea)}]`]);
    assert.deepEqual(encodeEventMessages([]), []);
  });

  it('names subjects per realm, with the realm as one safe token', () => {
    assert.equal(eventSubject(ent), 'locus.r.evt.ent');
    assert.equal(realmToken('a.b *>c-d_é'), 'a%2Eb%20%2A%3Ec-d_%C3%A9');
  });
});

describe('subscription filters', () => {
  it('no filter passes everything', () => {
    const all = parseSubscriptionFilter({});
    for (const event of [loc, ent, delArea, delObject]) assert.equal(filterPasses(all, event), true);
  });

  it('an object filter passes events about those objects', () => {
    const f = parseSubscriptionFilter({ objects: ['o'] });
    assert.deepEqual([loc, ent, delArea, delObject].map((e) => filterPasses(f, e)), [true, true, false, true]);
    assert.equal(filterPasses(parseSubscriptionFilter({ objects: ['p'] }), loc), false);
  });

  it('an area filter passes only ent/exi of those areas; with objects, both must hold', () => {
    const f = parseSubscriptionFilter({ areas: ['A'] });
    assert.deepEqual([loc, ent, delArea, delObject].map((e) => filterPasses(f, e)), [false, true, false, false]);
    assert.equal(filterPasses(parseSubscriptionFilter({ areas: ['A'], objects: ['p'] }), ent), false);
    assert.equal(filterPasses(parseSubscriptionFilter({ areas: ['A'], objects: ['o'] }), ent), true);
  });

  it('rejects unknown keys, empty lists and bad ids', () => {
    assert.throws(() => parseSubscriptionFilter({ kinds: [] }), /unknown key "kinds"/);
    assert.throws(() => parseSubscriptionFilter({ objects: [] }), /non-empty array/);
    assert.throws(() => parseSubscriptionFilter({ areas: [''] }), /must not be empty/);
  });
});
