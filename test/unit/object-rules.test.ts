import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPatch, foldPatches, mergeData, sameTasks } from '../../internal/domain/object.js';
import type { Location, TrackedObject } from '../../internal/domain/types.js';

const fix = (longitude: number, time: string): Location => ({ longitude, latitude: 0, time });

describe('mergeData', () => {
  it('merges key by key and removes null keys without mutating', () => {
    const old = { a: 1, b: 'x', c: true };
    assert.deepEqual(mergeData(old, { b: null, d: 2, zz: null }), { a: 1, c: true, d: 2 });
    assert.deepEqual(old, { a: 1, b: 'x', c: true });
  });
  it('keeps __proto__ an ordinary key', () => {
    const merged = mergeData({}, JSON.parse('{"__proto__": "x", "k": 1}') as Record<string, string | number>);
    assert.equal(Object.getPrototypeOf(merged), Object.prototype);
    assert.deepEqual(Object.keys(merged).sort(), ['__proto__', 'k']);
    assert.equal(JSON.stringify(merged), '{"__proto__":"x","k":1}');
    // Into existing data, and out of it again.
    const old = JSON.parse('{"a": 1, "__proto__": "y"}') as Record<string, string | number>;
    const added = mergeData({ a: 1 }, JSON.parse('{"__proto__": "x"}') as Record<string, string | number>);
    assert.equal(Object.getPrototypeOf(added), Object.prototype);
    assert.equal(JSON.stringify(added), '{"a":1,"__proto__":"x"}');
    assert.equal(JSON.stringify(mergeData(old, { b: 2 })), '{"a":1,"__proto__":"y","b":2}');
    assert.equal(JSON.stringify(mergeData(old, JSON.parse('{"__proto__": null}') as Record<string, null>)), '{"a":1}');
    assert.equal(JSON.stringify(old), '{"a":1,"__proto__":"y"}');
  });
  it('keeps the order of keys: old keys in place, new keys after, removed and re-added keys last', () => {
    assert.deepEqual(Object.keys(mergeData({ a: 1, b: 2, c: 3 }, { d: 4, b: 5 })), ['a', 'b', 'c', 'd']);
    assert.deepEqual(Object.keys(mergeData({ a: 1, b: 2 }, { a: null })), ['b']);
    // A new object's data drops null keys.
    assert.deepEqual(mergeData({}, { a: 1, b: null }), { a: 1 });
  });
});

describe('foldPatches', () => {
  it('keeps first-appearance order, every fix, the newest fix and the last label', () => {
    const folded = foldPatches([
      { id: 'b', label: 'first', location: fix(1, '2026-01-01T00:00:10.000Z'), data: { x: 1, y: 1 } },
      { id: 'a', label: 'A' },
      { id: 'b', location: fix(3, '2026-01-01T00:00:30.000Z') },
      { id: 'b', label: null, location: fix(2, '2026-01-01T00:00:20.000Z'), data: { x: null } },
    ]);
    assert.deepEqual(folded.map((f) => f.id), ['b', 'a']);
    const b = folded[0];
    assert.ok(b);
    assert.equal(b.label, null);
    assert.deepEqual(b.data, { x: null, y: 1 });
    assert.equal(b.fixes.length, 3);
    assert.equal(b.latest?.longitude, 3);
  });
  it('on equal times the later entry wins', () => {
    const [f] = foldPatches([
      { id: 'a', location: fix(1, '2026-01-01T00:00:00.000Z') },
      { id: 'a', location: fix(2, '2026-01-01T00:00:00.000Z') },
    ]);
    assert.equal(f?.latest?.longitude, 2);
  });
});

