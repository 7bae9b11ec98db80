/**
 * The sendToUrl body (instructions/delivery/hivekit-body.ts): the example of docs/instructions.md
 * ("sendToUrl delivery", "The request") is what the builder makes for its pair, and entries are
 * looked up from the realm as the runtime gives them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Area, TrackedObject } from '../../internal/domain/types.js';
import { entryContents, sendToUrlBody } from '../../internal/instructions/delivery/hivekit-body.js';
import { readRepoFile } from '../support/promql.js';

const bike: TrackedObject = {
  id: 'bike-7',
  label: null,
  location: { longitude: 13.4, latitude: 52.5, time: '2026-03-01T10:00:00.000Z' },
  data: { type: 'bicycle' },
  seen: '2026-03-01T10:00:00.120Z',
};
const car: TrackedObject = {
  id: 'car-2',
  label: 'Van',
  location: { longitude: 13.4001, latitude: 52.5, time: '2026-03-01T09:59:58.000Z' },
  data: { type: 'car' },
  seen: '2026-03-01T09:59:58.030Z',
  tasks: ['deliver-1'],
};
const depot: Area = { id: 'depot', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 200 }, data: { $hkt_color: '#62ec46' } };

describe('sendToUrl body', () => {
  it('is the example of docs/instructions.md for a bike within reach of a car', () => {
    const doc = readRepoFile('docs/instructions.md');
    const section = doc.slice(doc.indexOf('## sendToUrl delivery'));
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(example !== undefined, 'the section has a JSON example');
    const body = sendToUrlBody([{ kind: 'pair', a: 'bike-7', b: 'car-2', objects: [bike, car] }]);
    assert.deepEqual(JSON.parse(body), JSON.parse(example));
  });

  it('looks entries up: objects, pairs in order, areas as `are rea` shows them, gone ones as their id', () => {
    const objects = new Map([bike, car].map((o) => [o.id, o]));
    const contents = entryContents(
      [{ kind: 'object', id: 'car-2' }, { kind: 'pair', a: 'car-2', b: 'bike-7' }, { kind: 'area', id: 'depot' }, { kind: 'area', id: 'gone' }, { kind: 'object', id: 'gone' }],
      { object: (id) => objects.get(id) ?? null, area: (id) => (id === 'depot' ? depot : null) },
    );
    const sent = JSON.parse(sendToUrlBody(contents)) as Record<string, unknown>[] & { objects: { id: string }[] }[];
    assert.equal(sent.length, 5);
    assert.deepEqual(Object.keys(sent[0] ?? {}), ['id', 'lab', 'loc', 'dat', 'lastExternalUpdate']);
    assert.equal(sent[0]?.cst, undefined);
    assert.equal(sent[0]?.tds, undefined);
    assert.deepEqual(sent[1]?.objects.map((o) => o.id), ['car-2', 'bike-7']);
    assert.deepEqual(sent[2], { id: 'depot', lab: 'Depot', sty: 'cir', sha: sent[2]?.sha, dat: { $hkt_color: '#62ec46' } });
    assert.ok(sent[2]?.sha !== undefined);
    assert.deepEqual(sent.slice(3), [{ id: 'gone' }, { id: 'gone' }]);
    assert.equal(sendToUrlBody([]), '[]');
  });
});
