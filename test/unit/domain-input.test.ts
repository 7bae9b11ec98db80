import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LocusError, type ErrorCode } from '../../internal/errors.js';
import { parseAreaCreate, parseAreaPatch } from '../../internal/domain/area-input.js';
import { MAX_DATA_DEPTH, parseData, parseDataPatch, sameDataValue } from '../../internal/domain/data.js';
import { parseId, quote } from '../../internal/domain/ids.js';
import { parseLocation } from '../../internal/domain/location.js';
import { MAX_TASKS, parseBulkBody, parseObjectBody, parseTasks } from '../../internal/domain/object-input.js';
import { defaultRealmSettings, parseRealmSettings } from '../../internal/domain/realm-settings.js';
import { normalizeTime } from '../../internal/domain/time.js';
import { expectLocusError } from '../support/locus-error.js';

const NOW = '2024-05-01T12:00:00.000Z';

function rejects(fn: () => unknown, code: ErrorCode, message?: RegExp | string): LocusError {
  return expectLocusError(fn, code, message);
}

describe('quote', () => {
  it('quotes short strings and cuts long ones to 64 characters', () => {
    assert.equal(quote('foo'), '"foo"');
    assert.equal(quote('a'.repeat(64)), `"${'a'.repeat(64)}"`);
    assert.equal(quote('a'.repeat(1000)), `"${'a'.repeat(64)}"…`);
    // never splits a surrogate pair
    assert.equal(quote('🚗'.repeat(100)), `"${'🚗'.repeat(64)}"…`);
    assert.equal(quote('🚗'.repeat(40)), `"${'🚗'.repeat(40)}"`); // 80 code units, 40 characters
  });
});

describe('parseId', () => {
  it('accepts identifiers of 1–256 UTF-8 bytes, slashes and Unicode included', () => {
    for (const id of ['a', 'vehicle/17', '車両/17', '🚗', 'a b', 'x'.repeat(256), 'é'.repeat(128), '🚗'.repeat(64)]) {
      assert.equal(parseId(id, 'object'), id);
    }
  });

  it('rejects values that are not strings', () => {
    rejects(() => parseId(17, 'object'), 'invalid_id', 'object id must be a string (got 17)');
    rejects(() => parseId(null, 'area'), 'invalid_id', 'area id must be a string (got null)');
    rejects(() => parseId(undefined, 'realm'), 'invalid_id', /^realm id must be a string/);
    rejects(() => parseId(['a'], 'token'), 'invalid_id', /^token id must be a string \(got an array\)/);
  });

  it('rejects an empty id', () => {
    rejects(() => parseId('', 'object'), 'invalid_id', 'object id must not be empty');
  });

  it('rejects ids longer than 256 UTF-8 bytes, counting bytes not characters', () => {
    rejects(() => parseId('x'.repeat(257), 'object'), 'invalid_id', /^object id is too long: at most 256 UTF-8 bytes/);
    rejects(() => parseId(`${'é'.repeat(128)}a`, 'object'), 'invalid_id', /too long/); // 257 bytes, 129 characters
    rejects(() => parseId(`${'🚗'.repeat(64)}a`, 'object'), 'invalid_id', /too long/); // 257 bytes
    rejects(() => parseId('車'.repeat(86), 'realm'), 'invalid_id', /too long/); // 258 bytes, 86 characters
  });

  it('never echoes a huge id', () => {
    const err = rejects(() => parseId('y'.repeat(100_000), 'object'), 'invalid_id');
    assert.ok(!err.message.includes('yyyy'));
  });

  it('rejects control characters: C0, DEL and C1', () => {
    rejects(() => parseId('a\u0000b', 'object'), 'invalid_id', 'object id must not contain control characters (found U+0000 at position 1)');
    rejects(() => parseId('a\nb', 'object'), 'invalid_id', /U\+000A/);
    rejects(() => parseId('\u007f', 'object'), 'invalid_id', /U\+007F/);
    rejects(() => parseId('x\u0085', 'object'), 'invalid_id', /U\+0085/);
    rejects(() => parseId('\u009f', 'object'), 'invalid_id', /U\+009F/);
    assert.equal(parseId('\u00a0', 'object'), '\u00a0'); // NBSP is not a control character
  });

  it('rejects lone surrogates', () => {
    rejects(() => parseId('a\ud800', 'object'), 'invalid_id', /unpaired UTF-16 surrogate/);
    rejects(() => parseId('\udc00a', 'object'), 'invalid_id', /unpaired/);
    rejects(() => parseId('\udc00\ud800', 'object'), 'invalid_id', /unpaired/); // reversed pair
  });
});

