/** The v1 codec and subscription filters, without sockets. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LocusError } from '../../internal/errors.js';
import type { SubscriptionEvent } from '../../internal/domain/events.js';
import { eventSubject, realmToken } from '../../internal/events/port.js';
import { filterPasses, parseSubscriptionFilter } from '../../internal/service/subscriptions.js';
import {
  encodeAuthFailure,
  encodeAuthSuccess,
  encodeEvent,
  encodeEventMessages,
  encodeFrameError,
  encodePush,
  encodeReplies,
  errorReply,
  parseFrame,
  successReply,
} from '../../internal/transport/actions/codec.js';

const loc: SubscriptionEvent = {
  kind: 'location',
  realm: 'r',
  // The object as stored (seen, tasks): the wire view shows neither.
  object: { id: 'o', label: null, location: { longitude: 1, latitude: 2, time: '2026-01-01T00:00:00.000Z' }, data: {}, seen: '2026-01-01T00:00:00.000Z', tasks: ['t1'] },
  connectionStatus: 'con',
};
const ent: SubscriptionEvent = { kind: 'entered', realm: 'r', object: 'o', area: 'A', time: '2026-01-01T00:00:00.000Z' };
const delArea: SubscriptionEvent = { kind: 'deleted', realm: 'r', area: 'A' };
const delObject: SubscriptionEvent = { kind: 'deleted', realm: 'r', object: 'o' };

describe('v1 codec', () => {
  it('parses a frame into messages: typ, act, cid as a string, the whole object as raw; cid and rid echoed as given', () => {
    const parsed = parseFrame('[{"typ":"obj","act":"rea","rea":"r","id":"x","cid":3,"rid":"q","extra":true},{"typ":"sys","act":"hbt"}]');
    assert.ok(parsed.ok);
    const [first, second] = parsed.items;
    assert.deepEqual(first, {
      ok: true,
      message: { typ: 'obj', act: 'rea', cid: '3', raw: { typ: 'obj', act: 'rea', rea: 'r', id: 'x', cid: 3, rid: 'q', extra: true } },
      echo: { cid: 3, rid: 'q' },
    });
    assert.deepEqual(second, { ok: true, message: { typ: 'sys', act: 'hbt', raw: { typ: 'sys', act: 'hbt' } }, echo: {} });
  });

  it('tells frame errors from message errors; a bad message keeps what can be read of it', () => {
    const notJson = parseFrame('{');
    assert.equal(!notJson.ok && notJson.error.code, 'invalid_json');
    const notArray = parseFrame('{"typ":"sys"}');
    assert.equal(!notArray.ok && notArray.error.code, 'invalid_request');
    const tooMany = parseFrame('[1,2,3]', 2);
    assert.equal(!tooMany.ok && tooMany.error.code, 'too_large');
    const bad = parseFrame('[1,{"typ":"obj","act":"rea","cid":"k","rid":{}},{"typ":"obj","cid":[1]},{"act":"x","cid":"n"}]');
    assert.ok(bad.ok);
    const summary = bad.items.map((item) => (item.ok ? 'ok' : [item.typ, item.act, item.echo, item.error.status]));
    assert.deepEqual(summary, [
      [null, null, {}, 400],
      ['obj', 'rea', { cid: 'k' }, 400],
      ['obj', null, {}, 400],
      [null, 'x', { cid: 'n' }, 400],
    ]);
  });

  it('encodes replies: typ, act, cid/rid when given, res, then the answer; errors with err and erc', () => {
    const message = { typ: 'obj', act: 'lis', cid: 'a', raw: {} };
    assert.equal(
      encodeReplies([successReply(message, { cid: 'a' }, { dat: {}, nxt: 'c1', res: 'no', cid: 'no' }), successReply({ typ: 'sys', act: 'hbt', raw: {} }, { cid: 7, rid: 'r' }, null)]),
      '[{"typ":"obj","act":"lis","cid":"a","res":"suc","dat":{},"nxt":"c1"},{"typ":"sys","act":"hbt","cid":7,"rid":"r","res":"suc"}]',
    );
    assert.equal(
      encodeReplies([errorReply('obj', 'rea', {}, new LocusError('not_found', 'unknown object x')), errorReply(null, null, { cid: 'z' }, new LocusError('invalid_request', 'bad'))]),
      '[{"typ":"obj","act":"rea","res":"err","err":"unknown object x","erc":404},{"cid":"z","res":"err","err":"bad","erc":400}]',
    );
    assert.equal(encodeFrameError(new LocusError('too_large', 'big')), '[{"res":"err","err":"big","erc":413}]');
    assert.equal(encodeAuthFailure(new LocusError('unauthorized', 'signature is invalid')), '[{"typ":"sys","act":"aut","res":"err","err":"signature is invalid","erc":401}]');
    assert.equal(encodeAuthFailure(new LocusError('rate_limited', 'slow down')), '[{"typ":"sys","act":"aut","res":"err","err":"slow down","erc":429}]');
    assert.equal(encodeAuthSuccess({ version: '1.2.3', buildDate: 'd' }), '[{"typ":"sys","act":"aut","res":"suc","dat":{"version":"1.2.3","buildDate":"d"}}]');
    assert.equal(encodePush([{ typ: 'sub', id: 's', uty: 'ful' }]), '[{"typ":"sub","id":"s","uty":"ful"}]');
  });

  it('encodes events once each and several as one message', () => {
    assert.equal(encodeEvent(ent), '{"typ":"evt","act":"ent","rea":"r","dat":{"object":"o","area":"A","time":"2026-01-01T00:00:00.000Z"}}');
    assert.equal(encodeEvent(ent), encodeEvent(ent));
    assert.deepEqual(encodeEventMessages([delObject, delArea]), [
      '[{"typ":"evt","act":"del","rea":"r","dat":{"object":"o"}},{"typ":"evt","act":"del","rea":"r","dat":{"area":"A"}}]',
    ]);
    assert.deepEqual((JSON.parse(encodeEvent(loc)) as { dat: unknown }).dat, {
      id: 'o',
      label: null,
      location: { longitude: 1, latitude: 2, time: '2026-01-01T00:00:00.000Z' },
      data: {},
      connectionStatus: 'con',
    });
  });

  it('cuts events sent together into messages of at most the limit, and encodes a list once for all who get it', () => {
    const events = [delObject, delArea, delObject, delArea];
    const one = (event: SubscriptionEvent): number => encodeEvent(event).length;
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
    assert.equal(eventSubject(ent), 'locus.r.evt.entered');
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
