/**
 * One scenario table, four transports: REST v2, `/v1/http`, WebSocket and TCP run the
 * same steps (each in its own realm). REST answers in its own form and is compared
 * exactly; v1 speaks Hivekit's envelope (its own records, `erc` numbers), so over v1 each
 * step must succeed or fail as over REST, fail with the REST status of the same code, list
 * the same ids and page the same way. A rejected step must leave the stored data as it
 * was (every row of every table is compared before and after), whatever the transport.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, dumpStore, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectV1, postV1, type Json, type V1Client } from '../support/v1-clients.js';

type Op = 'upd' | 'blk' | 'get' | 'lis' | 'del' | 'sea' | 'his' | 'are-cre' | 'are-upd' | 'are-get' | 'are-lis' | 'are-del';

interface Step {
  name: string;
  op: Op;
  id?: string;
  /** Body of a write, or parameters of a list, search or history. */
  dat?: Record<string, unknown>;
  token?: 'read' | 'write';
  /** Pass the previous step's next-page cursor as `cursor`. */
  nextPage?: boolean;
  /** Expected payload (REST body without `result`, v1 `dat`), compared exactly. */
  dat_?: unknown;
  /** Expected error code. */
  code?: string;
  /** Whether a next-page cursor must (true) or must not (false) be given. */
  more?: boolean;
  check?: (dat: Json) => void;
  /**
   * REST only: search and history are v1's `rea sea` and `his rea` (other forms), and v1
   * ignores unknown keys (compat 3.7) where REST rejects them.
   */
  restOnly?: true;
}

interface Outcome {
  ok: boolean;
  dat: Json;
  code: string | null;
  next: string | null;
}

