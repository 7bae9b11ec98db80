/** The v1 shape encodings (v1-shapes.ts) and records (v1-records.ts), without sockets. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConnectionStatus, TrackedObject } from '../../internal/domain/types.js';
import { LocusError } from '../../internal/errors.js';
import { subscriptionMessage } from '../../internal/transport/actions/subscription-pushes.js';
import { areaListEntry, areaRecord, objectListEntry, objectRecord } from '../../internal/transport/actions/v1-records.js';
import { shapeFromV1, shapeFromV1Keys, shapeToV1 } from '../../internal/transport/actions/v1-shapes.js';

/** The record of `o` as a subscription push carries it (a `ful` push of just that object). */
function pushRecord(o: TrackedObject, cst: ConnectionStatus): unknown {
  const message = subscriptionMessage({ kind: 'objects', subscription: 's', full: true, created: [o], updated: [], deleted: [], statusOf: () => cst }) as { obj: { cre: Record<string, unknown> } };
  return message.obj.cre[o.id];
}

const shapeError = (pattern: RegExp) => (err: unknown): boolean => err instanceof LocusError && err.code === 'invalid_shape' && pattern.test(err.message);

describe('v1 shapes', () => {
  it('translates rec/cir/pol to the domain and back exactly', () => {
    const rec = { x1: 13, y1: 52, x2: 14, y2: 53 };
    assert.deepEqual(shapeFromV1('rec', rec, 100), { w: 13, n: 53, e: 14, s: 52 });
    assert.deepEqual(shapeToV1(shapeFromV1('rec', rec, 100)), { sty: 'rec', sha: rec });
    const cir = { cx: 52.52, cy: 13.4, r: 500 };
    assert.deepEqual(shapeToV1(shapeFromV1('cir', cir, 100)), { sty: 'cir', sha: cir });
    const pol = { points: [{ x: 51, y: 13 }, { x: 52, y: 14 }, { x: 54, y: 13.5 }] };
    assert.deepEqual(shapeFromV1('pol', pol, 100), { points: [[51, 13], [52, 14], [54, 13.5]] });
    assert.deepEqual(shapeToV1(shapeFromV1('pol', pol, 100)), { sty: 'pol', sha: pol });
  });

  it('infers the kind from the keys of sha alone, west/north/east/south included', () => {
    assert.deepEqual(shapeFromV1Keys({ x1: 1, y1: 2, x2: 3, y2: 4 }, 10), { w: 1, n: 4, e: 3, s: 2 });
    assert.deepEqual(shapeFromV1Keys({ west: 1, north: 4, east: 3, south: 2 }, 10), { w: 1, n: 4, e: 3, s: 2 });
    assert.deepEqual(shapeFromV1Keys({ cx: 1, cy: 2, r: 3 }, 10), { cx: 1, cy: 2, r: 3 });
    assert.throws(() => shapeFromV1Keys({ qq: 1 }, 10), shapeError(/exactly one of/));
    assert.throws(() => shapeFromV1Keys({ cx: 1, cy: 2, r: 3, x1: 1 }, 10), shapeError(/exactly one of/));
  });

  it('names the v1 keys in its messages', () => {
    assert.throws(() => shapeFromV1('sq', {}, 10), (err: unknown) => err instanceof LocusError && /sty must be "rec"/.test(err.message));
    assert.throws(() => shapeFromV1('rec', { cx: 1, cy: 2, r: 3 }, 10), shapeError(/lacks x1, y1, x2, y2/));
    assert.throws(() => shapeFromV1('rec', { x1: 200, y1: 1, x2: 3, y2: 4 }, 10), shapeError(/sha\.x1 must be a longitude/));
    assert.throws(() => shapeFromV1('pol', { points: [{ x: 1, y: 100 }, { x: 2, y: 2 }, { x: 3, y: 1 }] }, 10), shapeError(/sha\.points\[0\]\.y must be a latitude/));
    assert.throws(() => shapeFromV1('pol', { points: [[1, 2]] }, 10), shapeError(/points\[0\] must be a point/));
  });
});

describe('v1 records', () => {
  const located: TrackedObject = {
    id: 'car',
    label: 'Car',
    location: { longitude: 13.4, latitude: 52.5, speed: 3, time: '2026-01-01T00:00:00.000Z' },
    data: { charge: 0.5, type: 'scooter' },
    seen: null,
  };
  const bare: TrackedObject = { id: 'bare', label: null, location: null, data: {}, seen: null };

  it('an object record: zero-filled loc, tim only with a fix, lab and dat only when set, cst last', () => {
    assert.equal(
      JSON.stringify(objectRecord(located, 'con')),
      '{"id":"car","lab":"Car","loc":{"gcs":"","lon":13.4,"lat":52.5,"acc":0,"spe":3,"hea":0,"alt":0,"alc":0,"tim":"2026-01-01T00:00:00.000Z"},"dat":{"charge":0.5,"type":"scooter"},"cst":"con"}',
    );
    assert.equal(JSON.stringify(objectRecord(bare, 'dis')), '{"id":"bare","loc":{"gcs":"","lon":0,"lat":0,"acc":0,"spe":0,"hea":0,"alt":0,"alc":0},"cst":"dis"}');
  });

  it('tds comes last, only when the object has task ids; obj rea and subscription pushes give the same record', () => {
    const tasked: TrackedObject = { ...located, tasks: ['task-1', 'task-2'] };
    const expected =
      '{"id":"car","lab":"Car","loc":{"gcs":"","lon":13.4,"lat":52.5,"acc":0,"spe":3,"hea":0,"alt":0,"alc":0,"tim":"2026-01-01T00:00:00.000Z"},"dat":{"charge":0.5,"type":"scooter"},"cst":"dis","tds":["task-1","task-2"]}';
    assert.equal(JSON.stringify(objectRecord(tasked, 'dis')), expected);
    assert.equal(JSON.stringify(pushRecord(tasked, 'dis')), expected);
    const bareTasked: TrackedObject = { ...bare, tasks: ['t'] };
    assert.equal(JSON.stringify(objectRecord(bareTasked, 'dis')), JSON.stringify(pushRecord(bareTasked, 'dis')));
    // An empty array (never stored, but possible in code) shows no tds.
    assert.equal('tds' in objectRecord({ ...bare, tasks: [] }, 'dis'), false);
    assert.equal('tds' in (pushRecord({ ...bare, tasks: [] }, 'dis') as object), false);
    for (const obj of [located, bare]) assert.equal(JSON.stringify(pushRecord(obj, 'con')), JSON.stringify(objectRecord(obj, 'con')));
    // Never in list entries.
    assert.deepEqual(objectListEntry(tasked, 'dis', null), { id: 'car', lab: 'Car', cst: 'dis' });
  });

  it('list entries carry exactly their keys', () => {
    assert.deepEqual(objectListEntry(located, 'dis', null), { id: 'car', lab: 'Car', cst: 'dis' });
    assert.deepEqual(objectListEntry(located, 'dis', ['charge', 'missing']), { id: 'car', lab: 'Car', cst: 'dis', dat: { charge: 0.5 } });
    assert.deepEqual(objectListEntry(bare, 'dis', null), { id: 'bare', lab: '', cst: 'dis' });
    assert.deepEqual(areaListEntry({ id: 'a', label: null, shapeType: 'polygon' }), { id: 'a', lab: '', sty: 'pol' });
    assert.deepEqual(areaRecord({ id: 'a', label: 'A', shape: { cx: 1, cy: 2, r: 3 }, data: {} }), { id: 'a', lab: 'A', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, dat: {} });
  });
});
