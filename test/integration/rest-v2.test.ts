/**
 * The REST v2 scenario table: every endpoint over a real server and SQLite file.
 * Scenarios run in order and build on each other. Every rejected request (status
 * >= 400) must leave the stored data exactly as it was: the table asserts it by
 * dumping every row of every table before and after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, dumpStore, makeRealm, startHarness, type Harness, type Reply } from '../support/harness.js';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
let nowMs = t0;
const clock = (): number => nowMs;

type TokenName = 'read' | 'write' | 'admin' | 'r2write' | 'admin-env' | 'bogus' | 'none';

interface Scenario {
  name: string;
  method: string;
  path: string;
  token?: TokenName;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  status: number;
  /** Exact JSON body expected. */
  json?: unknown;
  /** Error code expected (v2 error body). */
  code?: string;
  /** Extra checks on the reply. */
  check?: (reply: Reply & { url: string; token: string | null }) => void | Promise<void>;
  /** Advance the clock before the request. */
  advanceMs?: number;
}

/** A query string, each value URL-encoded. */
const qs = (params: Record<string, string>): string => new URLSearchParams(params).toString();

const loc = (longitude: number, latitude: number, time?: string): Record<string, unknown> =>
  time === undefined ? { longitude, latitude } : { longitude, latitude, time };

