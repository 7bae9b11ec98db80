/**
 * Tasks, pure parts: the create and update bodies (domain/task-input.ts), the merge of an
 * update, the v1 record (transport/actions/v1-records.ts taskRecord) and the MongoDB document
 * (store/mongodb/task-store.ts), each written out by hand.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyTaskPatch, parseTaskCreate, parseTaskPatch } from '../../internal/domain/task-input.js';
import type { TaskRecord } from '../../internal/domain/task.js';
import { LocusError } from '../../internal/errors.js';
import { taskRecord } from '../../internal/transport/actions/v1-records.js';
import { taskFromDoc, taskToDoc } from '../../internal/store/mongodb/task-store.js';

const N0 = '2026-01-01T00:00:00.000Z';
const N1 = '2026-01-01T00:00:01.000Z';

function fails(body: () => unknown, message: string | RegExp, code = 'invalid_request'): void {
  assert.throws(body, (err: unknown) => {
    assert.ok(err instanceof LocusError);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

void describe('task bodies', () => {
  void it('a create fills the defaults and stamps a location without time', () => {
    assert.deepEqual(parseTaskCreate('t', { targetId: 'van' }, N0), {
      id: 't',
      label: null,
      description: null,
      status: '$hkt_not_started',
      steps: [],
      targetId: 'van',
      location: null,
      data: {},
      created: N0,
      updated: N0,
    });
    const placed = parseTaskCreate('t', { location: { longitude: 1, latitude: 2 }, steps: [{ label: 'a' }, { status: '$hkt_paused', data: { x: null, y: 1 } }], data: { gone: null, kept: 0 } }, N0);
    assert.deepEqual(placed.location, { longitude: 1, latitude: 2, time: N0 });
    assert.deepEqual(placed.steps, [
      { label: 'a', status: '$hkt_not_started', data: {} },
      { label: null, status: '$hkt_paused', data: { y: 1 } },
    ]);
    assert.deepEqual(placed.data, { kept: 0 });
  });

  void it('exactly one target: both, neither, or null are refused', () => {
    fails(() => parseTaskCreate('t', { targetId: 'a', location: { longitude: 1, latitude: 1 } }, N0), /^a task has either a target object \(targetId\) or a location, not both/);
    fails(() => parseTaskCreate('t', {}, N0), /^a task needs either a target object \(targetId\) or a location/);
    fails(() => parseTaskCreate('t', { targetId: null }, N0), /^targetId must be an object id; null is not allowed/, 'invalid_id');
    fails(() => parseTaskPatch('t', { location: null }, N0), /^location must be a location object; null is not allowed/, 'invalid_location');
    fails(() => parseTaskPatch('t', { targetId: 'a', location: { longitude: 1, latitude: 1 } }, N0), /not both/);
    assert.deepEqual(parseTaskPatch('t', {}, N0), {});
  });

  void it('status, steps, label and description are checked', () => {
    fails(() => parseTaskCreate('t', { targetId: 'a', status: '$hkt_done' }, N0), /^status must be one of "\$hkt_not_started", "\$hkt_in_progress", "\$hkt_completed", "\$hkt_failed", "\$hkt_canceled", "\$hkt_paused", "\$hkt_blocked" \(got the string "\$hkt_done"\)$/);
    fails(() => parseTaskCreate('t', { targetId: 'a', steps: [{ status: 1 }] }, N0), /^steps\[0\]\.status must be one of .* \(got 1\)$/);
    fails(() => parseTaskCreate('t', { targetId: 'a', steps: [null] }, N0), 'steps[0] must be a JSON object (got null)');
    fails(() => parseTaskCreate('t', { targetId: 'a', steps: [{ done: true }] }, N0), 'unknown key "done" in steps[0]; allowed: label, status, data');
    fails(() => parseTaskCreate('t', { targetId: 'a', steps: Array.from({ length: 1001 }, () => ({})) }, N0), 'steps has 1001 steps; at most 1000 are allowed');
    fails(() => parseTaskCreate('t', { targetId: 'a', description: 'é'.repeat(16_385) }, N0), 'description is too long: at most 16384 characters are allowed');
    assert.equal(parseTaskCreate('t', { targetId: 'a', description: '😀'.repeat(16_384) }, N0).description?.length, 32_768, 'characters are code points');
    fails(() => parseTaskCreate('t', { targetId: 'a', label: 'x'.repeat(1025) }, N0), 'label is too long: at most 1024 characters are allowed');
    fails(() => parseTaskCreate('t', { targetId: 'a', extra: 1 }, N0), /^unknown key "extra" in the request body/);
    fails(() => parseTaskCreate('', { targetId: 'a' }, N0), 'task id must not be empty', 'invalid_id');
  });

  void it('an update replaces given fields, merges data, and moves the target', () => {
    const old: TaskRecord = { id: 't', label: 'l', description: 'd', status: '$hkt_blocked', steps: [{ label: 's', status: '$hkt_not_started', data: {} }], targetId: 'van', location: null, data: { a: 1, b: 2 }, created: N0, updated: N0 };
    const next = applyTaskPatch(old, parseTaskPatch('t', { description: null, data: { a: null, c: 3 }, location: { longitude: 1, latitude: 2, time: N0 } }, N1), N1);
    assert.deepEqual(next, { ...old, description: null, targetId: null, location: { longitude: 1, latitude: 2, time: N0 }, data: { b: 2, c: 3 }, updated: N1 });
    const back = applyTaskPatch(next, parseTaskPatch('t', { targetId: 'bus', steps: [] }, N1), N1);
    assert.equal(back.targetId, 'bus');
    assert.equal(back.location, null);
    assert.deepEqual(back.steps, []);
    assert.equal(back.label, 'l');
    assert.equal(back.created, N0);
  });
});

void describe('task records', () => {
  const task: TaskRecord = {
    id: 'job',
    label: null,
    description: 'x',
    status: '$hkt_in_progress',
    steps: [{ label: null, status: '$hkt_completed', data: { w: 1 } }],
    targetId: null,
    location: { longitude: 2, latitude: 1, speed: 3, time: N0 },
    data: {},
    created: N0,
    updated: N1,
  };

  void it('v1: short keys, loc zero-filled, steps with long keys, lab and tid only when set', () => {
    assert.deepEqual(taskRecord(task), {
      id: 'job',
      dsc: 'x',
      sts: '$hkt_in_progress',
      stp: [{ status: '$hkt_completed', data: { w: 1 } }],
      loc: { gcs: '', lon: 2, lat: 1, acc: 0, spe: 3, hea: 0, alt: 0, alc: 0, tim: N0 },
      dat: {},
    });
    assert.deepEqual(Object.keys(taskRecord({ ...task, label: 'L', targetId: 'van', location: null })), ['id', 'lab', 'dsc', 'sts', 'stp', 'tid', 'loc', 'dat']);
  });

  void it('MongoDB: the document round-trips every field; JSON text keeps key order and __proto__', () => {
    const data = JSON.parse('{"z":1,"__proto__":{"a":[1,null]},"a":"x"}') as TaskRecord['data'];
    const full = { ...task, label: 'L', data };
    const doc = taskToDoc(full, 7, 2);
    assert.deepEqual(doc, {
      _id: 'job',
      s: 7,
      l: 'L',
      ds: 'x',
      st: '$hkt_in_progress',
      sp: '[{"label":null,"status":"$hkt_completed","data":{"w":1}}]',
      t: null,
      loc: '{"longitude":2,"latitude":1,"speed":3,"time":"2026-01-01T00:00:00.000Z"}',
      d: '{"z":1,"__proto__":{"a":[1,null]},"a":"x"}',
      c: N0,
      u: N1,
      v: 2,
    });
    const back = taskFromDoc(doc);
    assert.deepEqual(back, full);
    assert.deepEqual(Object.keys(back.data), ['z', '__proto__', 'a']);
  });
});
