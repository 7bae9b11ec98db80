import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseLocation } from '../../internal/domain/location.js';
import type { Location } from '../../internal/domain/types.js';
import { MAX_TIME_MS, MIN_TIME_MS, sentLocation } from '../support/location-arbitrary.js';
import {
  appendPast,
  chunkFixes,
  decodePast,
  appendHeldPast,
  holdPast,
  pastBytes,
  fixFromRow,
  fixRow,
  fixTime,
  pastCount,
  storedFix,
  fixVersion,
  MAX_FIX_BYTES,
  versioned,
  withinBounds,
  withinLimits,
  type HistoryBound,
  type StoredFix,
} from '../../internal/store/sqlite/history-rows.js';

const NOW = '2024-05-01T12:00:00.000Z';
const at0: Location = { longitude: 1, latitude: 2, altitude: 3, speed: 4, heading: 5, accuracy: 6, altitudeAccuracy: 7, time: NOW };
const MIN = MIN_TIME_MS;
const MAX = MAX_TIME_MS;

void describe('history rows (schema version 7)', () => {
  void it('a fix reads back as parseLocation gave it: the same values, keys and order, -0 as 0', () => {
    fc.assert(
      fc.property(sentLocation, (sent) => {
        const location = parseLocation(sent, NOW, 'location');
        const [orow, ...stored] = fixRow(7, location);
        assert.equal(orow, 7);
        // JSON text: key order and values as a response shows them.
        assert.equal(JSON.stringify(fixFromRow(stored)), JSON.stringify(location));
        for (const value of Object.values(fixFromRow(stored))) if (typeof value === 'number') assert.ok(!Object.is(value, -0));
      }),
      { numRuns: 2000 },
    );
  });

  void it('a stored time is Date.parse of the normalised time, over years 0000–9999', () => {
    const edges = ['0000-01-01T00:00:00.000Z', '0000-02-29T23:59:59.999Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '2000-02-29T12:00:00.000Z', '2100-03-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];
    for (const time of edges) assert.equal(fixTime(time), Date.parse(time), time);
    fc.assert(
      fc.property(fc.integer({ min: MIN, max: MAX }), (ms) => {
        assert.equal(fixTime(new Date(ms).toISOString()), ms);
      }),
      { numRuns: 20_000 },
    );
    // Any other form is Date.parse's.
    assert.equal(fixTime('2024-05-01T12:00:00+02:00'), Date.parse('2024-05-01T12:00:00+02:00'));
  });

  void it('stored times keep the order of the normalised times they come from', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN, max: MAX }), fc.integer({ min: MIN, max: MAX }), (a, b) => {
        const [ta, tb] = [new Date(a).toISOString(), new Date(b).toISOString()];
        assert.equal(Math.sign(fixTime(ta) - fixTime(tb)), ta < tb ? -1 : ta > tb ? 1 : 0);
      }),
      { numRuns: 2000 },
    );
  });

  void it('past fixes become chunks (version 10): one per time, the last written, in time order, within the span and count', () => {
    const fix = (time: number, lon = 0): StoredFix => [time, lon, 0, null, null, null, null, null];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer()), { maxLength: 30 }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 5 }),
        (written, span, max) => {
          const fixes = written.map(([time, lon]) => fix(time, lon));
          const chunks = chunkFixes(fixes, { span, fixes: max });
          // Oracle: the last write of each time, in time order.
          const last = new Map<number, StoredFix>();
          for (const f of fixes) last.set(f[0], f);
          assert.deepEqual(chunks.flat(), [...last.values()].sort((a, b) => a[0] - b[0]));
          for (const chunk of chunks) {
            assert.ok(chunk.length >= 1 && chunk.length <= max);
            assert.ok((chunk.at(-1)?.[0] ?? 0) - (chunk[0]?.[0] ?? 0) <= span);
          }
          // Cut only where it must be: the next fix would break a limit.
          for (let i = 1; i < chunks.length; i++) {
            const before = chunks[i - 1] as StoredFix[];
            const next = (chunks[i] as StoredFix[])[0] as StoredFix;
            assert.ok(before.length === max || next[0] - (before[0] as StoredFix)[0] > span);
          }
        },
      ),
      { numRuns: 2000 },
    );
    // A tracker's fixes, in order: one chunk, the same fixes.
    const inOrder = [fix(1), fix(2), fix(5)];
    assert.deepEqual(chunkFixes(inOrder), [inOrder]);
  });

  void it('past fixes held in an object row (version 8) read back exactly, in write order, however they were appended', () => {
    const location = sentLocation.map((sent) => parseLocation(sent, NOW, 'location'));
    fc.assert(
      fc.property(fc.array(fc.array(location, { maxLength: 4 }), { maxLength: 5 }), (appends) => {
        let past: Buffer | null = null;
        const all = appends.flat();
        for (const fixes of appends) past = appendPast(past, fixes.map(storedFix));
        const held = decodePast(past);
        assert.equal(pastCount(past), all.length);
        assert.equal(held.length, all.length);
        // Exact doubles (-0 included, as Object.is sees them), then the same fix as a history row gives.
        held.forEach((fix, i) => {
          const expected = storedFix(all[i] as Location);
          expected.forEach((value, k) => assert.ok(Object.is(fix[k], value), `fix ${i} value ${k}: ${String(fix[k])} for ${String(value)}`));
          assert.equal(JSON.stringify(fixFromRow(fix)), JSON.stringify(all[i]));
        });
      }),
      { numRuns: 1000 },
    );
    assert.deepEqual(decodePast(null), []);
    assert.equal(pastCount(null), 0);
    // A typical tracker fix (time, position, speed, heading, accuracy): 1 + 6 × 8 bytes.
    const typical = storedFix({ longitude: 8.5, latitude: 47.3, speed: 12, heading: 90, accuracy: 5, time: NOW });
    const one = appendPast(null, [typical]);
    assert.equal(one.length, 49);
    // Its own memory: a slice of Buffer's shared pool would keep the pool (8 KiB) alive while held.
    assert.equal(one.buffer.byteLength, 49);
    assert.equal(appendPast(one, [typical]).buffer.byteLength, 98);
  });

  void it('fixes keep their snapshot version (schema version 12): 4 bytes when not 0, none for 0', () => {
    const location = sentLocation.map((sent) => storedFix(parseLocation(sent, NOW, 'location')));
    const version = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 ** 32 - 1 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(location, version), { maxLength: 12 }), (pairs) => {
        const fixes = pairs.map(([fix, ver]) => versioned([...fix] as StoredFix, ver));
        const past = appendPast(null, fixes);
        const back = decodePast(past);
        assert.deepEqual(back.map(fixVersion), pairs.map(([, ver]) => ver));
        assert.deepEqual(back, fixes);
        assert.equal(pastCount(past), fixes.length);
        assert.equal(pastCount(appendHeldPast(null, fixes)), fixes.length);
        assert.ok(past.length <= fixes.length * MAX_FIX_BYTES);
      }),
      { numRuns: 500 },
    );
    const typical = storedFix({ longitude: 8.5, latitude: 47.3, speed: 12, heading: 90, accuracy: 5, time: NOW });
    assert.equal(appendPast(null, [versioned([...typical] as StoredFix, 0)]).length, 49);
    assert.equal(appendPast(null, [versioned([...typical] as StoredFix, 7)]).length, 53);
  });

  void it('past values the write path holds (latin1 strings) read back their fixes, bind as the bytes of a stored value, and count as one', () => {
    const location = sentLocation.map((sent) => storedFix(parseLocation(sent, NOW, 'location')));
    fc.assert(
      fc.property(fc.array(fc.array(location, { maxLength: 4 }), { maxLength: 8 }), fc.boolean(), (appends, fromRead) => {
        // A value as read from the file is held as its bytes.
        let stored: Buffer | null = fromRead ? appendPast(null, [storedFix(at0)]) : null;
        let held = holdPast(stored);
        for (const fixes of appends) {
          held = appendHeldPast(held, fixes);
          stored = appendPast(stored, fixes);
          assert.deepEqual(decodePast(held), decodePast(stored));
          assert.equal(pastCount(held), pastCount(stored));
          const bytes = pastBytes(held);
          assert.ok(bytes !== null && stored.equals(bytes), 'bound bytes are the stored value');
          assert.equal(held.length, stored.length);
        }
        if (held === null) assert.equal(pastBytes(held), null);
      }),
      { numRuns: 1000 },
    );
    assert.equal(holdPast(null), null);
    assert.deepEqual(decodePast(''), []);
    // Every byte value survives the round trip (latin1 is one character per byte).
    const all = Buffer.from(Array.from({ length: 256 }, (_v, i) => i));
    assert.ok(pastBytes(holdPast(all))?.equals(all));
  });

  void it('bounds compare times as stored (ms) as they compare the normalised text', () => {
    const op = fc.constantFrom<HistoryBound[0]>('>=', '>', '<=', '<');
    const instant = fc.integer({ min: MIN, max: MAX });
    fc.assert(
      fc.property(instant, fc.array(fc.tuple(op, instant), { maxLength: 2 }), (time, raw) => {
        const bounds: HistoryBound[] = raw.map(([o, ms]) => [o, new Date(ms).toISOString()]);
        const limits = bounds.map(([o, text]): [HistoryBound[0], number] => [o, fixTime(text)]);
        assert.equal(withinLimits(time, limits), withinBounds(new Date(time).toISOString(), bounds));
      }),
      { numRuns: 2000 },
    );
  });
});
