/**
 * v1 `his rea` and `rea sea` (hivekit-compat.md 7.1, 7.2, 12.2–12.4), run through their
 * handlers on a real SQLite store and the real services; at the end, the same over a real
 * WebSocket and `/v1/http`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../internal/auth/principal.js';
import type { Realm } from '../../internal/domain/types.js';
import { LocusError } from '../../internal/errors.js';
import { AreaService } from '../../internal/service/areas.js';
import { noChangeListener } from '../../internal/service/changes.js';
import { ObjectService } from '../../internal/service/objects.js';
import { RealmSearch } from '../../internal/service/realm-search.js';
import { openSqliteStore, type SqliteStore } from '../../internal/store/sqlite/sqlite-store.js';
import type { HandlerDeps } from '../../internal/transport/actions/handlers/deps.js';
import { historyHandlers } from '../../internal/transport/actions/handlers/history.js';
import { searchHandlers } from '../../internal/transport/actions/handlers/search.js';
import type { V1Caller, V1Handler } from '../../internal/transport/actions/v1-handler.js';
import { makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectWs, postV1 } from '../support/v1-clients.js';

const SETTINGS = { connectionTimeout: 120, historyRetentionDays: 30, rateLimit: null };

describe('v1 his rea and rea sea (handlers)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'locus-v1-his-'));
  let store: SqliteStore;
  let objects: ObjectService;
  let areas: AreaService;
  let realm: Realm;
  let his: V1Handler;
  let sea: V1Handler;
  let now = Date.parse('2024-05-01T12:00:00.000Z');
  const principal: Principal = { tokenId: 'admin', kind: 'admin', tenant: 'default', realm: null, scope: 'admin' };
  const caller: V1Caller = { principal, connection: null };

  const run = async (handler: V1Handler, raw: Record<string, unknown>): Promise<Readonly<Record<string, unknown>>> => {
    const answer = await handler.run({ typ: String(raw.typ), act: String(raw.act), cid: 'c1', raw }, realm, caller);
    assert.ok(answer !== null);
    return answer;
  };
  const history = (id: string, dat: unknown): Promise<Readonly<Record<string, unknown>>> => run(his, { typ: 'his', act: 'rea', id, rea: 'r', dat, cid: 'c1' });
  const search = (dat: unknown): Promise<Readonly<Record<string, unknown>>> => run(sea, { typ: 'rea', act: 'sea', rea: 'r', dat, cid: 'c1' });
  const rejects = async (promise: Promise<unknown>, status: number, text: RegExp): Promise<void> => {
    await assert.rejects(promise, (err: unknown) => err instanceof LocusError && err.status === status && text.test(err.message));
  };

  before(async () => {
    store = openSqliteStore(join(dir, 'x.db'));
    const clock = (): number => now;
    objects = new ObjectService(store, clock, { maxBulk: 10_000, maxPage: 10_000 }, noChangeListener);
    areas = new AreaService(store, { maxPage: 10_000, maxVertices: 10_000 }, noChangeListener);
    ({ realm } = await store.realms.put('r', SETTINGS, '2024-05-01T00:00:00.000Z'));
    const deps = { objects, areas, search: new RealmSearch(store) } as unknown as HandlerDeps;
    his = historyHandlers(deps).his?.rea as V1Handler;
    sea = searchHandlers(deps).rea?.sea as V1Handler;
    assert.equal(his.realm, 'rea');
    assert.equal(his.need, 'R');
    assert.equal(sea.realm, 'rea');
    assert.equal(sea.need, 'R');
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('his rea', () => {
    it("reproduces compat 7.1: three sets 100 ms apart, the third with only valueB, read back with the merged data", async () => {
      const start = new Date(now - 1_000_000).toISOString();
      for (const [lon, lat, dat] of [
        [13, 52, { valueA: 1 }],
        [14, 53, { valueA: 2, valueB: 1 }],
        [15, 54, { valueB: 2 }],
      ] as const) {
        await objects.upsert(realm, 'tracker-a', { location: { longitude: lon, latitude: lat }, data: dat });
        now += 100;
      }
      const reply = await history('tracker-a', { sta: start, end: new Date(now).toISOString() });
      const t = (ms: number): string => new Date(Date.parse('2024-05-01T12:00:00.000Z') + ms).toISOString();
      const loc = (lon: number, lat: number, tim: string): Record<string, unknown> => ({ gcs: '', lon, lat, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0, tim });
      assert.deepEqual(reply, {
        dat: [
          { id: 'tracker-a', loc: loc(13, 52, t(0)), dat: { valueA: 1 } },
          { id: 'tracker-a', loc: loc(14, 53, t(100)), dat: { valueA: 2, valueB: 1 } },
          { id: 'tracker-a', loc: loc(15, 54, t(200)), dat: { valueA: 2, valueB: 2 } },
        ],
      });
      // sta and end are inclusive, on the fix time; Unix milliseconds work too.
      const middle = await history('tracker-a', { sta: t(100), end: Date.parse(t(100)) });
      assert.deepEqual((middle.dat as { dat: unknown }[]).map((r) => r.dat), [{ valueA: 2, valueB: 1 }]);
    });

    it('shows the label and every location key of each fix', async () => {
      await objects.upsert(realm, 'labelled', {
        label: 'Van 1',
        location: { longitude: 1.5, latitude: -2, altitude: 30, speed: 4, heading: 90, accuracy: 5, altitudeAccuracy: 2, time: '2024-05-01T11:00:00Z' },
      });
      const reply = await history('labelled', {});
      assert.deepEqual(reply.dat, [
        { id: 'labelled', lab: 'Van 1', loc: { gcs: '', lon: 1.5, lat: -2, acc: 5, spe: 4, hea: 90, alt: 30, alc: 2, tim: '2024-05-01T11:00:00.000Z' }, dat: {} },
      ]);
    });

    it('an unknown object, an empty range or a write without location: []', async () => {
      assert.deepEqual(await history('nobody', { sta: '2024-01-01T00:00:00.000Z', end: '2025-01-01T00:00:00.000Z' }), { dat: [] });
      assert.deepEqual(await history('tracker-a', { sta: '2020-01-01T00:00:00.000Z', end: '2020-01-02T00:00:00.000Z' }), { dat: [] });
      await objects.upsert(realm, 'no-fix', { data: { a: 1 } });
      assert.deepEqual(await history('no-fix', {}), { dat: [] });
    });

    it('pages beyond 10,000 records with nxt', async () => {
      const patches = Array.from({ length: 10_005 }, (_, i) => ({ id: 'many', location: { longitude: 0, latitude: 0, time: new Date(Date.parse('2024-04-01T00:00:00Z') + i * 1000).toISOString() } }));
      for (let i = 0; i < patches.length; i += 5000) await objects.bulk(realm, { objects: patches.slice(i, i + 5000) });
      const first = await history('many', {});
      assert.equal((first.dat as unknown[]).length, 10_000);
      assert.equal(typeof first.nxt, 'string');
      const second = await history('many', { nxt: first.nxt });
      assert.equal((second.dat as unknown[]).length, 5);
      assert.equal(second.nxt, undefined);
    });

    it('bad input is a 400 with a clear text', async () => {
      await rejects(history('tracker-a', { sta: 'yesterday' }), 400, /sta must be an ISO 8601 date-time/);
      await rejects(history('tracker-a', { sta: '2024-05-02T00:00:00Z', end: '2024-05-01T00:00:00Z' }), 400, /sta .* is after end/);
      await rejects(history('tracker-a', { end: 1.5 }), 400, /end must be an ISO 8601 date-time or Unix time/);
      await rejects(history('tracker-a', 'x'), 400, /dat must be an object/);
      await rejects(run(his, { typ: 'his', act: 'rea', rea: 'r' }), 400, /id must be the object id/);
      await rejects(history('tracker-a', { nxt: 'bogus' }), 400, /cursor/);
    });
  });

  describe('rea sea (compat 7.2 test/search-test.js)', () => {
    before(async () => {
      const location = { longitude: 13.404954, latitude: 52.520008 };
      for (const [id, label, type, charge] of [
        ['object-a-x1', 'Object A Label', 'scooter', 0.1],
        ['object-b-x1', 'Object B Label', 'scooter', 0.2],
        ['object-c-x1', 'Object C Label', 'car', 0.3],
        ['object-d-x1', 'Object D Label', 'truck', 0.4],
        ['object-e-x1', 'Object E Label', 'truck', 0.5],
        ['object-f-x1', 'Object F Label', 'truck', 0.6],
      ] as const) {
        await objects.upsert(realm, id, { label, location, data: { type, charge } });
      }
      const shape = { w: 0, s: 0, e: 10, n: 10 };
      for (const [id, label, type, charge] of [
        ['area-a-x1', 'Area A Label', 'city scooter', 0.1],
        ['area-b-x1', 'Area B Label', 'city', 0.2],
        ['area-c-x1', 'Area C Label', 'city', 0.3],
        ['area-d-x1', 'Area D Label', 'country', 0.4],
        ['area-e-x1', 'Area E Label', 'country', 0.5],
        ['area-f-x1', 'Area F Label', 'country', 0.6],
      ] as const) {
        await areas.create(realm, id, { label, shape, data: { type, charge } });
      }
    });

    it('scooter: 3 records, exactly the eight keys of a data match', async () => {
      const { dat } = await search({ val: 'scooter' });
      assert.ok(Array.isArray(dat));
      assert.equal(dat.length, 3);
      assert.deepEqual(new Set(dat.map((r) => JSON.stringify(r))), new Set([
        JSON.stringify({ id: 'object-a-x1', typ: 'obj', lab: 'Object A Label', fie: 'dat', val: 'scooter', sta: 0, end: 7, sty: 'type' }),
        JSON.stringify({ id: 'object-b-x1', typ: 'obj', lab: 'Object B Label', fie: 'dat', val: 'scooter', sta: 0, end: 7, sty: 'type' }),
        JSON.stringify({ id: 'area-a-x1', typ: 'are', lab: 'Area A Label', fie: 'dat', val: 'city scooter', sta: 5, end: 12, sty: 'type' }),
      ]));
    });

    it('Object in label and id: 12; label only: 6; maxObjectResults 3: 3; does-not-exist: 0', async () => {
      const both = (await search({ val: 'Object', fie: ['label', 'id'] })).dat as Record<string, unknown>[];
      assert.equal(both.length, 12);
      assert.equal(both.filter((r) => r.fie === 'id').length, 6);
      for (const r of both) assert.deepEqual(Object.keys(r), ['id', 'typ', 'lab', 'fie', 'val', 'sta', 'end']);
      assert.equal(((await search({ val: 'Object', fie: ['label'] })).dat as unknown[]).length, 6);
      const capped = (await search({ val: 'Object', fie: ['label'], maxObjectResults: 3 })).dat as Record<string, unknown>[];
      assert.equal(capped.length, 3);
      // The cap counts entities: every record of a kept object comes back.
      const perEntity = (await search({ val: 'Object', fie: ['label', 'id'], maxObjectResults: 2 })).dat as Record<string, unknown>[];
      assert.equal(perEntity.length, 4);
      assert.equal(new Set(perEntity.map((r) => r.id)).size, 2);
      assert.deepEqual((await search({ val: 'does-not-exist' })).dat, []);
    });

    it('areas are capped by maxAreaResults; unlabelled entities show lab ""', async () => {
      const areasOnly = (await search({ val: 'country', maxAreaResults: 2 })).dat as Record<string, unknown>[];
      assert.equal(areasOnly.length, 2);
      assert.ok(areasOnly.every((r) => r.typ === 'are'));
      await objects.upsert(realm, 'plain', { data: { note: 'unlabelled scooter' } });
      const plain = ((await search({ val: 'unlabelled' })).dat as Record<string, unknown>[])[0];
      assert.deepEqual(plain, { id: 'plain', typ: 'obj', lab: '', fie: 'dat', val: 'unlabelled scooter', sta: 0, end: 10, sty: 'note' });
    });

    it('bad input is a 400 with a clear text; unknown keys are ignored', async () => {
      await rejects(search({}), 400, /val is required/);
      await rejects(search({ val: '' }), 400, /val is required/);
      await rejects(search(undefined), 400, /dat must be an object/);
      await rejects(search({ val: 'x', fie: 'label' }), 400, /fie must be an array/);
      await rejects(search({ val: 'x', fie: ['colour'] }), 400, /fie may list only id, label and data/);
      await rejects(search({ val: 'x', maxObjectResults: -1 }), 400, /maxObjectResults must be an integer from 0 to 10000/);
      assert.equal(((await search({ val: 'scooter', someOption: true })).dat as unknown[]).length, 4);
    });
  });
});

/** compat 7.1 and 7.2 over a real WebSocket and over `/v1/http`. */
describe('v1 his rea and rea sea over WebSocket and HTTP', () => {
  let h: Harness;
  let write: string;
  before(async () => {
    h = await startHarness();
    ({ write } = await makeRealm(h.url, 'fleet'));
  });
  after(async () => {
    await h.stop();
  });

  it('compat 7.1 over a WebSocket: three sets 100 ms apart, then his rea', async () => {
    const ws = await connectWs(h.url, write);
    try {
      const start = new Date(Date.now() - 1_000_000).toISOString();
      for (const [lon, lat, dat] of [
        [13, 52, { valueA: 1 }],
        [14, 53, { valueA: 2, valueB: 1 }],
        [15, 54, { valueB: 2 }],
      ] as const) {
        ws.sendText(JSON.stringify([{ typ: 'obj', act: 'set', id: 'object-a', rea: 'fleet', loc: { lon, lat }, dat }]));
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const [reply] = await ws.request([{ typ: 'his', act: 'rea', id: 'object-a', rea: 'fleet', dat: { sta: start, end: new Date().toISOString() }, cid: 'h1' }]);
      assert.equal(reply.cid, 'h1');
      assert.equal(reply.res, 'suc');
      assert.deepEqual(
        (reply.dat as { loc: { lon: number; lat: number }; dat: unknown }[]).map((r) => [r.loc.lon, r.loc.lat, r.dat]),
        [
          [13, 52, { valueA: 1 }],
          [14, 53, { valueA: 2, valueB: 1 }],
          [15, 54, { valueA: 2, valueB: 2 }],
        ],
      );
    } finally {
      await ws.close();
    }
  });

  it('compat 7.2 over /v1/http: scooter finds two objects and one area; an empty val is a 400', async () => {
    const location = { lon: 13.404954, lat: 52.520008 };
    const setup: unknown[] = [];
    for (const [id, type] of [['object-a-1', 'scooter'], ['object-b-1', 'scooter'], ['object-c-1', 'car']] as const) {
      setup.push({ typ: 'obj', act: 'cre', id, rea: 'fleet', lab: `Label ${id}`, loc: location, dat: { type }, cid: `c-${id}` });
    }
    setup.push({ typ: 'are', act: 'cre', id: 'area-a-1', rea: 'fleet', lab: 'Area A Label', sty: 'rec', sha: { x1: 0, y1: 0, x2: 10, y2: 10 }, dat: { type: 'city scooter' }, cid: 'c-area' });
    const created = await postV1(h.url, write, setup);
    assert.equal(created.status, 200);
    const found = await postV1(h.url, write, [{ typ: 'rea', act: 'sea', rea: 'fleet', dat: { val: 'scooter' }, cid: 's1' }]);
    const [reply] = found.json as { dat: unknown[] }[];
    assert.equal(reply?.dat.length, 3);
    assert.deepEqual(reply?.dat.find((r) => (r as { typ: string }).typ === 'are'), {
      id: 'area-a-1', typ: 'are', lab: 'Area A Label', fie: 'dat', val: 'city scooter', sta: 5, end: 12, sty: 'type',
    });
    const bad = await postV1(h.url, write, [{ typ: 'rea', act: 'sea', rea: 'fleet', dat: { val: '' }, cid: 's2' }]);
    const [error] = bad.json as { res: string; erc: number; err: string }[];
    assert.equal(error?.res, 'err');
    assert.equal(error?.erc, 400);
    assert.match(error?.err ?? '', /val is required/);
  });
});
