import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { parseLocation } from '../../internal/domain/location.js';
import { completeLocation, locationExtra } from '../../internal/store/sqlite/current-fix.js';
import { sentLocation } from '../support/location-arbitrary.js';

const NOW = '2024-05-01T12:00:00.000Z';

void describe('current location columns (schema version 9)', () => {
  void it('a location reads back through SQLite as its JSON text was: the same values, keys and order, -0 as 0', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (lon REAL, lat REAL, loc_extra BLOB, loc_time TEXT)');
      const write = db.prepare<[number, number, Uint8Array | null, string]>('INSERT INTO t VALUES (?, ?, ?, ?)');
      const read = db.prepare<[], [number, number, Buffer | null, string]>('SELECT lon, lat, loc_extra, loc_time FROM t').raw(true);
      fc.assert(
        fc.property(sentLocation, (sent) => {
          const location = parseLocation(sent, NOW, 'location');
          db.exec('DELETE FROM t');
          write.run(location.longitude, location.latitude, locationExtra(location), location.time);
          const [lon, lat, extra, time] = read.get() as [number, number, Buffer | null, string];
          const back = completeLocation({ longitude: lon + 0, latitude: lat + 0 }, extra, time);
          assert.equal(JSON.stringify(back), JSON.stringify(location));
          for (const value of Object.values(back)) if (typeof value === 'number') assert.ok(!Object.is(value, -0));
          // A fix without optional numbers stores none.
          assert.equal(extra === null, Object.keys(location).length === 3);
        }),
        { numRuns: 2000 },
      );
    } finally {
      db.close();
    }
  });

  void it('stores a byte of flags and a double per optional number present', () => {
    const extra = locationExtra({ longitude: 1, latitude: 2, speed: 12.25, accuracy: -0, time: NOW });
    assert.ok(extra !== null);
    assert.equal(extra.length, 1 + 2 * 8);
    assert.equal(extra[0], 0b01010);
    assert.equal(locationExtra({ longitude: 1, latitude: 2, time: NOW }), null);
  });
});
