/**
 * REST v2 history and search in Hivekit's forms (hivekit-rest.md D3, D4, D5, D12):
 * `GET /v2/realm/<r>/history/<id>` (bare array of {data, location, time}) and
 * `GET /v2/realm/<r>/search?searchString=` (match records over objects and areas); the
 * older forms (`/object/<id>/history`, `?q=`) keep their bodies.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, makeRealm, startHarness, type Harness } from '../support/harness.js';

describe('REST v2 history and search, Hivekit forms', () => {
  let h: Harness;
  let read: string;
  let write: string;
  const T = (s: number): string => new Date(Date.parse('2024-05-01T10:00:00.000Z') + s * 1000).toISOString();

  before(async () => {
    h = await startHarness();
    ({ read, write } = await makeRealm(h.url, 'fleet'));
    const post = async (path: string, body: unknown): Promise<void> => {
      const res = await call(h.url, 'POST', path, { token: write, body });
      assert.equal(res.status, 200, res.text);
    };
    await post('/v2/realm/fleet/object/van%2F1', { label: 'Van 1', location: { longitude: 13, latitude: 52, time: T(0) }, data: { valueA: 1 } });
    await post('/v2/realm/fleet/object/van%2F1', { location: { longitude: 14, latitude: 53, speed: 3.5, time: T(1) }, data: { valueA: 2, valueB: 1 } });
    await post('/v2/realm/fleet/object/van%2F1', { location: { longitude: 15, latitude: 54, time: '2024-05-01T10:00:02.123456789Z' }, data: { valueB: 2 } });
    await post('/v2/realm/fleet/object/scooter-1', { label: 'Scooter One', data: { type: 'scooter' } });
    await post('/v2/realm/fleet/area/zone-1', { label: 'City zone', shape: { w: 0, s: 0, e: 10, n: 10 }, data: { type: 'city scooter' } });
    await post('/v2/realm/fleet/area/van%2F1', { label: 'Van depot', shape: { cx: 1, cy: 1, r: 100 } });
  });
  after(async () => {
    await h.stop();
  });

  const get = (path: string): ReturnType<typeof call> => call(h.url, 'GET', path, { token: read });
  const loc = (longitude: number, latitude: number, time: string, speed = 0): Record<string, unknown> => ({
    accuracy: 0,
    altitude: 0,
    altitudeAccuracy: 0,
    heading: 0,
    latitude,
    longitude,
    speed,
    time,
  });

  describe('GET /v2/realm/<r>/history/<id>', () => {
    it('answers a bare array, oldest first, each entry with the data after its write and a zero-filled location', async () => {
      const res = await get('/v2/realm/fleet/history/van%2F1');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, [
        { data: { valueA: 1 }, location: loc(13, 52, T(0)), time: T(0) },
        { data: { valueA: 2, valueB: 1 }, location: loc(14, 53, T(1), 3.5), time: T(1) },
        { data: { valueA: 2, valueB: 2 }, location: loc(15, 54, '2024-05-01T10:00:02.123Z'), time: '2024-05-01T10:00:02.123Z' },
      ]);
      assert.equal(res.headers.get('x-next-cursor'), null);
    });

    it('start and end (or from and to) are inclusive, in ISO 8601 up to nanoseconds or Unix milliseconds', async () => {
      const times = async (query: string): Promise<string[]> => {
        const res = await get(`/v2/realm/fleet/history/van%2F1?${query}`);
        assert.equal(res.status, 200, res.text);
        return (res.json as { time: string }[]).map((e) => e.time);
      };
      assert.deepEqual(await times(`start=${T(1)}&end=${T(1)}`), [T(1)]);
      assert.deepEqual(await times(`start=${Date.parse(T(1))}`), [T(1), '2024-05-01T10:00:02.123Z']);
      assert.deepEqual(await times(`end=2024-05-01T10:00:00.000000001Z`), [T(0)]);
      assert.deepEqual(await times(`from=${T(1)}&to=${Date.parse(T(1))}`), [T(1)]);
      assert.deepEqual(await times(`start=${encodeURIComponent('2024-05-01T12:00:01+02:00')}`), [T(1), '2024-05-01T10:00:02.123Z']);
      assert.deepEqual(await times(`start=2030-01-01T00:00:00Z`), []);
    });

    it('pages with limit, cursor (X-Next-Cursor) and order', async () => {
      const first = await get('/v2/realm/fleet/history/van%2F1?limit=2&order=desc');
      assert.equal(first.status, 200, first.text);
      assert.deepEqual((first.json as { time: string }[]).map((e) => e.time), ['2024-05-01T10:00:02.123Z', T(1)]);
      const cursor = first.headers.get('x-next-cursor');
      assert.ok(cursor !== null);
      const rest = await get(`/v2/realm/fleet/history/van%2F1?limit=2&order=desc&cursor=${encodeURIComponent(cursor)}`);
      assert.deepEqual((rest.json as { data: unknown }[]).map((e) => e.data), [{ valueA: 1 }]);
      assert.equal(rest.headers.get('x-next-cursor'), null);
    });

    it('an unknown object is a 404; a known object without fixes an empty array', async () => {
      const missing = await get('/v2/realm/fleet/history/nobody');
      assert.equal(missing.status, 404);
      assert.equal(missing.json.error.message, 'unknown object nobody');
      const empty = await get('/v2/realm/fleet/history/scooter-1');
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.json, []);
    });

    it('bad parameters are a 400 naming the problem', async () => {
      for (const [query, text] of [
        ['start=yesterday', /start must be an ISO 8601 date-time/],
        ['start=2024-05-02T00:00:00Z&end=2024-05-01T00:00:00Z', /start .* is after end/],
        ['start=2024-05-01T00:00:00Z&from=2024-05-01T00:00:00Z', /either start or from/],
        ['limit=0', /limit/],
        ['order=sideways', /order must be asc or desc/],
        ['colour=red', /unknown query parameter "colour"/],
        ['start=99999999999999999', /out of range/],
      ] as const) {
        const res = await get(`/v2/realm/fleet/history/van%2F1?${query}`);
        assert.equal(res.status, 400, query);
        assert.match(res.json.error.message, text, query);
      }
    });

    it('the older path keeps its {id, locations} body', async () => {
      const res = await get('/v2/realm/fleet/object/van%2F1/history');
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.json), ['id', 'locations']);
      assert.equal(res.json.id, 'van/1');
      assert.deepEqual(res.json.locations[0], { longitude: 13, latitude: 52, time: T(0) });
    });
  });

  describe('GET /v2/realm/<r>/search?searchString=', () => {
    it('answers match records over objects and areas, long names, best first, with a score', async () => {
      const res = await get('/v2/realm/fleet/search?searchString=scooter');
      assert.equal(res.status, 200, res.text);
      assert.ok(Array.isArray(res.json));
      const records = res.json as Record<string, unknown>[];
      assert.deepEqual(
        records.map(({ score: _score, ...rest }) => rest),
        [
          { id: 'scooter-1', type: 'object', label: 'Scooter One', field: 'id', value: 'scooter-1', start: 0, end: 7 },
          { id: 'scooter-1', type: 'object', label: 'Scooter One', field: 'label', value: 'Scooter One', start: 0, end: 7 },
          { id: 'scooter-1', type: 'object', label: 'Scooter One', field: 'data', value: 'scooter', start: 0, end: 7, property: 'type' },
          { id: 'zone-1', type: 'area', label: 'City zone', field: 'data', value: 'city scooter', start: 5, end: 12, property: 'type' },
        ],
      );
      const scores = records.map((r) => r.score as number);
      assert.deepEqual([...scores].sort((a, b) => b - a), scores);
    });

    it('fields, maxObjectResults and maxAreaResults narrow it; an object and an area of one id are both found', async () => {
      const both = await get('/v2/realm/fleet/search?searchString=van&fields=id');
      assert.deepEqual((both.json as { type: string; id: string }[]).map((r) => [r.type, r.id]), [['object', 'van/1'], ['area', 'van/1']]);
      const noAreas = await get('/v2/realm/fleet/search?searchString=van&fields=id,label&maxAreaResults=0');
      assert.deepEqual((noAreas.json as { type: string; field: string }[]).map((r) => [r.type, r.field]), [['object', 'id'], ['object', 'label']]);
      const none = await get('/v2/realm/fleet/search?searchString=van&maxObjectResults=0&maxAreaResults=0');
      assert.deepEqual(none.json, []);
      const nothing = await get('/v2/realm/fleet/search?searchString=does-not-exist');
      assert.deepEqual(nothing.json, []);
    });

    it('bad parameters are a 400; the q form keeps its keyed body', async () => {
      for (const [query, text] of [
        ['', /searchString is required/],
        ['searchString=', /searchString is required/],
        ['searchString=x&fields=colour', /fields may list only id, label and data/],
        ['searchString=x&maxObjectResults=-1', /maxObjectResults must be an integer from 0 to 10000/],
        ['searchString=x&maxAreaResults=10001', /maxAreaResults must be an integer/],
        ['searchString=x&q=x', /unknown query parameter "q"/],
        ['searchString=x&limit=3', /unknown query parameter "limit"/],
      ] as const) {
        const res = await get(`/v2/realm/fleet/search?${query}`);
        assert.equal(res.status, 400, query);
        assert.match(res.json.error.message, text, query);
      }
      const old = await get('/v2/realm/fleet/search?q=scoot');
      assert.equal(old.status, 200);
      assert.deepEqual(Object.keys(old.json), ['scooter-1']);
      assert.equal(typeof old.json['scooter-1'].score, 'number');
    });
  });
});