describe('parseDataPatch / parseData', () => {
  it('accepts numbers, strings, booleans and null', () => {
    const data = { n: 1.5, s: 'x', t: true, f: false, z: null, '': undefined } as Record<string, unknown>;
    delete data[''];
    assert.deepEqual(parseDataPatch(data, 'data'), { n: 1.5, s: 'x', t: true, f: false, z: null });
    assert.deepEqual(parseDataPatch({}, 'data'), {});
  });

  it('parseData drops keys set to null', () => {
    assert.deepEqual(parseData({ a: 1, b: null, c: 'x' }, 'data'), { a: 1, c: 'x' });
  });

  it('keeps a "__proto__" key as an ordinary own key', () => {
    const input: unknown = JSON.parse('{"__proto__": {"polluted": 1, "__proto__": {"deep": 2}}, "ok": 1}');
    const nested = parseDataPatch(input, 'data');
    assert.equal(Object.getPrototypeOf(nested), Object.prototype);
    assert.deepEqual(Object.keys(nested), ['__proto__', 'ok']);
    const inner = Object.getOwnPropertyDescriptor(nested, '__proto__')?.value as Record<string, unknown>;
    assert.deepEqual(Object.keys(inner), ['polluted', '__proto__']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const result = parseDataPatch(JSON.parse('{"__proto__": "x", "constructor": 2}'), 'data');
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__', 'constructor']);
    assert.equal(Object.getOwnPropertyDescriptor(result, '__proto__')?.value, 'x');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const created = parseData(JSON.parse('{"__proto__": 5}'), 'data');
    assert.deepEqual(Object.keys(created), ['__proto__']);
  });

  it('rejects anything but a plain object', () => {
    rejects(() => parseDataPatch(null, 'data'), 'invalid_data', 'data must be a JSON object (got null)');
    rejects(() => parseDataPatch([1], 'data'), 'invalid_data', 'data must be a JSON object (got an array)');
    rejects(() => parseDataPatch('x', 'objects[2].data'), 'invalid_data', /^objects\[2\]\.data must be a JSON object/);
    rejects(() => parseDataPatch(new Date(0), 'data'), 'invalid_data');
  });

  it('takes nested objects and arrays as they are (nulls inside them too)', () => {
    const data = { ok: 1, $hkt_icon: { color: 'red', category: 'truck', filename: 't.png' }, list: [1, 'a', null, [true, {}]], empty: [], none: {} };
    assert.deepEqual(parseDataPatch(data, 'data'), data);
    assert.deepEqual(parseData({ a: { b: null }, c: null }, 'data'), { a: { b: null } });
    assert.deepEqual(parseDataPatch({ 'a b': { '': '', 'x\ty': 1 } }, 'data'), { 'a b': { '': '', 'x\ty': 1 } });
  });

  /** Data `levels` levels deep: the data object is level 1, each nested object one more. */
  const deep = (levels: number, leaf: unknown = 1): Record<string, unknown> => {
    let value: unknown = leaf;
    for (let i = 1; i < levels; i++) value = i % 2 === 0 ? [value] : { n: value };
    return { top: value };
  };

  it('allows 8 levels of objects and arrays (the data object is level 1); 9 is invalid_data naming the path', () => {
    assert.equal(MAX_DATA_DEPTH, 8);
    assert.deepEqual(parseDataPatch(deep(8), 'data'), deep(8));
    rejects(
      () => parseDataPatch(deep(9), 'data'),
      'invalid_data',
      /^data\.top\[0\]\.n\[0\]\.n\[0\]\.n\[0\] is nested too deeply: data may hold at most 8 levels of objects and arrays \(the data object is level 1\)$/,
    );
    // An empty object or array at level 9 counts as a level too.
    rejects(() => parseDataPatch(deep(8, {}), 'objects[4].data'), 'invalid_data', /^objects\[4\]\.data\.top.* is nested too deeply/);
    rejects(() => parseObjectBody({ data: deep(9) }, 'o', NOW), 'invalid_data', /nested too deeply/);
  });

  it('checks nested values like top-level ones: finite numbers, valid Unicode, no other kinds', () => {
    rejects(() => parseDataPatch({ a: [1, Number.NaN] }, 'data'), 'invalid_data', /^data\.a\[1\] must be a finite number/);
    rejects(() => parseDataPatch({ a: { b: 'x\ud800' } }, 'data'), 'invalid_data', /^data\.a\.b holds an unpaired/);
    rejects(() => parseDataPatch({ a: { '\udc00': 1 } }, 'data'), 'invalid_data', /^data\.a has a key "\\udc00" that holds an unpaired/);
    rejects(() => parseDataPatch({ a: [new Date(0)] }, 'data'), 'invalid_data', /^data\.a\[0\] must be a JSON value/);
    rejects(() => parseDataPatch({ a: { b: undefined } }, 'data'), 'invalid_data', /^data\.a\.b must be a JSON value: .*\(got nothing\)$/);
    rejects(() => parseDataPatch({ a: ['x'.repeat(16_385)] }, 'data'), 'invalid_data', /^data\.a\[0\] is 16385 characters long; at most 16384/);
    rejects(() => parseDataPatch({ a: { ['k'.repeat(16_385)]: 1 } }, 'data'), 'invalid_data', /^data\.a has a key "k{64}"… that is 16385 characters long/);
  });

  it('sameDataValue: equal JSON, key order included, whatever the object identity', () => {
    assert.equal(sameDataValue({ a: [1, { b: null }] }, { a: [1, { b: null }] }), true);
    assert.equal(sameDataValue('x', 'x'), true);
    assert.equal(sameDataValue({ a: 1, b: 2 }, { b: 2, a: 1 }), false);
    assert.equal(sameDataValue([1], [1, 2]), false);
    assert.equal(sameDataValue([1], { 0: 1 }), false);
    assert.equal(sameDataValue({ a: 1 }, { a: '1' }), false);
    assert.equal(sameDataValue({ a: [] }, undefined), false);
    assert.equal(sameDataValue(1, [1]), false);
  });

  it('counts keys and array elements at every level against the 1000', () => {
    const members = (n: number): unknown[] => Array.from({ length: n }, (_, i) => i);
    // 2 top-level keys + 998 elements = 1000.
    assert.equal((parseDataPatch({ a: members(500), b: { c: members(497) } }, 'data').a as unknown[]).length, 500);
    rejects(
      () => parseDataPatch({ a: members(500), b: { c: members(498) } }, 'data'),
      'invalid_data',
      'data holds more than 1000 keys and array elements in all (nested values included); at most 1000 are allowed',
    );
    rejects(() => parseBulkBody({ objects: [{ id: 'x', data: { a: members(1000) } }] }, NOW, 10), 'invalid_data', /^objects\[0\]\.data holds more than 1000/);
  });

  it('rejects non-finite numbers and unpaired surrogates in strings', () => {
    rejects(() => parseDataPatch({ x: Number.NaN }, 'data'), 'invalid_data', /^data\.x must be a finite number/);
    rejects(() => parseDataPatch({ x: Infinity }, 'data'), 'invalid_data');
    rejects(() => parseDataPatch({ x: 'a\ud800' }, 'data'), 'invalid_data', /^data\.x holds an unpaired/);
  });

  it('checks keys: 1–256 UTF-8 bytes, no control characters', () => {
    rejects(() => parseDataPatch({ '': 1 }, 'data'), 'invalid_data', 'data key must not be empty');
    assert.deepEqual(Object.keys(parseDataPatch({ ['k'.repeat(256)]: 1 }, 'data')), ['k'.repeat(256)]);
    rejects(() => parseDataPatch({ ['k'.repeat(257)]: 1 }, 'data'), 'invalid_data', /^data key "k{64}"… is too long/);
    rejects(() => parseDataPatch({ 'a\tb': 1 }, 'data'), 'invalid_data', /^data key "a\\tb" must not contain control characters/);
  });

  it('allows at most 1000 keys', () => {
    const many = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    assert.equal(Object.keys(parseDataPatch(many(1000), 'data')).length, 1000);
    rejects(() => parseDataPatch(many(1001), 'data'), 'invalid_data', 'data has 1001 keys; at most 1000 are allowed');
  });
});

describe('normalizeTime', () => {
  const ok = (input: string, expected: string): void => assert.equal(normalizeTime(input, 'time'), expected);

  it('normalises Z times to milliseconds', () => {
    ok('2024-05-01T12:00:00Z', '2024-05-01T12:00:00.000Z');
    ok('2024-05-01T12:34:56.789Z', '2024-05-01T12:34:56.789Z');
    ok('2024-05-01t12:00:00z', '2024-05-01T12:00:00.000Z');
    ok('2024-05-01T12:00Z', '2024-05-01T12:00:00.000Z'); // seconds are optional
  });

  it('applies offsets, with or without a colon', () => {
    ok('2024-05-01T14:00:00+02:00', '2024-05-01T12:00:00.000Z');
    ok('2024-05-01T14:00:00+0200', '2024-05-01T12:00:00.000Z');
    ok('2024-05-01T06:30:00-05:30', '2024-05-01T12:00:00.000Z');
    ok('2024-01-01T01:00:00+02:00', '2023-12-31T23:00:00.000Z');
    ok('2024-12-31T23:30:00-01:00', '2025-01-01T00:30:00.000Z');
    ok('2024-05-01T12:00:00-00:00', '2024-05-01T12:00:00.000Z');
  });

  it('accepts fractions of any length and truncates below the millisecond', () => {
    ok('2024-05-01T12:00:00.5Z', '2024-05-01T12:00:00.500Z');
    ok('2024-05-01T12:00:00.12Z', '2024-05-01T12:00:00.120Z');
    ok('2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00.123Z');
    ok('2024-05-01T12:00:00.9999Z', '2024-05-01T12:00:00.999Z');
  });

  it('handles leap years and early years exactly', () => {
    ok('2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z');
    ok('2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z');
    ok('0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'); // not 1950
    ok('0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z');
    ok('9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z');
  });

  it('rejects dates and times that do not exist', () => {
    for (const [input, why] of [
      ['2023-02-29T00:00:00Z', /day 29 does not exist in 2023-02/],
      ['1900-02-29T00:00:00Z', /day 29 does not exist/],
      ['2024-04-31T00:00:00Z', /day 31 does not exist/],
      ['2024-01-32T00:00:00Z', /day 32/],
      ['2024-01-00T00:00:00Z', /day 00/],
      ['2024-13-01T00:00:00Z', /month 13 does not exist/],
      ['2024-00-01T00:00:00Z', /month 00/],
      ['2024-05-01T24:00:00Z', /hour 24 does not exist/],
      ['2024-05-01T12:60:00Z', /minute 60/],
      ['2024-05-01T12:00:60Z', /second 60/],
      ['2024-05-01T12:00:00+24:00', /offset \+24:00 does not exist/],
      ['2024-05-01T12:00:00+01:60', /offset/],
    ] as const) {
      rejects(() => normalizeTime(input, 'location.time'), 'invalid_request', why);
    }
  });

  it('rejects what is not an ISO 8601 date-time with a zone', () => {
    for (const input of [
      '2024-05-01T12:00:00', // no zone
      '2024-05-01',
      '2024-05-01 12:00:00Z',
      '2024-5-1T12:00:00Z',
      '2024-05-01T12:00:00+02',
      '2024-05-01T12:00:00.Z',
      '20240501T120000Z',
      '+002024-05-01T12:00:00Z',
      'yesterday',
      '',
    ]) {
      rejects(() => normalizeTime(input, 'from'), 'invalid_request', /^from must be an ISO 8601 date-time with Z or an offset/);
    }
    rejects(() => normalizeTime(1714564800000, 'from'), 'invalid_request', /^from must be an ISO 8601 date-time string .*\(got 1714564800000\)/);
    rejects(() => normalizeTime(null, 'from'), 'invalid_request', /\(got null\)/);
  });

  it('the UTC forms clients mostly send (a fast path) agree with the general parser on every date', () => {
    // The same text with +00:00 instead of Z takes the general path: both accept it or
    // both reject it with the same code, and give the same instant.
    const two = (max: number): fc.Arbitrary<string> => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const outcome = (text: string): string => {
      try {
        return normalizeTime(text, 'time');
      } catch (err) {
        assert.ok(err instanceof LocusError);
        return `error ${err.code}`;
      }
    };
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        two(13),
        two(32),
        two(24),
        two(60),
        two(60),
        fc.option(fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0'))),
        (year, month, day, hour, minute, second, ms) => {
          const head = `${year}-${month}-${day}T${hour}:${minute}:${second}${ms === null ? '' : `.${ms}`}`;
          assert.equal(outcome(`${head}Z`), outcome(`${head}+00:00`), head);
        },
      ),
      { numRuns: 5000 },
    );
    ok('2024-02-29T23:59:59Z', '2024-02-29T23:59:59.000Z');
    ok('2000-02-29T00:00:00.000Z', '2000-02-29T00:00:00.000Z');
    ok('0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z');
    for (const bad of ['2023-02-29T00:00:00Z', '1900-02-29T00:00:00.000Z', '2024-04-31T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T12:00:60.000Z']) {
      rejects(() => normalizeTime(bad, 'time'), 'invalid_request', /not a real date-time/);
    }
  });

  it('rejects instants outside the years 0000–9999 once converted to UTC', () => {
    rejects(() => normalizeTime('0000-01-01T00:30:00+01:00', 'time'), 'invalid_request', /outside the years 0000–9999/);
    rejects(() => normalizeTime('9999-12-31T23:30:00-01:00', 'time'), 'invalid_request', /outside the years/);
  });

  it('uses the code it is given', () => {
    rejects(() => normalizeTime('nope', 'location.time', 'invalid_location'), 'invalid_location');
  });

  it('never echoes a huge input', () => {
    const err = rejects(() => normalizeTime(`2024-05-01T12:00:00.${'1'.repeat(100_000)}X`, 'time'), 'invalid_request');
    assert.ok(err.message.includes('…'));
  });
});