const scenarios: Scenario[] = [
  // --- system endpoints
  { name: 'healthz needs no token', method: 'GET', path: '/healthz', status: 200, json: { status: 'ok' } },
  { name: 'readyz needs no token', method: 'GET', path: '/readyz', status: 200, json: { status: 'ready' } },
  {
    name: 'version needs no token',
    method: 'GET',
    path: '/v2/version',
    status: 200,
    check: (r) => {
      assert.equal(r.json.version, '0.1.0');
      assert.ok(!Number.isNaN(Date.parse(r.json.buildDate as string)));
    },
  },

  // --- objects: create, read, merge
  {
    name: 'create an object whose id has a slash',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { label: 'Truck', location: loc(13.4, 52.5), data: { speed: 10, color: 'red', ok: true } },
    status: 200,
    json: { id: 'vehicle/17', result: 'success' },
  },
  {
    name: 'read it back: time stamped with the receive time; dis (a location write does not make it con)',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle%2F17',
    token: 'read',
    status: 200,
    json: {
      id: 'vehicle/17',
      label: 'Truck',
      location: { longitude: 13.4, latitude: 52.5, time: '2026-01-01T00:00:00.000Z' },
      data: { speed: 10, color: 'red', ok: true },
      connectionStatus: 'dis',
    },
  },
  {
    name: 'update merges data and removes null keys, keeps the label',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { data: { color: null, fuel: 0.5, missing: null } },
    status: 200,
    json: { id: 'vehicle/17', result: 'success' },
  },
  {
    name: 'merged data visible',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle%2F17',
    status: 200,
    check: (r) => {
      assert.deepEqual(r.json.data, { speed: 10, ok: true, fuel: 0.5 });
      assert.equal(r.json.label, 'Truck');
    },
  },
  {
    name: 'POST is an alias; a null label clears it; an id equal to the path is allowed',
    method: 'POST',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { id: 'vehicle/17', label: null },
    status: 200,
    json: { id: 'vehicle/17', result: 'success' },
  },
  {
    name: 'label cleared',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle%2F17',
    status: 200,
    check: (r) => assert.equal(r.json.label, null),
  },
  {
    name: 'an object with no location and no data reads with nulls and {}',
    method: 'PUT',
    path: '/v2/realm/r1/object/plain',
    body: {},
    status: 200,
    json: { id: 'plain', result: 'success' },
  },
  {
    name: 'plain object read',
    method: 'GET',
    path: '/v2/realm/r1/object/plain',
    status: 200,
    json: { id: 'plain', label: null, location: null, data: {}, connectionStatus: 'dis' },
  },
  {
    name: 'unicode id, percent-encoded',
    method: 'PUT',
    path: `/v2/realm/r1/object/${encodeURIComponent('車両-🚚')}`,
    body: { label: 'Lieferwagen é' },
    status: 200,
  },
  {
    name: 'unicode id read back',
    method: 'GET',
    path: `/v2/realm/r1/object/${encodeURIComponent('車両-🚚')}`,
    status: 200,
    check: (r) => {
      assert.equal(r.json.id, '車両-🚚');
      assert.equal(r.json.label, 'Lieferwagen é');
    },
  },
  {
    name: 'an encoded %2F is decoded exactly once',
    method: 'PUT',
    path: '/v2/realm/r1/object/literal%252Fpercent',
    body: { label: 'pct' },
    status: 200,
  },
  {
    name: 'the id holds a literal %2F',
    method: 'GET',
    path: '/v2/realm/r1/object/literal%252Fpercent',
    status: 200,
    check: (r) => assert.equal(r.json.id, 'literal%2Fpercent'),
  },
  {
    name: 'an unencoded slash is not an id separator: no such route',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle/17',
    status: 404,
    code: 'not_found',
  },

  // --- location ordering and bulk history
  {
    name: 'a fix with an explicit time',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { location: loc(13.5, 52.6, '2026-01-01T00:00:30Z') },
    status: 200,
  },
  {
    name: 'an older fix (by offset) never overwrites the newer current location',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { location: loc(0, 0, '2026-01-01T01:00:10+02:00') },
    status: 200,
  },
  {
    name: 'current location is still the newer fix',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle%2F17',
    status: 200,
    check: (r) => assert.deepEqual(r.json.location, { longitude: 13.5, latitude: 52.6, time: '2026-01-01T00:00:30.000Z' }),
  },
  {
    name: 'bulk: several entries of one id are history, the latest time wins',
    method: 'POST',
    path: '/v2/realm/r1/object',
    body: {
      objects: [
        { id: 'bus/1', label: 'Bus', location: loc(1, 1, '2026-01-01T00:00:10Z'), data: { line: 5 } },
        { id: 'bus/1', location: loc(3, 3, '2026-01-01T00:00:30.250Z') },
        { id: 'bus/1', location: loc(2, 2, '2026-01-01T00:00:20Z'), data: { line: 7, full: false } },
        { id: 'bus/2', location: { longitude: -70.1, latitude: -33.4 } },
      ],
    },
    status: 200,
    json: { result: 'success', count: 4 },
  },
  {
    name: 'bus/1 current location is the newest fix; data merged in array order',
    method: 'GET',
    path: '/v2/realm/r1/object/bus%2F1',
    status: 200,
    json: {
      id: 'bus/1',
      label: 'Bus',
      location: { longitude: 3, latitude: 3, time: '2026-01-01T00:00:30.250Z' },
      data: { line: 7, full: false },
      connectionStatus: 'dis',
    },
  },
  {
    name: 'PUT is an alias of bulk POST',
    method: 'PUT',
    path: '/v2/realm/r1/object',
    body: { objects: [{ id: 'bus/3', label: 'Bus 3' }] },
    status: 200,
    json: { result: 'success', count: 1 },
  },

  // --- lists
  {
    name: 'list without fields: id, label and connectionStatus only (dis: no presence connection)',
    method: 'GET',
    path: '/v2/realm/r1/object',
    token: 'read',
    status: 200,
    json: {
      'bus/1': { id: 'bus/1', label: 'Bus', connectionStatus: 'dis' },
      'bus/2': { id: 'bus/2', label: null, connectionStatus: 'dis' },
      'bus/3': { id: 'bus/3', label: 'Bus 3', connectionStatus: 'dis' },
      'literal%2Fpercent': { id: 'literal%2Fpercent', label: 'pct', connectionStatus: 'dis' },
      plain: { id: 'plain', label: null, connectionStatus: 'dis' },
      'vehicle/17': { id: 'vehicle/17', label: null, connectionStatus: 'dis' },
      '車両-🚚': { id: '車両-🚚', label: 'Lieferwagen é', connectionStatus: 'dis' },
    },
    check: (r) => assert.equal(r.headers.get('x-next-cursor'), null),
  },
  {
    name: 'list with fields: data holds only the named fields the object has',
    method: 'GET',
    path: '/v2/realm/r1/object?fields=line,speed&limit=2',
    status: 200,
    json: {
      'bus/1': { id: 'bus/1', label: 'Bus', data: { line: 7 }, connectionStatus: 'dis' },
      'bus/2': { id: 'bus/2', label: null, data: {}, connectionStatus: 'dis' },
    },
    check: async (r) => {
      const cursor = r.headers.get('x-next-cursor');
      assert.ok(cursor);
      const next = await call(r.url, 'GET', `/v2/realm/r1/object?limit=4&cursor=${encodeURIComponent(cursor)}`, {
        token: r.token,
      });
      assert.equal(next.status, 200);
      assert.deepEqual(Object.keys(next.json as object).sort(), ['bus/3', 'literal%2Fpercent', 'plain', 'vehicle/17']);
      const last = await call(
        r.url,
        'GET',
        `/v2/realm/r1/object?cursor=${encodeURIComponent(next.headers.get('x-next-cursor') ?? '')}`,
        { token: r.token },
      );
      assert.deepEqual(Object.keys(last.json as object), ['車両-🚚']);
      assert.equal(last.headers.get('x-next-cursor'), null);
    },
  },
  {
    name: 'still dis long after (connectionTimeout is no longer used)',
    method: 'GET',
    path: '/v2/realm/r1/object/bus%2F1',
    advanceMs: 121_000,
    status: 200,
    check: (r) => assert.equal(r.json.connectionStatus, 'dis'),
  },
  { name: 'limit 0 is a 400', method: 'GET', path: '/v2/realm/r1/object?limit=0', status: 400, code: 'invalid_query' },
  { name: 'limit over the page maximum is a 400', method: 'GET', path: '/v2/realm/r1/object?limit=10001', status: 400, code: 'invalid_query' },
  { name: 'a bad cursor is a 400', method: 'GET', path: '/v2/realm/r1/object?cursor=%21%21garbage', status: 400, code: 'invalid_cursor' },
  { name: 'an unknown query parameter is a 400', method: 'GET', path: '/v2/realm/r1/object?limt=5', status: 400, code: 'invalid_query' },
  { name: 'a repeated parameter is a 400', method: 'GET', path: '/v2/realm/r1/object?limit=1&limit=2', status: 400, code: 'invalid_query' },

  // --- rejected object writes change nothing
  {
    name: 'an unknown key in the body is a 400 naming it',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { label: 'x', colour: 'blue' },
    status: 400,
    check: (r) => assert.match(r.json.error.message as string, /colour/),
  },
  {
    name: 'an id in the body that differs from the path is a 400',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { id: 'vehicle/18', label: 'x' },
    status: 400,
  },
  {
    name: 'data nested beyond 8 levels is a 400',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { data: { a: [[[[[[[[1]]]]]]]] } },
    status: 400,
    code: 'invalid_data',
    check: (r) => assert.match(r.json.error.message as string, /^data\.a(\[0\]){7} is nested too deeply/),
  },
  { name: 'a null location is a 400', method: 'PUT', path: '/v2/realm/r1/object/vehicle%2F17', body: { location: null }, status: 400, code: 'invalid_location' },
  {
    name: 'an impossible date is a 400',
    method: 'PUT',
    path: '/v2/realm/r1/object/vehicle%2F17',
    body: { location: loc(1, 1, '2026-02-30T00:00:00Z') },
    status: 400,
    code: 'invalid_location',
  },
  { name: 'latitude out of range is a 400', method: 'PUT', path: '/v2/realm/r1/object/x', body: { location: loc(1, 91) }, status: 400, code: 'invalid_location' },
  { name: 'a body that is an array is a 400', method: 'PUT', path: '/v2/realm/r1/object/x', body: [1, 2], status: 400 },
  {
    name: 'bulk with one invalid entry writes nothing',
    method: 'POST',
    path: '/v2/realm/r1/object',
    body: { objects: [{ id: 'new/1', label: 'ok' }, { id: 'new/2', location: loc(200, 0) }] },
    status: 400,
    check: (r) => assert.match(r.json.error.message as string, /objects\[1\]/),
  },
  { name: 'bulk entry without id is a 400', method: 'POST', path: '/v2/realm/r1/object', body: { objects: [{ label: 'x' }] }, status: 400 },
  { name: 'bulk without objects is a 400', method: 'POST', path: '/v2/realm/r1/object', body: { object: [] }, status: 400 },
  {
    name: 'bulk over the entry limit is a 413',
    method: 'POST',
    path: '/v2/realm/r1/object',
    body: { objects: Array.from({ length: 51 }, (_, i) => ({ id: `b${i}` })) },
    status: 413,
    code: 'too_large',
  },
  {
    name: 'a body over the size limit is a 413',
    method: 'PUT',
    path: '/v2/realm/r1/object/big',
    body: { label: 'x'.repeat(70_000) },
    status: 413,
    code: 'too_large',
  },
  {
    name: 'another media type is a 415',
    method: 'PUT',
    path: '/v2/realm/r1/object/x',
    rawBody: 'label=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'a body without a content type is a 415',
    method: 'PUT',
    path: '/v2/realm/r1/object/x',
    rawBody: '{"label":"x"}',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'malformed JSON is a 400',
    method: 'PUT',
    path: '/v2/realm/r1/object/x',
    rawBody: '{"label": ',
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'a JSON scalar body is a 400 that says the body must be an object, not that it is malformed',
    method: 'PUT',
    path: '/v2/realm/r1/object/x',
    rawBody: '"label"',
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 'invalid_request',
    check: (r) => assert.equal(r.json.error.message, 'the request body must be a JSON object (got the string "label")'),
  },
  { name: 'an id over 256 bytes is a 400', method: 'PUT', path: `/v2/realm/r1/object/${'é'.repeat(129)}`, body: {}, status: 400, code: 'invalid_id' },
  { name: 'a control character in an id is a 400', method: 'PUT', path: '/v2/realm/r1/object/a%07b', body: {}, status: 400, code: 'invalid_id' },
  { name: 'malformed percent-encoding is a 400', method: 'GET', path: '/v2/realm/r1/object/%E0%A4%A', status: 400 },

  // --- filters and shapes (objects now: bus/1 Bus (3,3) line 7; bus/2 (-70.1,-33.4); bus/3 "Bus 3";
  // literal%2Fpercent "pct"; plain; vehicle/17 (13.5,52.6) speed 10; 車両-🚚 "Lieferwagen é")
  {
    name: 'filter: type-strict equality on a data field, with fields',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ filter: 'line=7', fields: 'line' })}`,
    token: 'read',
    status: 200,
    json: { 'bus/1': { id: 'bus/1', label: 'Bus', data: { line: 7 }, connectionStatus: 'dis' } },
  },
  { name: 'filter: the string "7" is not the number 7', method: 'GET', path: `/v2/realm/r1/object?${qs({ filter: 'line="7"' })}`, status: 200, json: {} },
  {
    name: 'filter: != matches a missing field; = null a missing one',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ filter: 'line!=7,speed=null,label!=null' })}`,
    status: 200,
    check: (r) => assert.deepEqual(Object.keys(r.json as object).sort(), ['bus/3', 'literal%2Fpercent', '車両-🚚']),
  },
  {
    name: 'filter: > compares strings by code point; quoted values may hold commas',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ filter: 'label>"Bus",label<"a,b"' })}`,
    status: 200,
    check: (r) => assert.deepEqual(Object.keys(r.json as object).sort(), ['bus/3', '車両-🚚']),
  },
  {
    name: 'shape: a circle (JSON in the query string)',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ shape: JSON.stringify({ cx: 13.5, cy: 52.6, r: 1000 }) })}`,
    status: 200,
    json: { 'vehicle/17': { id: 'vehicle/17', label: null, connectionStatus: 'dis' } },
  },
  {
    name: 'shape: a rectangle; objects without a location are never inside',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ shape: JSON.stringify({ w: -180, n: 90, e: 180, s: -90 }) })}`,
    status: 200,
    check: (r) => assert.deepEqual(Object.keys(r.json as object).sort(), ['bus/1', 'bus/2', 'vehicle/17']),
  },
  {
    name: 'shape: a polygon',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ shape: JSON.stringify({ points: [[0, 0], [5, 0], [5, 5], [0, 5]] }) })}`,
    status: 200,
    check: (r) => assert.deepEqual(Object.keys(r.json as object), ['bus/1']),
  },
  {
    name: 'fields, filter, shape, limit and cursor together',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ fields: 'line', filter: 'speed!=3', shape: JSON.stringify({ w: -80, n: 60, e: 20, s: -40 }), limit: '1' })}`,
    status: 200,
    json: { 'bus/1': { id: 'bus/1', label: 'Bus', data: { line: 7 }, connectionStatus: 'dis' } },
    check: async (r) => {
      const collected: string[] = ['bus/1'];
      let cursor = r.headers.get('x-next-cursor');
      while (cursor !== null) {
        const next = await call(
          r.url,
          'GET',
          `/v2/realm/r1/object?${qs({ fields: 'line', filter: 'speed!=3', shape: JSON.stringify({ w: -80, n: 60, e: 20, s: -40 }), limit: '1', cursor })}`,
          { token: r.token },
        );
        assert.equal(next.status, 200);
        collected.push(...Object.keys(next.json as object));
        cursor = next.headers.get('x-next-cursor');
      }
      assert.deepEqual(collected, ['bus/1', 'bus/2', 'vehicle/17']);
    },
  },
  { name: 'an empty filter and an empty shape mean none', method: 'GET', path: '/v2/realm/r1/object?filter=&shape=&limit=1', status: 200 },
  {
    name: 'a malformed filter is a 400 naming the condition',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ filter: 'line=7,,x=1' })}`,
    status: 400,
    code: 'invalid_filter',
    check: (r) => assert.match(r.json.error.message as string, /condition 2/),
  },
  { name: 'a condition without operator is a 400', method: 'GET', path: `/v2/realm/r1/object?${qs({ filter: 'line' })}`, status: 400, code: 'invalid_filter' },
  {
    name: 'more conditions than allowed is a 400',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ filter: Array.from({ length: 101 }, (_, i) => `f${i}=1`).join(',') })}`,
    status: 400,
    code: 'invalid_filter',
  },
  { name: 'a shape that is not JSON is a 400', method: 'GET', path: `/v2/realm/r1/object?${qs({ shape: '{cx:1' })}`, status: 400, code: 'invalid_shape' },
  {
    name: 'a rectangle with s > n is a 400',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ shape: JSON.stringify({ w: 0, n: 1, e: 1, s: 2 }) })}`,
    status: 400,
    code: 'invalid_shape',
  },
  {
    name: 'a self-intersecting polygon is a 400',
    method: 'GET',
    path: `/v2/realm/r1/object?${qs({ shape: JSON.stringify({ points: [[0, 0], [1, 1], [1, 0], [0, 1]] }) })}`,
    status: 400,
    code: 'invalid_shape',
  },
  { name: 'a repeated filter is a 400', method: 'GET', path: '/v2/realm/r1/object?filter=a%3D1&filter=b%3D2', status: 400, code: 'invalid_filter' },

  // --- search
  {
    name: 'search: every word a prefix, over ids, labels and data; best first with a score',
    method: 'GET',
    path: '/v2/realm/r1/search?q=bus',
    token: 'read',
    status: 200,
    check: (r) => {
      assert.deepEqual(Object.keys(r.json as object).sort(), ['bus/1', 'bus/2', 'bus/3']);
      for (const entry of Object.values(r.json as Record<string, { score: number; connectionStatus: string }>)) {
        assert.equal(typeof entry.score, 'number');
        assert.deepEqual(Object.keys(entry), ['id', 'label', 'connectionStatus', 'score']);
      }
    },
  },
  {
    name: 'search: case and accents do not matter',
    method: 'GET',
    path: `/v2/realm/r1/search?${qs({ q: 'LIEFERW É' })}`,
    status: 200,
    check: (r) => {
      assert.deepEqual(Object.keys(r.json as object), ['車両-🚚']);
      const { score, ...entry } = r.json['車両-🚚'] as { score: number };
      assert.deepEqual(entry, { id: '車両-🚚', label: 'Lieferwagen é', connectionStatus: 'dis' });
      assert.ok(Number.isFinite(score));
    },
  },
  { name: 'search: limit', method: 'GET', path: '/v2/realm/r1/search?q=bus&limit=1', status: 200, check: (r) => assert.equal(Object.keys(r.json as object).length, 1) },
  { name: 'search: no words is a 400', method: 'GET', path: `/v2/realm/r1/search?${qs({ q: ' !? ' })}`, status: 400, code: 'invalid_query' },
  { name: 'search: a missing q is a 400', method: 'GET', path: '/v2/realm/r1/search', status: 400, code: 'invalid_query' },
  { name: 'search: limit 0 is a 400', method: 'GET', path: '/v2/realm/r1/search?q=bus&limit=0', status: 400, code: 'invalid_query' },
  { name: 'search: an unknown parameter is a 400', method: 'GET', path: '/v2/realm/r1/search?q=bus&fields=a', status: 400, code: 'invalid_query' },
  { name: 'search: another realm is a 403', method: 'GET', path: '/v2/realm/r1/search?q=bus', token: 'r2write', status: 403, code: 'forbidden' },
  { name: 'search: POST is a 405', method: 'POST', path: '/v2/realm/r1/search?q=bus', body: {}, status: 405, code: 'method_not_allowed' },

  // --- history (bus/1: fixes at 00:00:10, 00:00:20, 00:00:30.250)
  {
    name: 'history: every fix, oldest first',
    method: 'GET',
    path: '/v2/realm/r1/object/bus%2F1/history',
    token: 'read',
    status: 200,
    json: {
      id: 'bus/1',
      locations: [
        { longitude: 1, latitude: 1, time: '2026-01-01T00:00:10.000Z' },
        { longitude: 2, latitude: 2, time: '2026-01-01T00:00:20.000Z' },
        { longitude: 3, latitude: 3, time: '2026-01-01T00:00:30.250Z' },
      ],
    },
    check: (r) => assert.equal(r.headers.get('x-next-cursor'), null),
  },
  {
    name: 'history: an older fix that never became current is in the history',
    method: 'GET',
    path: '/v2/realm/r1/object/vehicle%2F17/history?order=desc&limit=1&from=2025-12-31T23:00:00Z&to=2025-12-31T23:59:59Z',
    status: 200,
    json: { id: 'vehicle/17', locations: [{ longitude: 0, latitude: 0, time: '2025-12-31T23:00:10.000Z' }] },
  },
  {
    name: 'history: newest first, paged',
    method: 'GET',
    path: '/v2/realm/r1/object/bus%2F1/history?order=desc&limit=2',
    status: 200,
    json: {
      id: 'bus/1',
      locations: [
        { longitude: 3, latitude: 3, time: '2026-01-01T00:00:30.250Z' },
        { longitude: 2, latitude: 2, time: '2026-01-01T00:00:20.000Z' },
      ],
    },
    check: async (r) => {
      const cursor = r.headers.get('x-next-cursor');
      assert.ok(cursor);
      const next = await call(r.url, 'GET', `/v2/realm/r1/object/bus%2F1/history?${qs({ order: 'desc', limit: '2', cursor })}`, { token: r.token });
      assert.deepEqual(next.json, { id: 'bus/1', locations: [{ longitude: 1, latitude: 1, time: '2026-01-01T00:00:10.000Z' }] });
      assert.equal(next.headers.get('x-next-cursor'), null);
    },
  },
  {
    name: 'history: from and to are inclusive and may carry an offset',
    method: 'GET',
    path: `/v2/realm/r1/object/bus%2F1/history?${qs({ from: '2026-01-01T01:00:20+01:00', to: '2026-01-01T00:00:30.250Z' })}`,
    status: 200,
    json: {
      id: 'bus/1',
      locations: [
        { longitude: 2, latitude: 2, time: '2026-01-01T00:00:20.000Z' },
        { longitude: 3, latitude: 3, time: '2026-01-01T00:00:30.250Z' },
      ],
    },
  },
  { name: 'history: an object without fixes has none', method: 'GET', path: '/v2/realm/r1/object/plain/history', status: 200, json: { id: 'plain', locations: [] } },
  { name: 'history: a missing object is a 404', method: 'GET', path: '/v2/realm/r1/object/nope/history', status: 404, code: 'not_found' },
  { name: 'history: a bad from is a 400', method: 'GET', path: '/v2/realm/r1/object/bus%2F1/history?from=yesterday', status: 400, code: 'invalid_query' },
  {
    name: 'history: from after to is a 400',
    method: 'GET',
    path: '/v2/realm/r1/object/bus%2F1/history?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
    status: 400,
    code: 'invalid_query',
  },
  { name: 'history: a bad order is a 400', method: 'GET', path: '/v2/realm/r1/object/bus%2F1/history?order=up', status: 400, code: 'invalid_query' },
  { name: 'history: an unknown parameter is a 400', method: 'GET', path: '/v2/realm/r1/object/bus%2F1/history?since=1', status: 400, code: 'invalid_query' },
  { name: 'history: a bad cursor is a 400', method: 'GET', path: '/v2/realm/r1/object/bus%2F1/history?cursor=xyz', status: 400, code: 'invalid_cursor' },

  { name: 'a method the route lacks is a 405', method: 'PATCH', path: '/v2/realm/r1/object/x', body: {}, status: 405, code: 'method_not_allowed' },
  { name: 'an unknown path is a 404', method: 'GET', path: '/v2/realm/r1/nothing', status: 404, code: 'not_found' },
  { name: 'reading a missing object is a 404', method: 'GET', path: '/v2/realm/r1/object/nope', status: 404, code: 'not_found' },

  // --- authentication and authorization (401, then 403, then 404)
  {
    name: 'no token is a 401 with WWW-Authenticate',
    method: 'GET',
    path: '/v2/realm/r1/object',
    token: 'none',
    status: 401,
    code: 'unauthorized',
    check: (r) => assert.equal(r.headers.get('www-authenticate'), 'Bearer'),
  },
  { name: 'an unknown token is a 401', method: 'GET', path: '/v2/realm/r1/object', token: 'bogus', status: 401, code: 'unauthorized' },
  { name: 'a 401 comes before a 404 for a missing realm', method: 'GET', path: '/v2/realm/ghost/object', token: 'bogus', status: 401 },
  { name: "another realm's token is a 403", method: 'GET', path: '/v2/realm/r1/object', token: 'r2write', status: 403, code: 'forbidden' },
  { name: 'a realm token never learns whether another realm exists', method: 'GET', path: '/v2/realm/ghost/object', token: 'write', status: 403, code: 'forbidden' },
  { name: 'a read token cannot write', method: 'PUT', path: '/v2/realm/r1/object/x', token: 'read', body: {}, status: 403, code: 'forbidden' },
  { name: 'a read token cannot delete', method: 'DELETE', path: '/v2/realm/r1/object/plain', token: 'read', status: 403, code: 'forbidden' },
  { name: 'an admin token gets a 404 for a missing realm', method: 'GET', path: '/v2/realm/ghost/object', token: 'admin-env', status: 404, code: 'not_found' },
  { name: 'a realm admin token reaches other realms', method: 'GET', path: '/v2/realm/r2/object', token: 'admin', status: 200, json: {} },

  // --- areas
  {
    name: 'create a circle area',
    method: 'POST',
    path: '/v2/realm/r1/area/zone%2F1',
    body: { label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 500 }, data: { kind: 'depot', open: true } },
    status: 200,
    json: { id: 'zone/1', result: 'success' },
  },
  { name: 'creating it again is a 409', method: 'POST', path: '/v2/realm/r1/area/zone%2F1', body: { label: 'Again', shape: { cx: 0, cy: 0, r: 1 } }, status: 409, code: 'conflict' },
  {
    name: 'create a rectangle across the antimeridian',
    method: 'POST',
    path: '/v2/realm/r1/area/pacific',
    body: { label: 'Pacific', shape: { w: 170, n: 10, e: -170, s: -10 } },
    status: 200,
    json: { id: 'pacific', result: 'success' },
  },
  {
    name: 'create a polygon',
    method: 'POST',
    path: '/v2/realm/r1/area/%E5%8C%BA%E5%9F%9F',
    body: { label: 'Tri', shape: { points: [[0, 0], [1, 0], [0, 1]] }, data: {} },
    status: 200,
    json: { id: '区域', result: 'success' },
  },
  {
    name: 'partial update merges data, removes nulls, keeps shape',
    method: 'PATCH',
    path: '/v2/realm/r1/area/zone%2F1',
    body: { data: { open: null, capacity: 12 } },
    status: 200,
    json: { id: 'zone/1', result: 'success' },
  },
  {
    name: 'read the area',
    method: 'GET',
    path: '/v2/realm/r1/area/zone%2F1',
    token: 'read',
    status: 200,
    json: { id: 'zone/1', label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 500 }, data: { kind: 'depot', capacity: 12 } },
  },
  {
    name: 'reshape and relabel',
    method: 'PATCH',
    path: '/v2/realm/r1/area/zone%2F1',
    body: { label: 'Depot 2', shape: { w: 13, n: 53, e: 14, s: 52 } },
    status: 200,
  },
  {
    name: 'list areas with shapeType',
    method: 'GET',
    path: '/v2/realm/r1/area',
    token: 'read',
    status: 200,
    json: {
      pacific: { id: 'pacific', label: 'Pacific', shapeType: 'rectangle' },
      'zone/1': { id: 'zone/1', label: 'Depot 2', shapeType: 'rectangle' },
      区域: { id: '区域', label: 'Tri', shapeType: 'polygon' },
    },
  },
  { name: 'PATCH of a missing area is a 404', method: 'PATCH', path: '/v2/realm/r1/area/nope', body: { label: 'x' }, status: 404, code: 'not_found' },
  { name: 'a self-intersecting polygon is a 400', method: 'POST', path: '/v2/realm/r1/area/bow', body: { label: 'x', shape: { points: [[0, 0], [1, 1], [1, 0], [0, 1]] } }, status: 400, code: 'invalid_shape' },
  { name: 'a shape mixing kinds is a 400', method: 'POST', path: '/v2/realm/r1/area/mix', body: { label: 'x', shape: { cx: 0, cy: 0, r: 5, w: 1 } }, status: 400, code: 'invalid_shape' },
  { name: 'a rectangle with s > n is a 400', method: 'POST', path: '/v2/realm/r1/area/bad', body: { label: 'x', shape: { w: 0, n: 1, e: 1, s: 2 } }, status: 400, code: 'invalid_shape' },
  { name: 'a zero radius is a 400', method: 'POST', path: '/v2/realm/r1/area/bad', body: { label: 'x', shape: { cx: 0, cy: 0, r: 0 } }, status: 400, code: 'invalid_shape' },
  { name: 'an area without shape is a 400', method: 'POST', path: '/v2/realm/r1/area/bad', body: { label: 'x' }, status: 400 },
  {
    name: 'an area without label is a 400 naming it',
    method: 'POST',
    path: '/v2/realm/r1/area/bad',
    body: { shape: { cx: 0, cy: 0, r: 1 } },
    status: 400,
    json: { result: 'error', error: { code: 'invalid_request', message: 'label is required: a string naming the area' } },
  },
  { name: 'a null shape in PATCH is a 400', method: 'PATCH', path: '/v2/realm/r1/area/pacific', body: { shape: null }, status: 400 },
  { name: 'a read token cannot create areas', method: 'POST', path: '/v2/realm/r1/area/ro', token: 'read', body: { label: 'x', shape: { cx: 0, cy: 0, r: 1 } }, status: 403 },
  { name: 'delete an area', method: 'DELETE', path: '/v2/realm/r1/area/pacific', status: 200, json: { id: 'pacific', result: 'success' } },
  { name: 'a deleted area is gone', method: 'GET', path: '/v2/realm/r1/area/pacific', status: 404, code: 'not_found' },
  { name: 'deleting it again is a 404', method: 'DELETE', path: '/v2/realm/r1/area/pacific', status: 404, code: 'not_found' },

  // --- deletes
  { name: 'delete an object', method: 'DELETE', path: '/v2/realm/r1/object/vehicle%2F17', status: 200, json: { id: 'vehicle/17', result: 'success' } },
  { name: 'a deleted object is gone', method: 'GET', path: '/v2/realm/r1/object/vehicle%2F17', status: 404, code: 'not_found' },
  { name: 'deleting it again is a 404', method: 'DELETE', path: '/v2/realm/r1/object/vehicle%2F17', status: 404, code: 'not_found' },
  { name: 'realm r2 never sees r1 objects', method: 'GET', path: '/v2/realm/r2/object/bus%2F1', token: 'r2write', status: 404, code: 'not_found' },
];

