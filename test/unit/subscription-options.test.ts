/**
 * Subscription options (transport/actions/subscription-options.ts) and the v1 shape encodings
 * (domain/hivekit-shapes.ts): parsing, the partial update rule of compat 5.6, and the
 * translation both ways.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseV1Shape, toV1Shape } from '../../internal/domain/hivekit-shapes.js';
import type { SubscriptionOptions } from '../../internal/domain/subscription.js';
import { parseSubscriptionOptions, updateSubscriptionOptions, wantsInitialPush } from '../../internal/transport/actions/subscription-options.js';
import { containsPoint } from '../../internal/geo/contains.js';

const limits = { maxVertices: 100, maxConditions: 10 };

describe('v1 shape encodings', () => {
  it('translates rectangles (x = longitude, y = latitude), circles and polygons, and back exactly', () => {
    const rec = parseV1Shape('rec', { x1: 13, y1: 52, x2: 14, y2: 53 }, 100, 'dat.sha');
    assert.deepEqual(rec, { w: 13, n: 53, e: 14, s: 52 });
    // compat 4.2: the rectangle holds lon 13.404954, lat 52.520008 and not lon 13, lat 51.
    assert.equal(containsPoint(rec, 13.404954, 52.520008), true);
    assert.equal(containsPoint(rec, 13, 51), false);
    assert.deepEqual(parseV1Shape('rec', { west: 13, north: 53, east: 14, south: 52 }, 100, 'dat.sha'), rec);
    assert.deepEqual(toV1Shape(rec), { sty: 'rec', sha: { x1: 13, y1: 52, x2: 14, y2: 53 } });
    const pol = { points: [{ x: 51, y: 10 }, { x: 54, y: 10 }, { x: 52, y: 12 }] };
    assert.deepEqual(toV1Shape(parseV1Shape('pol', pol, 100, 'dat.sha')), { sty: 'pol', sha: pol });
    assert.deepEqual(toV1Shape(parseV1Shape('cir', { cx: 1, cy: 2, r: 3 }, 100, 'dat.sha')), { sty: 'cir', sha: { cx: 1, cy: 2, r: 3 } });
  });

  it('round-trips any valid rectangle and circle', () => {
    const lon = fc.double({ min: -180, max: 180, noNaN: true });
    const lat = fc.double({ min: -89, max: 89, noNaN: true });
    fc.assert(
      fc.property(lon, lat, fc.double({ min: 1, max: 1e6, noNaN: true }), (cx, cy, r) => {
        const sha = { cx, cy, r };
        assert.deepEqual(toV1Shape(parseV1Shape('cir', sha, 100, 'dat.sha')).sha, sha);
      }),
    );
    fc.assert(
      fc.property(lon, lon, lat, fc.double({ min: 0.001, max: 1, noNaN: true }), (x1, x2, y1, dy) => {
        fc.pre(x1 !== x2 && !(x1 === 180 && x2 === -180));
        const sha = { x1, y1, x2, y2: y1 + dy };
        assert.deepEqual(toV1Shape(parseV1Shape('rec', sha, 100, 'dat.sha')).sha, sha);
      }),
    );
  });

  it('names the v1 keys in its errors', () => {
    assert.throws(() => parseV1Shape('rec', { x1: 13, y1: 52, x2: 14 }, 100, 'dat.sha'), { message: /dat\.sha lacks y2; a rectangle is \{x1: west/ });
    assert.throws(() => parseV1Shape('rec', { x1: 190, y1: 52, x2: 14, y2: 53 }, 100, 'dat.sha'), { message: /dat\.sha\.x1 must be a longitude/ });
    assert.throws(() => parseV1Shape('pol', { points: 'no' }, 100, 'dat.sha'), { message: /dat\.sha\.points must be an array of points/ });
    assert.throws(() => parseV1Shape('pol', { points: [1, 2, 3] }, 100, 'dat.sha'), { message: /dat\.sha\.points\[0\] must be a point/ });
    assert.throws(() => parseV1Shape('cir', [], 100, 'dat.sha'), { message: /dat\.sha must be the shape data of a circle/ });
  });
});

describe('subscription options', () => {
  it('parses the kinds of compat 5.2 as the client sends them', () => {
    assert.deepEqual(parseSubscriptionOptions({ typ: 'obj', sty: 'rea' }, limits), { kind: 'objects', scope: { kind: 'realm' }, conditions: [] });
    assert.deepEqual(parseSubscriptionOptions({ typ: 'obj', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, exe: true, custom: 1 }, limits), {
      kind: 'objects',
      scope: { kind: 'shape', shape: { cx: 1, cy: 2, r: 3 } },
      conditions: [],
    });
    assert.deepEqual(parseSubscriptionOptions({ typ: 'obj', sty: 'tar', sta: { id: 'car/1', r: 2000 }, atr: ['$id!="car/1"'] }, limits), {
      kind: 'objects',
      scope: { kind: 'target', target: 'car/1', radius: 2000 },
      conditions: [{ field: 'id', op: '!=', value: 'car/1' }],
    });
    for (const [typ, kind] of [
      ['are', 'areas'],
      ['rea', 'realmData'],
      ['sys', 'realmEvents'],
    ] as const) {
      // sty, sha and atr are not applied to these kinds (12.5), not even validated.
      assert.deepEqual(parseSubscriptionOptions({ typ, sty: 'cir', sha: 'junk', atr: 5 }, limits), { kind });
    }
  });

  it('applies the partial update rule of compat 5.6', () => {
    const circle = parseSubscriptionOptions({ typ: 'obj', sty: 'cir', sha: { cx: 0, cy: 0, r: 110 }, atr: ['a=1'] }, limits);
    // sty "rea" without sha keeps the shape; atr [] clears the conditions.
    assert.deepEqual(updateSubscriptionOptions(circle, { typ: 'obj', sty: 'rea', atr: [] }, limits), {
      kind: 'objects',
      scope: { kind: 'shape', shape: { cx: 0, cy: 0, r: 110 } },
      conditions: [],
    });
    // atr absent keeps the conditions; a new shape replaces the old one.
    assert.deepEqual(updateSubscriptionOptions(circle, { typ: 'obj', sty: 'rec', sha: { x1: 0, y1: 0, x2: 1, y2: 1 } }, limits), {
      kind: 'objects',
      scope: { kind: 'shape', shape: { w: 0, n: 1, e: 1, s: 0 } },
      conditions: [{ field: 'a', op: '=', value: 1, target: 'data' }],
    });
    // A target replaces the shape; nothing at all keeps everything.
    const target = updateSubscriptionOptions(circle, { sty: 'tar', sta: { id: 'x', r: 5 } }, limits);
    assert.deepEqual(target.kind === 'objects' && target.scope, { kind: 'target', target: 'x', radius: 5 });
    assert.deepEqual(updateSubscriptionOptions(circle, {}, limits), circle);
    assert.deepEqual(updateSubscriptionOptions(circle, undefined, limits), circle);
    const areas: SubscriptionOptions = { kind: 'areas' };
    assert.equal(updateSubscriptionOptions(areas, { typ: 'are', sty: 'cir' }, limits), areas);
  });

  it('exe is true only when it is the boolean true', () => {
    assert.equal(wantsInitialPush({ exe: true }), true);
    for (const dat of [{ exe: 'true' }, { exe: 1 }, {}, null, undefined, 'exe']) assert.equal(wantsInitialPush(dat), false);
  });
});