describe('parseLocation', () => {
  it('accepts longitude and latitude alone, stamping now', () => {
    const location = parseLocation({ longitude: 13.4, latitude: 52.5 }, NOW, 'location');
    assert.deepEqual(location, { longitude: 13.4, latitude: 52.5, time: NOW });
    assert.deepEqual(Object.keys(location), ['longitude', 'latitude', 'time']);
  });

  it('accepts every optional field and normalises time', () => {
    const input = {
      time: '2024-05-01T14:00:00+02:00',
      heading: 360,
      longitude: -180,
      latitude: 90,
      altitude: -12.5,
      speed: 0,
      accuracy: 3,
      altitudeAccuracy: 0,
    };
    assert.deepEqual(parseLocation(input, NOW, 'location'), {
      longitude: -180,
      latitude: 90,
      altitude: -12.5,
      speed: 0,
      heading: 360,
      accuracy: 3,
      altitudeAccuracy: 0,
      time: '2024-05-01T12:00:00.000Z',
    });
    assert.deepEqual(parseLocation({ longitude: 180, latitude: -90, heading: 0 }, NOW, 'l'), {
      longitude: 180,
      latitude: -90,
      heading: 0,
      time: NOW,
    });
  });

  it('holds no undefined values', () => {
    const location = parseLocation({ longitude: 1, latitude: 2, speed: undefined }, NOW, 'location');
    assert.deepEqual(Object.keys(location), ['longitude', 'latitude', 'time']);
  });

  it('names the path of a coordinate out of range', () => {
    rejects(
      () => parseLocation({ longitude: 0, latitude: 91 }, NOW, 'objects[3].location'),
      'invalid_location',
      'objects[3].location.latitude must be a number between -90 and 90 (got 91)',
    );
    rejects(() => parseLocation({ longitude: 180.5, latitude: 0 }, NOW, 'location'), 'invalid_location', /^location\.longitude must be a number between -180 and 180/);
    rejects(() => parseLocation({ longitude: '1', latitude: 0 }, NOW, 'location'), 'invalid_location', /^location\.longitude .*\(got the string "1"\)/);
  });

  it('requires longitude and latitude', () => {
    rejects(() => parseLocation({ latitude: 1 }, NOW, 'location'), 'invalid_location', 'location.longitude is required');
    rejects(() => parseLocation({ longitude: 1 }, NOW, 'location'), 'invalid_location', 'location.latitude is required');
  });

  it('checks the optional fields', () => {
    const base = { longitude: 0, latitude: 0 };
    rejects(() => parseLocation({ ...base, speed: -1 }, NOW, 'location'), 'invalid_location', /^location\.speed must be a number ≥ 0/);
    rejects(() => parseLocation({ ...base, heading: 360.5 }, NOW, 'location'), 'invalid_location', /^location\.heading must be a number between 0 and 360/);
    rejects(() => parseLocation({ ...base, heading: -1 }, NOW, 'location'), 'invalid_location', /heading/);
    rejects(() => parseLocation({ ...base, accuracy: -0.1 }, NOW, 'location'), 'invalid_location', /accuracy/);
    rejects(() => parseLocation({ ...base, altitudeAccuracy: -1 }, NOW, 'location'), 'invalid_location', /altitudeAccuracy/);
    rejects(() => parseLocation({ ...base, altitude: 'high' }, NOW, 'location'), 'invalid_location', /^location\.altitude must be a finite number/);
    rejects(() => parseLocation({ ...base, altitude: Infinity }, NOW, 'location'), 'invalid_location', /altitude/);
  });

  it('rejects null, for the location or any field', () => {
    rejects(() => parseLocation(null, NOW, 'location'), 'invalid_location', 'location must be a JSON object (got null)');
    rejects(() => parseLocation([0, 0], NOW, 'location'), 'invalid_location', /an array/);
    rejects(() => parseLocation({ longitude: null, latitude: 0 }, NOW, 'location'), 'invalid_location', /^location\.longitude .*\(got null\)/);
    rejects(() => parseLocation({ longitude: 0, latitude: 0, speed: null }, NOW, 'location'), 'invalid_location', /^location\.speed/);
    rejects(() => parseLocation({ longitude: 0, latitude: 0, time: null }, NOW, 'location'), 'invalid_location', /^location\.time must be/);
  });

  it('rejects an unknown key, naming it', () => {
    rejects(() => parseLocation({ longitude: 0, latitude: 0, foo: 1 }, NOW, 'location'), 'invalid_location', /^unknown key "foo" in location/);
    rejects(() => parseLocation({ lon: 0, lat: 0 }, NOW, 'objects[0].location'), 'invalid_location', /^unknown key "lon" in objects\[0\]\.location/);
  });

  it('rejects a bad time with invalid_location and its path', () => {
    rejects(() => parseLocation({ longitude: 0, latitude: 0, time: '2023-02-29T00:00:00Z' }, NOW, 'location'), 'invalid_location', /^location\.time is not a real date-time/);
  });
});

