import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRealmPatch, MAX_REALM_DATA_BYTES, parseRealmCreate, parseRealmPatch } from '../../internal/domain/realm-entity.js';
import { defaultRealmSettings } from '../../internal/domain/realm-settings.js';
import type { Realm } from '../../internal/domain/types.js';
import { expectLocusError } from '../support/locus-error.js';

const realm = (data: Realm['data'], label: string | null = 'L'): Realm => ({ id: 'r', tenant: 'default', name: 'r', label, data, settings: defaultRealmSettings, created: '2024-05-01T12:00:00.000Z' });

describe('parseRealmCreate', () => {
  it('takes a label and nested data; drops top-level nulls, keeps nested ones', () => {
    assert.deepEqual(parseRealmCreate('r', { label: 'Fleet', data: { a: [1, { b: null }], gone: null } }), {
      id: 'r',
      label: 'Fleet',
      data: { a: [1, { b: null }] },
    });
    assert.deepEqual(parseRealmCreate('r', { id: 'r', label: '' }), { id: 'r', label: '', data: {} });
  });

  it('requires a string label and refuses other keys, another id and a bad realm id', () => {
    expectLocusError(() => parseRealmCreate('r', {}), 'invalid_request', /label is required/);
    expectLocusError(() => parseRealmCreate('r', { label: null }), 'invalid_request', /label is required/);
    expectLocusError(() => parseRealmCreate('r', { label: 5 }), 'invalid_request', /label must be a string/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x'.repeat(1025) }), 'invalid_request', /at most 1024 characters/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', settings: {} }), 'invalid_request', /unknown key "settings"/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', id: 'other' }), 'invalid_id');
    expectLocusError(() => parseRealmCreate('', { label: 'x' }), 'invalid_id');
    expectLocusError(() => parseRealmCreate('r', [1]), 'invalid_request', /must be a JSON object/);
  });

  it('checks data: an object, named top-level keys, valid Unicode everywhere, depth and size', () => {
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: 'text' }), 'invalid_data', /data must be a JSON object/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { '': 1 } }), 'invalid_data', /must not be empty/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { a: { b: ['\ud800'] } } }), 'invalid_data', /data\.a\.b\[0\] holds an unpaired/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { a: { '\udc00': 1 } } }), 'invalid_data', /unpaired/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { a: Number.NaN } }), 'invalid_data', /finite number/);
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { a: new Date(0) } }), 'invalid_data', /JSON value/);
    let deep: unknown = 1;
    for (let i = 0; i < 7; i++) deep = [deep];
    assert.ok(parseRealmCreate('r', { label: 'x', data: { a: deep } }), '8 levels, the data object included');
    expectLocusError(
      () => parseRealmCreate('r', { label: 'x', data: { a: [deep] } }),
      'invalid_data',
      /^data\.a\[0\]\[0\]\[0\]\[0\]\[0\]\[0\]\[0\] is nested too deeply: data may hold at most 8 levels/,
    );
    // Realm data strings are bounded by the 64 KiB of the whole, not by the length of one object data string.
    assert.ok(parseRealmCreate('r', { label: 'x', data: { a: ['x'.repeat(20_000)] } }));
    const fits = 'x'.repeat(MAX_REALM_DATA_BYTES - '{"a":""}'.length);
    assert.ok(parseRealmCreate('r', { label: 'x', data: { a: fits } }), 'exactly 64 KiB');
    expectLocusError(() => parseRealmCreate('r', { label: 'x', data: { a: `${fits}é` } }), 'invalid_data', /65538 bytes as JSON; at most 65536/);
  });
});

describe('parseRealmPatch / applyRealmPatch', () => {
  it('keeps what an update does not name; a null label clears it', () => {
    assert.deepEqual(parseRealmPatch('r', {}), { id: 'r', patch: {} });
    assert.deepEqual(parseRealmPatch('r', { label: null, data: { a: null } }), { id: 'r', patch: { label: null, data: { a: null } } });
    const old = realm({ a: 1 });
    assert.deepEqual(applyRealmPatch(old, {}), old);
    assert.deepEqual(applyRealmPatch(old, { label: null }), realm({ a: 1 }, null));
  });

  it('merges at the top level: null removes, a nested value replaces the old one whole, __proto__ stays a plain key', () => {
    const { patch } = parseRealmPatch('r', JSON.parse('{"data":{"a":null,"n":{"y":2},"__proto__":{"p":1}}}'));
    const next = applyRealmPatch(realm({ a: 1, n: { x: 1 }, k: true }), patch);
    assert.deepEqual(next.data, JSON.parse('{"n":{"y":2},"k":true,"__proto__":{"p":1}}'));
    assert.ok(Object.hasOwn(next.data, '__proto__'));
    assert.equal(Object.getPrototypeOf(next.data), Object.prototype);
  });

  it('refuses a merge whose result exceeds the size limit', () => {
    const half = 'x'.repeat(40 * 1024);
    expectLocusError(() => applyRealmPatch(realm({ a: half }), { data: { b: half } }), 'invalid_data', /data after the merge is \d+ bytes/);
  });
});