describe('REST v2 scenario table', () => {
  let h: Harness;
  const tokens: Record<string, string | null> = {};

  before(async () => {
    h = await startHarness({ maxBulk: 50, maxBodyBytes: 64 * 1024 }, clock);
    const r1 = await makeRealm(h.url, 'r1');
    const r2 = await makeRealm(h.url, 'r2');
    Object.assign(tokens, { ...r1, r2write: r2.write, 'admin-env': adminToken, bogus: 'lcs_nope', none: null });
  });
  after(async () => {
    await h.stop();
  });

  for (const s of scenarios) {
    it(`${s.method} ${s.path.slice(0, 60)}: ${s.name}`, async () => {
      if (s.advanceMs !== undefined) nowMs += s.advanceMs;
      const before = s.status >= 400 ? (await dumpStore(h.server.store)) : null;
      const token = tokens[s.token ?? 'write'] ?? null;
      const reply = await call(h.url, s.method, s.path, {
        token,
        ...(s.body === undefined ? {} : { body: s.body }),
        ...(s.rawBody === undefined ? {} : { rawBody: s.rawBody }),
        ...(s.headers === undefined ? {} : { headers: s.headers }),
      });
      assert.equal(reply.status, s.status, `status; body: ${reply.text}`);
      assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
      if (s.json !== undefined) assert.deepEqual(reply.json, s.json);
      if (s.status >= 400) {
        assert.equal(reply.json.result, 'error');
        assert.equal(typeof reply.json.error.message, 'string');
        if (s.code !== undefined) assert.equal(reply.json.error.code, s.code);
        assert.doesNotMatch(reply.text, /at .*\.js:\d+|SqliteError|TypeError/);
        assert.equal((await dumpStore(h.server.store)), before, 'a rejected request must not change stored data');
      }
      await s.check?.({ ...reply, url: h.url, token });
    });
  }
});