describe('parseObjectBody', () => {
  it('accepts an empty body', () => {
    assert.deepEqual(parseObjectBody({}, 'vehicle/17', NOW), { id: 'vehicle/17' });
  });

  it('reads label, location and data', () => {
    assert.deepEqual(
      parseObjectBody({ label: 'Tractor', location: { longitude: 1, latitude: 2 }, data: { a: 1, b: null } }, 'o1', NOW),
      { id: 'o1', label: 'Tractor', location: { longitude: 1, latitude: 2, time: NOW }, data: { a: 1, b: null } },
    );
  });

  it('takes a null label as "clear"', () => {
    assert.deepEqual(parseObjectBody({ label: null }, 'o1', NOW), { id: 'o1', label: null });
  });

  it('limits labels to 1024 characters', () => {
    assert.equal(parseObjectBody({ label: 'l'.repeat(1024) }, 'o', NOW).label, 'l'.repeat(1024));
    assert.equal(parseObjectBody({ label: '🚜'.repeat(1024) }, 'o', NOW).label, '🚜'.repeat(1024));
    rejects(() => parseObjectBody({ label: 'l'.repeat(1025) }, 'o', NOW), 'invalid_request', 'label is too long: at most 1024 characters are allowed');
    rejects(() => parseObjectBody({ label: '🚜'.repeat(1025) }, 'o', NOW), 'invalid_request', /too long/);
    rejects(() => parseObjectBody({ label: 5 }, 'o', NOW), 'invalid_request', 'label must be a string or null (got 5)');
    rejects(() => parseObjectBody({ label: 'a\udfff' }, 'o', NOW), 'invalid_request', /unpaired/);
  });

  it('allows an id only when it equals the path id', () => {
    assert.deepEqual(parseObjectBody({ id: 'vehicle/17', label: 'x' }, 'vehicle/17', NOW), { id: 'vehicle/17', label: 'x' });
    rejects(() => parseObjectBody({ id: 'vehicle/18' }, 'vehicle/17', NOW), 'invalid_id', /^id in the request body \(the string "vehicle\/18"\) differs from the id in the path \("vehicle\/17"\)/);
    rejects(() => parseObjectBody({ id: 17 }, '17', NOW), 'invalid_id', /differs/);
    rejects(() => parseObjectBody({ id: null }, 'o', NOW), 'invalid_id', /differs/);
  });

  it('validates the path id', () => {
    rejects(() => parseObjectBody({}, '', NOW), 'invalid_id', 'object id must not be empty');
  });

  it('rejects a null location', () => {
    rejects(() => parseObjectBody({ location: null }, 'o', NOW), 'invalid_location', /^location must be a location object; null is not allowed/);
  });

  it('rejects unknown keys and bodies that are not objects', () => {
    rejects(() => parseObjectBody({ labels: 'x' }, 'o', NOW), 'invalid_request', /^unknown key "labels" in the request body/);
    rejects(() => parseObjectBody(null, 'o', NOW), 'invalid_request', 'the request body must be a JSON object (got null)');
    rejects(() => parseObjectBody([], 'o', NOW), 'invalid_request', /an array/);
    rejects(() => parseObjectBody('{}', 'o', NOW), 'invalid_request', /the string/);
  });

  it('passes on location and data errors with their paths', () => {
    rejects(() => parseObjectBody({ location: { longitude: 0, latitude: 99 } }, 'o', NOW), 'invalid_location', /^location\.latitude must be/);
    rejects(() => parseObjectBody({ data: { x: { y: Number.NaN } } }, 'o', NOW), 'invalid_data', /^data\.x\.y must be a finite number/);
    rejects(() => parseObjectBody({ data: null }, 'o', NOW), 'invalid_data', 'data must be a JSON object (got null)');
  });
});

