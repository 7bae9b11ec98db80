/** The change stream: every listener gets every change, in registration order; one that throws harms no other. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AreaChange, ObjectChange } from '../../internal/domain/types.js';
import { ChangeStream, type ChangeListener } from '../../internal/service/changes.js';

const objectChange: ObjectChange = { realm: 'r', id: 'o', old: null, new: { id: 'o', label: null, location: null, data: {}, seen: null }, history: [], time: '2026-01-01T00:00:00.000Z' };
const areaChange: AreaChange = { realm: 'r', id: 'a', old: null, new: { id: 'a', label: null, shape: { cx: 0, cy: 0, r: 1 }, data: {} } };

function recorder(name: string, heard: string[], fails = false): ChangeListener {
  const hear = (what: string): void => {
    heard.push(`${name}:${what}`);
    if (fails) throw new Error(`${name} broke`);
  };
  return {
    objectsChanged: (realm, changes) => hear(`objects ${realm} ${changes.map((c) => c.id).join()}`),
    areaChanged: (realm, change) => hear(`area ${realm} ${change.id}`),
    realmDeleted: (realm) => hear(`deleted ${realm}`),
  };
}

describe('change stream', () => {
  it('hands each change to every listener in registration order', () => {
    const heard: string[] = [];
    const stream = new ChangeStream();
    stream.add(recorder('geofence', heard));
    stream.add(recorder('metrics', heard));
    stream.objectsChanged('r', [objectChange]);
    stream.areaChanged('r', areaChange);
    stream.realmDeleted('r');
    assert.deepEqual(heard, [
      'geofence:objects r o',
      'metrics:objects r o',
      'geofence:area r a',
      'metrics:area r a',
      'geofence:deleted r',
      'metrics:deleted r',
    ]);
  });

  it('isolates a listener that throws: the others still hear, the error is reported', () => {
    const heard: string[] = [];
    const errors: string[] = [];
    const stream = new ChangeStream((err) => errors.push((err as Error).message));
    stream.add(recorder('broken', heard, true));
    stream.add(recorder('metrics', heard));
    stream.objectsChanged('r', [objectChange]);
    stream.areaChanged('r', areaChange);
    stream.realmDeleted('r');
    assert.deepEqual(heard.filter((h) => h.startsWith('metrics')), ['metrics:objects r o', 'metrics:area r a', 'metrics:deleted r']);
    assert.deepEqual(errors, ['broken broke', 'broken broke', 'broken broke']);
  });

  it('stops handing changes to a removed listener', () => {
    const heard: string[] = [];
    const stream = new ChangeStream();
    const remove = stream.add(recorder('tracing', heard));
    stream.realmDeleted('one');
    remove();
    stream.realmDeleted('two');
    assert.deepEqual(heard, ['tracing:deleted one']);
  });
});
