import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import type { Data } from '../../internal/domain/types.js';
import { encodeData } from '../../internal/store/sqlite/data-jsonb.js';

const db = new Database(':memory:');
after(() => db.close());
const sqliteJsonb = db.prepare<[string], Buffer>('SELECT jsonb(?)').pluck();
const asText = db.prepare<[Buffer], string>('SELECT json(?)').pluck();
const strict = db.prepare<[Buffer], number>('SELECT json_valid(?, 8)').pluck();

/** Strings of every kind: ASCII, escapes and controls, any UTF-16 (lone surrogates too), long ones. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '😀', '\ud800', 'a') }),
  fc.string({ minLength: 250, maxLength: 70_000, unit: 'grapheme-ascii' }),
);
const value = fc.oneof(
  text,
  fc.boolean(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 2 ** 53, 2 ** 60 + 256, 1e20, -1e20, 0.1, 5e-324),
);
/** Nested values: objects and arrays of scalars, null and further nesting, small and large (headers of every size). */
const nested = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    value,
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 6 }),
    fc.dictionary(text, tie('node'), { maxKeys: 6 }),
  ),
})).node;
const data = fc.dictionary(text, value, { maxKeys: 12 }) as fc.Arbitrary<Data>;
const nestedData = fc.dictionary(text, fc.oneof(value, fc.array(nested, { maxLength: 8 }), fc.dictionary(text, nested, { maxKeys: 8 })), {
  maxKeys: 8,
}) as fc.Arbitrary<Data>;

void describe('data as JSONB (version 5), encoded in JavaScript', () => {
  void it('is the JSONB SQLite makes of JSON.stringify\'s text, byte for byte, and reads back as that text', () => {
    fc.assert(
      fc.property(data, (d) => {
        const json = JSON.stringify(d);
        const encoded = Buffer.from(encodeData(d));
        assert.ok(encoded.equals(sqliteJsonb.get(json) as Buffer), `jsonb of ${json.slice(0, 200)}`);
        assert.equal(asText.get(encoded), json);
        assert.equal(strict.get(encoded), 1);
      }),
      { numRuns: 3000 },
    );
  });

  void it('holds nested objects and arrays (nulls inside them too) byte for byte as SQLite does', () => {
    fc.assert(
      fc.property(nestedData, (d) => {
        const json = JSON.stringify(d);
        const encoded = Buffer.from(encodeData(d));
        assert.ok(encoded.equals(sqliteJsonb.get(json) as Buffer), `jsonb of ${json.slice(0, 200)}`);
        assert.equal(asText.get(encoded), json);
        assert.equal(strict.get(encoded), 1);
      }),
      { numRuns: 2000 },
    );
    // Payloads around each header size boundary (11, 255, 65535 bytes), nested in each other.
    for (const length of [9, 10, 11, 252, 253, 254, 65_530, 65_532, 65_533]) {
      const d = { a: [['x'.repeat(length)]], b: { c: { d: 'y'.repeat(length), e: [null, true, 1.5, []] } } } as unknown as Data;
      assert.ok(Buffer.from(encodeData(d)).equals(sqliteJsonb.get(JSON.stringify(d)) as Buffer), `strings of ${length}`);
    }
  });

  void it('keeps keys JSON.parse makes ordinary (__proto__) and their order', () => {
    const d = JSON.parse('{"z":1,"__proto__":"p","10":true,"a":"x"}') as Data;
    assert.equal(asText.get(Buffer.from(encodeData(d))), '{"10":true,"z":1,"__proto__":"p","a":"x"}');
    assert.equal(asText.get(Buffer.from(encodeData({}))), '{}');
    const nestedProto = JSON.parse('{"n":{"__proto__":{"b":1},"a":[]}}') as Data;
    assert.equal(asText.get(Buffer.from(encodeData(nestedProto))), '{"n":{"__proto__":{"b":1},"a":[]}}');
  });

  void it('refuses what data cannot hold', () => {
    for (const bad of [10n, Infinity, NaN, undefined, () => 1]) {
      assert.throws(() => encodeData({ ok: 1, bad } as unknown as Data), TypeError);
      assert.throws(() => encodeData({ ok: 1, nested: { list: [1, bad] } } as unknown as Data), TypeError);
    }
  });
});