describe('parseBulkBody', () => {
  it('reads every entry, in order', () => {
    const body = {
      objects: [
        { id: 'a', location: { longitude: 1, latitude: 1, time: '2024-05-01T10:00:00Z' } },
        { id: 'a', location: { longitude: 2, latitude: 2 } },
        { id: 'b/1', label: null, data: { k: 'v' } },
      ],
    };
    assert.deepEqual(parseBulkBody(body, NOW, 10), [
      { id: 'a', location: { longitude: 1, latitude: 1, time: '2024-05-01T10:00:00.000Z' } },
      { id: 'a', location: { longitude: 2, latitude: 2, time: NOW } },
      { id: 'b/1', label: null, data: { k: 'v' } },
    ]);
  });

  it('accepts an empty array', () => {
    assert.deepEqual(parseBulkBody({ objects: [] }, NOW, 10), []);
  });

  it('accepts exactly maxEntries and refuses more with too_large', () => {
    const entries = (n: number): unknown => ({ objects: Array.from({ length: n }, (_, i) => ({ id: `o${i}` })) });
    assert.equal(parseBulkBody(entries(3), NOW, 3).length, 3);
    rejects(() => parseBulkBody(entries(4), NOW, 3), 'too_large', 'objects has 4 entries; at most 3 are allowed in one request');
  });

  it('requires the {"objects": [...]} form', () => {
    rejects(() => parseBulkBody({}, NOW, 10), 'invalid_request', /^objects is required/);
    rejects(() => parseBulkBody({ objects: {} }, NOW, 10), 'invalid_request', /^objects must be an array/);
    rejects(() => parseBulkBody({ objects: null }, NOW, 10), 'invalid_request', /^objects must be an array .*\(got null\)/);
    rejects(() => parseBulkBody({ objects: [], extra: 1 }, NOW, 10), 'invalid_request', /^unknown key "extra" in the request body/);
    rejects(() => parseBulkBody([{ id: 'a' }], NOW, 10), 'invalid_request', /^the request body must be a JSON object/);
    rejects(() => parseBulkBody(null, NOW, 10), 'invalid_request');
  });

  it('names the entry that is wrong', () => {
    const bulk = (bad: unknown): unknown => ({ objects: [{ id: 'ok' }, { id: 'ok2' }, bad] });
    rejects(() => parseBulkBody(bulk(5), NOW, 10), 'invalid_request', 'objects[2] must be a JSON object (got 5)');
    rejects(() => parseBulkBody(bulk({ label: 'x' }), NOW, 10), 'invalid_id', 'objects[2].id is required');
    rejects(() => parseBulkBody(bulk({ id: '' }), NOW, 10), 'invalid_id', 'objects[2].id must not be empty');
    rejects(() => parseBulkBody(bulk({ id: 7 }), NOW, 10), 'invalid_id', 'objects[2].id must be a string (got 7)');
    rejects(() => parseBulkBody(bulk({ id: 'x'.repeat(257) }), NOW, 10), 'invalid_id', /^objects\[2\]\.id is too long/);
    rejects(() => parseBulkBody(bulk({ id: 'x', foo: 1 }), NOW, 10), 'invalid_request', /^unknown key "foo" in objects\[2\]/);
    rejects(
      () => parseBulkBody(bulk({ id: 'x', location: { longitude: 0, latitude: -91 } }), NOW, 10),
      'invalid_location',
      'objects[2].location.latitude must be a number between -90 and 90 (got -91)',
    );
    rejects(() => parseBulkBody(bulk({ id: 'x', location: null }), NOW, 10), 'invalid_location', /^objects\[2\]\.location must be a location object/);
    rejects(() => parseBulkBody(bulk({ id: 'x', data: { d: [Infinity] } }), NOW, 10), 'invalid_data', /^objects\[2\]\.data\.d\[0\] must be/);
    rejects(() => parseBulkBody(bulk({ id: 'x', label: 1 }), NOW, 10), 'invalid_request', /^objects\[2\]\.label must be a string or null/);
  });
});