const maxBulk = 50;
const t = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;
const tn = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000Z`;
const loc = (longitude: number, latitude: number, time: string): Record<string, unknown> => ({ longitude, latitude, time });
const entry = (id: string, label: string | null, data?: Record<string, unknown>): Record<string, unknown> =>
  data === undefined ? { id, label, connectionStatus: 'dis' } : { id, label, data, connectionStatus: 'dis' };
const noLocation = (id: string, label: string | null): Record<string, unknown> => ({ id, label, connectionStatus: 'dis' });

const steps: Step[] = [
  // --- create, read, update
  {
    name: 'create an object whose id has a slash',
    op: 'upd',
    id: 'vehicle/17',
    dat: { label: 'Truck 17', location: loc(13.4, 52.5, t(1)), data: { speed: 10, color: 'red', ok: true } },
  },
  {
    name: 'read it back',
    op: 'get',
    id: 'vehicle/17',
    token: 'read',
    dat_: {
      id: 'vehicle/17',
      label: 'Truck 17',
      location: { longitude: 13.4, latitude: 52.5, time: tn(1) },
      data: { speed: 10, color: 'red', ok: true },
      connectionStatus: 'dis',
    },
  },
  { name: 'update merges data and removes null keys', op: 'upd', id: 'vehicle/17', dat: { location: loc(13.5, 52.5, t(2)), data: { speed: 20, color: null } } },
  {
    name: 'the merge is visible',
    op: 'get',
    id: 'vehicle/17',
    dat_: {
      id: 'vehicle/17',
      label: 'Truck 17',
      location: { longitude: 13.5, latitude: 52.5, time: tn(2) },
      data: { speed: 20, ok: true },
      connectionStatus: 'dis',
    },
  },
  {
    name: 'bulk: three objects, one without a location',
    op: 'blk',
    dat: {
      objects: [
        { id: 'bus/1', label: 'Bus one', location: loc(13.41, 52.51, t(3)), data: { speed: 5, line: 'M10' } },
        { id: 'bus/2', label: 'Bus two', data: { line: 'M10' } },
        { id: 'tram/3', label: 'Tram', location: loc(2.35, 48.85, t(3)), data: { speed: 30 } },
      ],
    },
    dat_: { count: 3 },
  },
  {
    name: 'bulk: entries of one id are history; the newest fix becomes current',
    op: 'blk',
    dat: { objects: [{ id: 'bus/1', location: loc(13.43, 52.53, t(9)) }, { id: 'bus/1', location: loc(13.42, 52.52, t(5)) }] },
    dat_: { count: 2 },
  },
  {
    name: 'an older fix never overwrites the current one',
    op: 'upd',
    id: 'bus/1',
    dat: { location: loc(0, 0, t(4)) },
  },
  {
    name: 'current location after history writes',
    op: 'get',
    id: 'bus/1',
    check: (dat) => assert.deepEqual(dat.location, { longitude: 13.43, latitude: 52.53, time: tn(9) }),
  },
  {
    name: 'history, oldest first',
    op: 'his',
    id: 'bus/1',
    token: 'read',
    dat_: {
      id: 'bus/1',
      locations: [
        { longitude: 13.41, latitude: 52.51, time: tn(3) },
        { longitude: 0, latitude: 0, time: tn(4) },
        { longitude: 13.42, latitude: 52.52, time: tn(5) },
        { longitude: 13.43, latitude: 52.53, time: tn(9) },
      ],
    },
  },
  {
    name: 'history, newest first, one page of two',
    op: 'his',
    id: 'bus/1',
    dat: { order: 'desc', limit: 2 },
    more: true,
    check: (dat) => assert.deepEqual((dat.locations as { time: string }[]).map((l) => l.time), [tn(9), tn(5)]),
  },

  // --- lists
  {
    name: 'list: id, label and connectionStatus of every object, no data',
    op: 'lis',
    token: 'read',
    more: false,
    dat_: {
      'bus/1': entry('bus/1', 'Bus one'),
      'bus/2': noLocation('bus/2', 'Bus two'),
      'tram/3': entry('tram/3', 'Tram'),
      'vehicle/17': entry('vehicle/17', 'Truck 17'),
    },
  },
  {
    name: 'list with fields',
    op: 'lis',
    dat: { fields: ['speed', 'line'] },
    dat_: {
      'bus/1': entry('bus/1', 'Bus one', { speed: 5, line: 'M10' }),
      'bus/2': { ...noLocation('bus/2', 'Bus two'), data: { line: 'M10' } },
      'tram/3': entry('tram/3', 'Tram', { speed: 30 }),
      'vehicle/17': entry('vehicle/17', 'Truck 17', { speed: 20 }),
    },
  },
  { name: 'list, first page of two', op: 'lis', dat: { limit: 2 }, more: true, check: (dat) => assert.deepEqual(Object.keys(dat), ['bus/1', 'bus/2']) },
  {
    name: 'list, next page from the cursor',
    op: 'lis',
    dat: { limit: 2 },
    nextPage: true,
    more: false,
    check: (dat) => assert.deepEqual(Object.keys(dat), ['tram/3', 'vehicle/17']),
  },
  {
    name: 'list with a filter',
    op: 'lis',
    dat: { filter: 'speed>8,line!="M10"' },
    check: (dat) => assert.deepEqual(Object.keys(dat).sort(), ['tram/3', 'vehicle/17']),
  },
  {
    name: 'list within a shape (a rectangle around Berlin)',
    op: 'lis',
    dat: { shape: { w: 13, s: 52, e: 14, n: 53 } },
    check: (dat) => assert.deepEqual(Object.keys(dat).sort(), ['bus/1', 'vehicle/17']),
  },
  {
    name: 'list with a filter and a shape (a circle)',
    op: 'lis',
    dat: { filter: 'speed>8', shape: { cx: 13.4, cy: 52.5, r: 20_000 }, fields: ['speed'] },
    dat_: { 'vehicle/17': entry('vehicle/17', 'Truck 17', { speed: 20 }) },
  },
  {
    name: 'search finds by a word prefix of label or data',
    op: 'sea',
    dat: { q: 'bus m10' },
    token: 'read',
    check: (dat) => {
      assert.deepEqual(Object.keys(dat).sort(), ['bus/1', 'bus/2']);
      for (const hit of Object.values<Json>(dat)) assert.equal(typeof hit.score, 'number');
    },
  },

  // --- areas
  { name: 'create an area', op: 'are-cre', id: 'zone/1', dat: { label: 'Zone', shape: { w: 13, s: 52, e: 14, n: 53 }, data: { kind: 'depot' } }, dat_: { id: 'zone/1' } },
  { name: 'creating it again is a conflict', op: 'are-cre', id: 'zone/1', dat: { label: 'Again', shape: { cx: 0, cy: 0, r: 10 } }, code: 'conflict' },
  { name: 'update an area: data merged', op: 'are-upd', id: 'zone/1', dat: { data: { open: true } }, dat_: { id: 'zone/1' } },
  {
    name: 'read the area',
    op: 'are-get',
    id: 'zone/1',
    token: 'read',
    dat_: { id: 'zone/1', label: 'Zone', shape: { w: 13, s: 52, e: 14, n: 53 }, data: { kind: 'depot', open: true } },
  },
  { name: 'list areas', op: 'are-lis', token: 'read', more: false, dat_: { 'zone/1': { id: 'zone/1', label: 'Zone', shapeType: 'rectangle' } } },
  { name: 'delete the area', op: 'are-del', id: 'zone/1', dat_: { id: 'zone/1' } },
  { name: 'the deleted area is gone', op: 'are-get', id: 'zone/1', code: 'not_found' },

  // --- delete
  { name: 'delete an object', op: 'del', id: 'bus/2' },
  { name: 'the deleted object is gone', op: 'get', id: 'bus/2', code: 'not_found' },
  { name: 'deleting it again is not_found', op: 'del', id: 'bus/2', code: 'not_found' },

  // --- errors (nothing is written)
  { name: 'an id over 256 bytes', op: 'get', id: 'x'.repeat(257), code: 'invalid_id' },
  { name: 'a latitude out of range', op: 'upd', id: 'bad', dat: { location: { longitude: 0, latitude: 95 } }, code: 'invalid_location' },
  { name: 'an unknown key in the body', op: 'upd', id: 'bad', dat: { colour: 'red' }, code: 'invalid_request', restOnly: true },
  { name: 'data nested beyond 8 levels', op: 'upd', id: 'bad', dat: { data: { a: [[[[[[[[1]]]]]]]] } }, code: 'invalid_data' },
  { name: 'a fix dated far in the future (9999-12-31)', op: 'upd', id: 'bad', dat: { location: loc(0, 0, '9999-12-31T00:00:00Z') }, code: 'invalid_location' },
  {
    name: 'a bulk with one fix dated far in the future writes nothing',
    op: 'blk',
    dat: { objects: [{ id: 'ok', location: loc(0, 0, t(5)) }, { id: 'late', location: loc(0, 0, '9999-12-31T00:00:00Z') }] },
    code: 'invalid_location',
  },
  { name: 'a bulk with one invalid entry writes nothing', op: 'blk', dat: { objects: [{ id: 'ok' }, { id: 'bad', location: { latitude: 1 } }] }, code: 'invalid_location' },
  {
    name: 'more bulk entries than the limit',
    op: 'blk',
    dat: { objects: Array.from({ length: maxBulk + 1 }, (_, i) => ({ id: `n${i}` })) },
    code: 'too_large',
  },
  { name: 'a write with a read token', op: 'upd', id: 'bad', token: 'read', dat: { label: 'x' }, code: 'forbidden' },
  { name: 'a list limit of 0', op: 'lis', dat: { limit: 0 }, code: 'invalid_query' },
  { name: 'an unknown list parameter', op: 'lis', dat: { sort: 'id' }, code: 'invalid_query', restOnly: true },
  { name: 'a bad cursor', op: 'lis', dat: { cursor: 'not-a-cursor' }, code: 'invalid_cursor' },
  { name: 'a malformed filter', op: 'lis', dat: { filter: 'speed' }, code: 'invalid_filter' },
  { name: 'a malformed shape', op: 'lis', dat: { shape: { w: 1 } }, code: 'invalid_shape' },
  { name: 'an empty search', op: 'sea', dat: { q: '' }, code: 'invalid_query' },
  { name: 'an area with a self-intersecting polygon', op: 'are-cre', id: 'bow', dat: { label: 'Bow', shape: { points: [[0, 0], [1, 1], [1, 0], [0, 1]] } }, code: 'invalid_shape' },
  { name: 'updating a missing area', op: 'are-upd', id: 'nope', dat: { label: 'x' }, code: 'not_found' },
  { name: 'history of a missing object', op: 'his', id: 'nope', code: 'not_found' },
];

/** REST query parameters from v1-style values: arrays comma-joined, objects as JSON. */
function query(dat: Record<string, unknown> | undefined): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(dat ?? {})) {
    params.set(key, Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : JSON.stringify(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

interface Driver {
  run(step: Step, dat: Record<string, unknown> | undefined): Promise<Outcome>;
  close(): Promise<void>;
}

type Tokens = { read: string; write: string };

function restDriver(h: Harness, realm: string, tokens: Tokens): Driver {
  const base = `/v2/realm/${encodeURIComponent(realm)}`;
  const requests: Record<Op, (step: Step, dat?: Record<string, unknown>) => [string, string, unknown]> = {
    upd: (s, d) => ['PUT', `/object/${encodeURIComponent(s.id ?? '')}`, d ?? {}],
    blk: (_s, d) => ['POST', '/object', d],
    get: (s) => ['GET', `/object/${encodeURIComponent(s.id ?? '')}`, undefined],
    lis: (_s, d) => ['GET', `/object${query(d)}`, undefined],
    del: (s) => ['DELETE', `/object/${encodeURIComponent(s.id ?? '')}`, undefined],
    sea: (_s, d) => ['GET', `/search${query(d)}`, undefined],
    his: (s, d) => ['GET', `/object/${encodeURIComponent(s.id ?? '')}/history${query(d)}`, undefined],
    'are-cre': (s, d) => ['POST', `/area/${encodeURIComponent(s.id ?? '')}`, d ?? {}],
    'are-upd': (s, d) => ['PATCH', `/area/${encodeURIComponent(s.id ?? '')}`, d ?? {}],
    'are-get': (s) => ['GET', `/area/${encodeURIComponent(s.id ?? '')}`, undefined],
    'are-lis': (_s, d) => ['GET', `/area${query(d)}`, undefined],
    'are-del': (s) => ['DELETE', `/area/${encodeURIComponent(s.id ?? '')}`, undefined],
  };
  return {
    async run(step, dat) {
      const [method, path, body] = requests[step.op](step, dat);
      const reply = await call(h.url, method, base + path, { token: tokens[step.token ?? 'write'], body });
      if (reply.status !== 200) return { ok: false, dat: reply.json?.error, code: reply.json?.error?.code ?? `status ${reply.status}`, next: null };
      const payload = Object.fromEntries(Object.entries(reply.json as Record<string, unknown>).filter(([key]) => key !== 'result'));
      return { ok: true, dat: payload, code: null, next: reply.headers.get('x-next-cursor') };
    },
    close: () => Promise.resolve(),
  };
}

const LOCATION_KEYS: Record<string, string> = {
  longitude: 'lon',
  latitude: 'lat',
  altitude: 'alt',
  speed: 'spe',
  heading: 'hea',
  accuracy: 'acc',
  altitudeAccuracy: 'alc',
  time: 'tim',
};

/** A REST shape in v1's `sty`/`sha` (compat 4.3). */
function v1Shape(shape: Json): Record<string, unknown> {
  if (typeof shape !== 'object' || shape === null) return { sty: 'rec', sha: shape };
  if ('points' in shape) return { sty: 'pol', sha: { points: (shape.points as Json[]).map((p: Json): unknown => (Array.isArray(p) ? { x: p[0], y: p[1] } : p)) } };
  if ('r' in shape || 'cx' in shape) return { sty: 'cir', sha: shape };
  return { sty: 'rec', sha: { x1: shape.w, y1: shape.s, x2: shape.e, y2: shape.n } };
}

/** The REST body of an object or area write as v1 keys (`lab`, `loc`, `dat`, `sty`/`sha`); other keys as they are. */
function v1Fields(dat: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(dat ?? {})) {
    if (key === 'label') out.lab = value;
    else if (key === 'data') out.dat = value;
    else if (key === 'shape') Object.assign(out, v1Shape(value));
    else if (key === 'location' && typeof value === 'object' && value !== null) {
      out.loc = Object.fromEntries(Object.entries(value).map(([k, v]) => [LOCATION_KEYS[k] ?? k, v]));
    } else out[key] = value;
  }
  return out;
}

/** The v1 message of a step (REST's PUT is an upsert: `obj cre`; list and bulk parameters go in `dat`). */
function action(step: Step, dat: Record<string, unknown> | undefined): Record<string, unknown> {
  const [typ, act] = step.op.startsWith('are-') ? ['are', step.op.slice(4)] : ['obj', step.op];
  const head: Record<string, unknown> = { typ, act: act === 'upd' && typ === 'obj' ? 'cre' : act === 'get' ? 'rea' : act, cid: step.name };
  if (step.id !== undefined) head.id = step.id;
  if (act === 'lis' || act === 'blk') return { ...head, dat: dat ?? {} };
  return { ...head, ...v1Fields(dat) };
}

/** HTTP status of each error code the steps expect. */
const STATUS: Record<string, number> = {
  not_found: 404,
  conflict: 409,
  forbidden: 403,
  too_large: 413,
};

function outcomeOf(result: Json): Outcome {
  if (result.res === 'suc') return { ok: true, dat: result.dat, code: null, next: result.nxt ?? null };
  return { ok: false, dat: { message: result.err, erc: result.erc }, code: String(result.erc), next: null };
}

function httpDriver(h: Harness, tokens: Tokens): Driver {
  return {
    async run(step, dat) {
      const reply = await postV1(h.url, tokens[step.token ?? 'write'], [action(step, dat)]);
      assert.equal(reply.status, 200, JSON.stringify(reply.json));
      assert.equal(reply.json[0].cid, step.name);
      return outcomeOf(reply.json[0]);
    },
    close: () => Promise.resolve(),
  };
}

function socketDriver(h: Harness, transport: 'ws' | 'tcp', tokens: Tokens): Driver {
  const clients = new Map<string, V1Client>();
  return {
    async run(step, dat) {
      const scope = step.token ?? 'write';
      let client = clients.get(scope);
      if (client === undefined) {
        client = await connectV1(transport, h.server, tokens[scope]);
        clients.set(scope, client);
      }
      const [result] = await client.request([action(step, dat)]);
      assert.equal(result.cid, step.name);
      return outcomeOf(result);
    },
    async close() {
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}

describe('transport scenarios: REST, /v1/http, WebSocket and TCP give the same answers', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ maxBulk });
  });
  after(async () => {
    await h.stop();
  });

  const transports = {
    rest: (tokens: Tokens) => restDriver(h, 'sc-rest', tokens),
    http: (tokens: Tokens) => httpDriver(h, tokens),
    ws: (tokens: Tokens) => socketDriver(h, 'ws', tokens),
    tcp: (tokens: Tokens) => socketDriver(h, 'tcp', tokens),
  } as const;

  for (const [name, make] of Object.entries(transports)) {
    describe(name, () => {
      let driver: Driver;
      let previous: Outcome | null = null;
      before(async () => {
        const tokens = await makeRealm(h.url, `sc-${name}`);
        driver = make(tokens);
      });
      after(async () => {
        await driver.close();
      });

      for (const step of steps) {
        const v1 = name !== 'rest';
        if (v1 && (step.restOnly === true || step.op === 'sea' || step.op === 'his')) continue;
        it(step.name, async () => {
          let dat = step.dat;
          if (step.nextPage === true) {
            assert.ok(previous?.next, 'the previous step gave a cursor');
            dat = { ...dat, cursor: previous.next };
          }
          const before = step.code === undefined ? null : (await dumpStore(h.server.store));
          const outcome = await driver.run(step, dat);
          previous = outcome;
          if (step.code !== undefined) {
            assert.equal(outcome.code, v1 ? String(STATUS[step.code] ?? 400) : step.code, JSON.stringify(outcome.dat));
            assert.equal(typeof outcome.dat.message, 'string');
            assert.equal((await dumpStore(h.server.store)), before, 'a rejected step changed the stored data');
            return;
          }
          assert.ok(outcome.ok, JSON.stringify(outcome.dat));
          if (step.more !== undefined) assert.equal(outcome.next !== null, step.more, 'next-page cursor');
          if (!v1) {
            if (step.dat_ !== undefined) assert.deepEqual(outcome.dat, step.dat_);
            step.check?.(outcome.dat);
            return;
          }
          // v1: lists hold the same ids; a bulk's count is the same; reads are checked below.
          if ((step.op === 'lis' || step.op === 'are-lis') && step.dat_ !== undefined) {
            assert.deepEqual(Object.keys(outcome.dat as object).sort(), Object.keys(step.dat_ as object).sort());
          }
          if (step.op === 'lis' && step.check !== undefined) step.check(outcome.dat);
          if (step.op === 'blk' && step.dat_ !== undefined) assert.deepEqual(outcome.dat, step.dat_);
          if ((step.op === 'get' || step.op === 'are-get') && step.dat_ !== undefined) {
            const expected = step.dat_ as Json;
            assert.equal(outcome.dat.id, expected.id);
            if (expected.label !== null) assert.equal(outcome.dat.lab, expected.label);
            assert.deepEqual(outcome.dat.dat ?? {}, expected.data);
          }
        });
      }
    });
  }
});
