import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InstructionRecord } from '../../internal/domain/instruction.js';
import { applyInstructionPatch, instructionLeaseName, leaseExpiry } from '../../internal/domain/instruction-update.js';

const N0 = '2024-05-01T12:00:00.000Z';
const N1 = '2024-05-01T12:00:01.000Z';

const old: InstructionRecord = {
  id: 'a',
  label: 'A',
  source: 'when object(kind="van") then delete()',
  data: { keep: 1, drop: 'x' },
  created: N0,
  updated: N0,
  generation: 3,
  suspended: 'keeps failing',
};

void describe('applyInstructionPatch', () => {
  void it('label replaced, data merged (null removes), updated stamped; the rest kept; the input untouched', () => {
    const { record, restarted } = applyInstructionPatch(old, { label: null, data: { drop: null, added: [1] } }, N1);
    assert.equal(restarted, false);
    assert.deepEqual(record, { ...old, label: null, data: { keep: 1, added: [1] }, updated: N1 });
    assert.deepEqual(old.data, { keep: 1, drop: 'x' });
    assert.equal(applyInstructionPatch(old, {}, N1).record.data, old.data);
  });

  void it('a different source restarts: next generation, suspension cleared', () => {
    const { record, restarted } = applyInstructionPatch(old, { source: 'when object() then delete()' }, N1);
    assert.equal(restarted, true);
    assert.deepEqual(record, { ...old, source: 'when object() then delete()', generation: 4, suspended: null, updated: N1 });
  });

  void it('the same source again restarts nothing; a suspension given explicitly wins', () => {
    assert.deepEqual(applyInstructionPatch(old, { source: old.source }, N1), { record: { ...old, updated: N1 }, restarted: false });
    assert.equal(applyInstructionPatch(old, { source: 'x', suspended: 'still' }, N1).record.suspended, 'still');
    assert.equal(applyInstructionPatch(old, { suspended: null }, N1).record.suspended, null);
  });
});

void describe('instruction leases', () => {
  void it('one lease name per realm key', () => {
    assert.equal(instructionLeaseName('acme/fleet'), 'instructions:acme/fleet');
  });

  void it('expiry is now plus the time to live; a bad time or ttl is refused', () => {
    assert.equal(leaseExpiry(N0, 1500), Date.parse(N0) + 1500);
    assert.throws(() => leaseExpiry('soon', 1000), RangeError);
    assert.throws(() => leaseExpiry(N0, 0), RangeError);
    assert.throws(() => leaseExpiry(N0, Number.NaN), RangeError);
  });
});