describe('fixes dated ahead of the server clock (FutureLimit)', () => {
  const future = { latest: '2024-05-01T12:05:00.000Z', skewS: 300 };
  const at = (time: string): Record<string, unknown> => ({ longitude: 1, latitude: 2, time });

  it('accepts a fix up to the limit, and one without time (stamped now)', () => {
    assert.equal(parseObjectBody({ location: at('2024-05-01T12:05:00Z') }, 'o', NOW, future).location?.time, '2024-05-01T12:05:00.000Z');
    assert.equal(parseObjectBody({ location: at('2024-05-01T14:04:59+02:00') }, 'o', NOW, future).location?.time, '2024-05-01T12:04:59.000Z');
    assert.equal(parseObjectBody({ location: { longitude: 1, latitude: 2 } }, 'o', NOW, future).location?.time, NOW);
  });

  it('rejects a later one as invalid_location, naming the field, the time and the limit', () => {
    rejects(
      () => parseObjectBody({ location: at('9999-12-31T00:00:00Z') }, 'o', NOW, future),
      'invalid_location',
      'location.time is 9999-12-31T00:00:00.000Z, more than 300 s ahead of the server clock (2024-05-01T12:00:00.000Z); a fix may be dated at most 300 s in the future',
    );
    rejects(() => parseObjectBody({ location: at('2024-05-01T12:05:00.001Z') }, 'o', NOW, future), 'invalid_location', /^location\.time is/);
  });

  it('in a bulk, names the entry by index and id; no limit given, none applies', () => {
    const body = { objects: [{ id: 'a', location: at('2024-05-01T12:00:00Z') }, { id: 'b/1', location: at('2030-01-01T00:00:00Z') }] };
    rejects(() => parseBulkBody(body, NOW, 10, future), 'invalid_location', /^objects\[1\]\.location\.time \(object "b\/1"\) is 2030-01-01T00:00:00\.000Z, more than 300 s ahead/);
    assert.equal(parseBulkBody(body, NOW, 10).length, 2);
  });
});