describe('applyPatch', () => {
  const now = '2026-05-05T00:00:00.000Z';
  const stored: TrackedObject = {
    id: 'o',
    label: 'L',
    location: fix(5, '2026-01-01T00:00:30.000Z'),
    data: { a: 1 },
    seen: '2026-01-01T00:00:30.000Z',
  };
  it('an older fix never replaces a newer location, but marks the object seen', () => {
    const [p] = foldPatches([{ id: 'o', location: fix(9, '2026-01-01T00:00:29.999Z') }]);
    assert.ok(p);
    const next = applyPatch(stored, p, now);
    assert.equal(next.location?.longitude, 5);
    assert.equal(next.seen, now);
  });
  it('an equal-time fix replaces (later write wins)', () => {
    const [p] = foldPatches([{ id: 'o', location: fix(9, '2026-01-01T00:00:30.000Z') }]);
    assert.ok(p);
    assert.equal(applyPatch(stored, p, now).location?.longitude, 9);
  });
  it('a write without a location keeps seen and location', () => {
    const [p] = foldPatches([{ id: 'o', data: { a: null } }]);
    assert.ok(p);
    assert.deepEqual(applyPatch(stored, p, now), { ...stored, data: {} });
  });
  it('creates a new object', () => {
    const [p] = foldPatches([{ id: 'n', label: 'N' }]);
    assert.ok(p);
    assert.deepEqual(applyPatch(null, p, now), { id: 'n', label: 'N', location: null, data: {}, seen: null });
  });
});

describe('task ids (tds)', () => {
  const now = '2026-05-05T00:00:00.000Z';
  const apply = (old: TrackedObject | null, ...patches: Parameters<typeof foldPatches>[0]): TrackedObject => {
    const [p] = foldPatches(patches);
    assert.ok(p);
    return applyPatch(old, p, now);
  };
  const withTasks: TrackedObject = { id: 'o', label: null, location: null, data: {}, seen: null, tasks: ['t1', 't2'] };

  it('the last tasks given in a batch win; other patches of the id do not touch them', () => {
    const [p] = foldPatches([{ id: 'o', tasks: ['a'] }, { id: 'o', label: 'L' }, { id: 'o', tasks: ['b', 'c'] }, { id: 'o', data: { x: 1 } }]);
    assert.deepEqual(p?.tasks, ['b', 'c']);
    const [none] = foldPatches([{ id: 'o', label: 'L' }]);
    assert.equal(none !== undefined && 'tasks' in none, false);
  });
  it('given tasks replace the old ones, in order; [] clears them (the key goes); absent keeps them', () => {
    assert.deepEqual(apply(withTasks, { id: 'o', tasks: ['t3', 't1'] }).tasks, ['t3', 't1']);
    const cleared = apply(withTasks, { id: 'o', tasks: [] });
    assert.deepEqual(cleared, { id: 'o', label: null, location: null, data: {}, seen: null });
    assert.equal('tasks' in cleared, false);
    const kept = apply(withTasks, { id: 'o', label: 'L', location: fix(1, '2026-01-01T00:00:00.000Z') });
    assert.equal(kept.tasks, withTasks.tasks, 'the same array when not given');
    assert.equal(kept.label, 'L');
  });
  it('the same ids keep the old array (the store then writes nothing); a new object gets them; [] on one without gives none', () => {
    assert.equal(apply(withTasks, { id: 'o', tasks: ['t1', 't2'] }).tasks, withTasks.tasks);
    assert.deepEqual(apply(null, { id: 'n', tasks: ['t1'] }), { id: 'n', label: null, location: null, data: {}, seen: null, tasks: ['t1'] });
    const bare = apply(null, { id: 'n', tasks: [] });
    assert.equal('tasks' in bare, false);
    // An object without tasks keeps exactly its keys through writes without them.
    assert.deepEqual(Object.keys(apply(null, { id: 'n', label: 'x', data: { a: 1 } })), ['id', 'label', 'location', 'data', 'seen']);
  });
  it('sameTasks: absent equals empty; order and every id count', () => {
    assert.equal(sameTasks(undefined, undefined), true);
    assert.equal(sameTasks(undefined, []), true);
    assert.equal(sameTasks(['a'], ['a']), true);
    assert.equal(sameTasks(['a', 'b'], ['b', 'a']), false);
    assert.equal(sameTasks(['a'], ['a', 'a']), false);
    assert.equal(sameTasks(['a'], undefined), false);
    assert.equal(sameTasks(['a'], ['b']), false);
  });
});
