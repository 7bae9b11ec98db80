import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAttributeConditions } from '../../internal/domain/attribute-conditions.js';
import { matchesFilter } from '../../internal/domain/filter.js';
import type { TrackedObject } from '../../internal/domain/types.js';
import { LocusError } from '../../internal/errors.js';

const obj = (id: string, label: string | null, data: TrackedObject['data']): TrackedObject => ({ id, label, location: null, data, seen: null });

describe("Hivekit attribute conditions (atr)", () => {
  it('reads the forms of the client suite: quoted strings, numbers, $id', () => {
    const conditions = parseAttributeConditions(['type="scooter"', 'testValue>5', '$id!="obj-1"'], 100);
    assert.equal(matchesFilter(obj('obj-2', null, { type: 'scooter', testValue: 6 }), conditions), true);
    assert.equal(matchesFilter(obj('obj-1', null, { type: 'scooter', testValue: 6 }), conditions), false);
    assert.equal(matchesFilter(obj('obj-2', null, { type: 'scooter', testValue: 5 }), conditions), false);
    assert.equal(matchesFilter(obj('obj-2', null, { type: 'car', testValue: 9 }), conditions), false);
  });

  it('a bare id or label is a data property; $label is the label', () => {
    const byData = parseAttributeConditions(['id="x"'], 100);
    assert.equal(matchesFilter(obj('x', null, {}), byData), false);
    assert.equal(matchesFilter(obj('y', null, { id: 'x' }), byData), true);
    const byLabel = parseAttributeConditions(['$label="Truck"'], 100);
    assert.equal(matchesFilter(obj('y', 'Truck', {}), byLabel), true);
    assert.equal(matchesFilter(obj('y', null, { label: 'Truck' }), byLabel), false);
  });

  it('no conditions: undefined, null or []', () => {
    assert.deepEqual(parseAttributeConditions(undefined, 10), []);
    assert.deepEqual(parseAttributeConditions([], 10), []);
  });

  for (const [bad, message] of [
    ['type="car"', /must be an array/],
    [[5], /\[0\] must be a condition string/],
    [['type'], /\[0\] .*has no operator/],
    [['a=1,b=2'], /more than one condition/],
    [['$name="x"'], /unknown field \$name/],
    [['a=1', 'b=2', 'c=3'], /at most 2/],
  ] as const) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      assert.throws(
        () => parseAttributeConditions(bad, 2),
        (err: unknown) => err instanceof LocusError && err.code === 'invalid_filter' && message.test(err.message),
      );
    });
  }
});