describe('parseAreaCreate', () => {
  const circle = { cx: 13.4, cy: 52.5, r: 500 };

  it('requires a label and a shape; data defaults to {}', () => {
    assert.deepEqual(parseAreaCreate('zone/1', { label: 'Zone', shape: circle }, 100), { id: 'zone/1', label: 'Zone', shape: circle, data: {} });
  });

  it('rejects a missing or null label, naming it', () => {
    rejects(() => parseAreaCreate('z', { shape: circle }, 100), 'invalid_request', /^label is required/);
    rejects(() => parseAreaCreate('z', { label: null, shape: circle }, 100), 'invalid_request', /^label is required/);
  });

  it('reads label and data, dropping null data keys', () => {
    assert.deepEqual(parseAreaCreate('z', { id: 'z', label: 'Depot', shape: circle, data: { a: 1, b: null } }, 100), {
      id: 'z',
      label: 'Depot',
      shape: circle,
      data: { a: 1 },
    });
  });

  it('rejects a missing or null shape, and passes on shape errors', () => {
    rejects(() => parseAreaCreate('z', { label: 'x' }, 100), 'invalid_shape', /^shape is required/);
    rejects(() => parseAreaCreate('z', { label: 'x', shape: null }, 100), 'invalid_shape', /^shape must be a shape object; null is not allowed/);
    rejects(() => parseAreaCreate('z', { label: 'x', shape: { cx: 0, cy: 0, r: 0 } }, 100), 'invalid_shape', /^shape\.r must be/);
  });

  it('rejects unknown keys, a different id, a bad label and a bad area id', () => {
    rejects(() => parseAreaCreate('z', { label: 'x', shape: circle, kind: 'x' }, 100), 'invalid_request', /^unknown key "kind" in the request body/);
    rejects(() => parseAreaCreate('z', { id: 'y', label: 'x', shape: circle }, 100), 'invalid_id', /differs from the area id in the path/);
    rejects(() => parseAreaCreate('z', { shape: circle, label: ['x'] }, 100), 'invalid_request', /^label must be a string or null/);
    rejects(() => parseAreaCreate('z', { label: 'x', shape: circle, data: [] }, 100), 'invalid_data', /^data must be a JSON object/);
    rejects(() => parseAreaCreate('a\u0001', { label: 'x', shape: circle }, 100), 'invalid_id', /^area id must not contain control characters/);
    rejects(() => parseAreaCreate('z', null, 100), 'invalid_request', /^the request body must be a JSON object/);
  });
});

describe('parseAreaPatch', () => {
  it('takes every field as optional', () => {
    assert.deepEqual(parseAreaPatch('z', {}, 100), {});
    assert.deepEqual(parseAreaPatch('z', { id: 'z' }, 100), {});
  });

  it('clears the label with null and keeps data nulls', () => {
    assert.deepEqual(parseAreaPatch('z', { label: null, data: { a: null, b: 2 } }, 100), { label: null, data: { a: null, b: 2 } });
  });

  it('reads a new shape', () => {
    assert.deepEqual(parseAreaPatch('z', { shape: { w: 170, n: 10, e: -170, s: -10 } }, 100), {
      shape: { w: 170, n: 10, e: -170, s: -10 },
    });
  });

  it('rejects a null shape, unknown keys and a different id', () => {
    rejects(() => parseAreaPatch('z', { shape: null }, 100), 'invalid_shape', /null is not allowed/);
    rejects(() => parseAreaPatch('z', { colour: 'red' }, 100), 'invalid_request', /^unknown key "colour"/);
    rejects(() => parseAreaPatch('z', { id: 'q' }, 100), 'invalid_id', /differs/);
    rejects(() => parseAreaPatch('z', { data: { x: [Number.NaN] } }, 100), 'invalid_data', /^data\.x\[0\] must be a finite number/);
    assert.deepEqual(parseAreaPatch('z', { data: { x: {}, y: [{ z: null }] } }, 100).data, { x: {}, y: [{ z: null }] });
  });
});

describe('realm settings', () => {
  it('has the documented defaults, frozen', () => {
    assert.deepEqual(defaultRealmSettings, { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null });
    assert.ok(Object.isFrozen(defaultRealmSettings));
  });

  it('merges a partial object onto the base, returning a new object', () => {
    const empty = parseRealmSettings({}, defaultRealmSettings);
    assert.deepEqual(empty, defaultRealmSettings);
    assert.notEqual(empty, defaultRealmSettings);
    assert.deepEqual(parseRealmSettings({ connectionTimeout: 60 }, defaultRealmSettings), {
      connectionTimeout: 60,
      historyRetentionDays: 30,
      rateLimit: null,
    });
    const base = { connectionTimeout: 5, historyRetentionDays: 1, rateLimit: 10 };
    assert.deepEqual(parseRealmSettings({ rateLimit: null, historyRetentionDays: 0 }, base), {
      connectionTimeout: 5,
      historyRetentionDays: 0,
      rateLimit: null,
    });
  });

  it('checks ranges at both ends', () => {
    const parse = (value: unknown) => parseRealmSettings(value, defaultRealmSettings);
    assert.equal(parse({ connectionTimeout: 1 }).connectionTimeout, 1);
    assert.equal(parse({ connectionTimeout: 31_536_000 }).connectionTimeout, 31_536_000);
    assert.equal(parse({ historyRetentionDays: 36_500 }).historyRetentionDays, 36_500);
    assert.equal(parse({ rateLimit: 1 }).rateLimit, 1);
    rejects(() => parse({ connectionTimeout: 0 }), 'invalid_settings', /^settings\.connectionTimeout must be an integer between 1 and 31536000 \(seconds\) \(got 0\)/);
    rejects(() => parse({ connectionTimeout: 31_536_001 }), 'invalid_settings', /connectionTimeout/);
    rejects(() => parse({ connectionTimeout: 1.5 }), 'invalid_settings', /connectionTimeout/);
    rejects(() => parse({ connectionTimeout: '120' }), 'invalid_settings', /connectionTimeout/);
    rejects(() => parse({ connectionTimeout: null }), 'invalid_settings', /connectionTimeout/);
    rejects(() => parse({ historyRetentionDays: -1 }), 'invalid_settings', /^settings\.historyRetentionDays must be an integer between 0 and 36500/);
    rejects(() => parse({ historyRetentionDays: 36_501 }), 'invalid_settings', /historyRetentionDays/);
    rejects(() => parse({ rateLimit: 0 }), 'invalid_settings', /^settings\.rateLimit must be a positive integer/);
    rejects(() => parse({ rateLimit: 2.5 }), 'invalid_settings', /rateLimit/);
    rejects(() => parse({ rateLimit: '5' }), 'invalid_settings', /rateLimit/);
  });

  it('rejects unknown keys and non-objects', () => {
    rejects(() => parseRealmSettings({ timeout: 5 }, defaultRealmSettings), 'invalid_settings', /^unknown key "timeout" in settings/);
    rejects(() => parseRealmSettings(null, defaultRealmSettings), 'invalid_settings', 'settings must be a JSON object (got null)');
    rejects(() => parseRealmSettings([], defaultRealmSettings), 'invalid_settings');
  });
});

describe('parseTasks (v1 tds)', () => {
  it('accepts an array of ids, keeping their order and duplicates, as a copy; [] is valid (it clears)', () => {
    const given = ['task-2', 'task/1 ü 😀', 'task-2'];
    const tasks = parseTasks(given, 'tds');
    assert.deepEqual(tasks, given);
    assert.notEqual(tasks, given);
    assert.deepEqual(parseTasks([], 'tds'), []);
    assert.equal(parseTasks(Array.from({ length: MAX_TASKS }, (_, i) => `t${i}`), 'tds').length, MAX_TASKS);
  });
  it('rejects anything but an array, naming the key', () => {
    for (const value of ['t1', 1, true, { a: 'b' }, null]) {
      expectLocusError(() => parseTasks(value, 'tds'), 'invalid_request', /^tds must be an array of task ids \(got /);
    }
  });
  it('rejects more than MAX_TASKS ids', () => {
    const many = Array.from({ length: MAX_TASKS + 1 }, (_, i) => `t${i}`);
    expectLocusError(() => parseTasks(many, 'tds'), 'invalid_request', `tds has ${MAX_TASKS + 1} task ids; at most ${MAX_TASKS} are allowed`);
  });
  it('checks every id by the identifier rules, naming its index', () => {
    expectLocusError(() => parseTasks(['ok', 7], 'tds'), 'invalid_id', 'tds[1] must be a string (got 7)');
    expectLocusError(() => parseTasks([''], 'tds'), 'invalid_id', 'tds[0] must not be empty');
    expectLocusError(() => parseTasks(['a', 'b', 'x'.repeat(257)], 'tds'), 'invalid_id', /^tds\[2\] is too long/);
    expectLocusError(() => parseTasks(['bad\u0007'], 'tds'), 'invalid_id', /^tds\[0\] must not contain control characters/);
    expectLocusError(() => parseTasks(['\ud800'], 'tds'), 'invalid_id', /^tds\[0\] holds an unpaired UTF-16 surrogate/);
    expectLocusError(() => parseTasks([null], 'tds'), 'invalid_id', 'tds[0] must be a string (got null)');
  });
  it('the REST body does not take tasks: an unknown key', () => {
    expectLocusError(() => parseObjectBody({ tasks: ['t1'] }, 'o1', NOW), 'invalid_request', /^unknown key "tasks" in the request body/);
  });
});
