/**
 * Conformance (hivekit-compat.md 7.1, 7.2, 12.2–12.4): `rea sea` match records over objects
 * and areas, and `his rea` entries with the location and the full data after each write.
 */
/* eslint-disable @typescript-eslint/no-unsafe-return -- mapping over the wire's arbitrary JSON */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  assertError,
  assertSuc,
  createRealm,
  sleep,
  uniqueId,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

const byKey = (a: Json, b: Json): number => JSON.stringify([a.id, a.fie]).localeCompare(JSON.stringify([b.id, b.fie]));

describe('conformance: search and history (compat 7)', () => {
  const c = conformanceSuite('search');
  const { req } = c;

  describe('search (7.2)', () => {
    let realm: string;
    const letters = ['A', 'B', 'C', 'D', 'E', 'F'];
    const ids = letters.map((l) => uniqueId(`object-${l.toLowerCase()}`));
    const label = (i: number): string => `Object ${letters[i]} Label`;
    /** The search records of `dat`, sorted; `[]` for an absent dat (no result). */
    const search = async (dat: Msg): Promise<Json[]> => {
      const r = await req({ typ: 'rea', act: 'sea', rea: realm, dat });
      assertSuc(r);
      if (r.dat === undefined) return [];
      assert.ok(Array.isArray(r.dat), `search dat must be an array: ${JSON.stringify(r.dat)}`);
      return [...(r.dat as Json[])].sort(byKey);
    };

    before(async () => {
      realm = uniqueId('search-realm');
      await createRealm(c.url, c.token, realm);
      const writes = ids.map((id, i) => ({ typ: 'obj', act: 'cre', id, rea: realm, lab: label(i), dat: { type: i < 2 ? 'scooter' : 'car' } }));
      const replies = await c.wire.batch([
        ...writes,
        { typ: 'are', act: 'cre', id: 'zone-1', rea: realm, lab: 'Mitte', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 500 }, dat: { kind: 'city scooter' } },
        { typ: 'are', act: 'cre', id: 'zone-2', rea: realm, lab: 'Mitte Nord', sty: 'cir', sha: { cx: 13.4, cy: 52.6, r: 500 } },
        { typ: 'obj', act: 'cre', id: 'plain-thing', rea: realm, dat: { note: 'quixotic' } },
      ]);
      for (const r of replies) assertSuc(r);
      // The search index may trail the writes a little: wait (bounded) until it has them.
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline && (await search({ val: 'scooter' })).length < 3) await sleep(50);
    });

    it('7.2: `scooter` finds two objects’ `type` and one area’s `city scooter`: exactly the eight-key records', async () => {
      const records = await search({ val: 'scooter' });
      const expected = [
        { id: ids[0], typ: 'obj', lab: label(0), fie: 'dat', val: 'scooter', sta: 0, end: 7, sty: 'type' },
        { id: ids[1], typ: 'obj', lab: label(1), fie: 'dat', val: 'scooter', sta: 0, end: 7, sty: 'type' },
        { id: 'zone-1', typ: 'are', lab: 'Mitte', fie: 'dat', val: 'city scooter', sta: 5, end: 12, sty: 'kind' },
      ].sort(byKey);
      assert.deepEqual(records, expected);
    });

    it('7.2: matching is case-insensitive (`Object` matches ids `object-…` and labels; `SCOOTER` matches `scooter`)', async () => {
      const records = await search({ val: 'Object', fie: ['label', 'id'] });
      assert.equal(records.length, 12);
      const expected = ids
        .flatMap((id, i) => [
          { id, typ: 'obj', lab: label(i), fie: 'lab', val: label(i), sta: 0, end: 6 },
          { id, typ: 'obj', lab: label(i), fie: 'id', val: id, sta: 0, end: 6 },
        ])
        .sort(byKey);
      assert.deepEqual(records, expected);
      assert.equal((await search({ val: 'SCOOTER' })).length, 3);
    });

    it('7.2: fie limits the fields searched: `Object` in ["label"] gives 6', async () => {
      const records = await search({ val: 'Object', fie: ['label'] });
      assert.equal(records.length, 6);
      for (const r of records) assert.equal(r.fie, 'lab');
    });

    it('7.2/12.2: maxObjectResults caps distinct objects (3); maxAreaResults caps areas', async () => {
      const capped = await search({ val: 'Object', fie: ['label'], maxObjectResults: 3 });
      assert.equal(capped.length, 3);
      assert.equal(new Set(capped.map((r) => r.id)).size, 3);
      assert.equal((await search({ val: 'mitte', fie: ['label'] })).length, 2);
      const areas = await search({ val: 'mitte', fie: ['label'], maxAreaResults: 1 });
      assert.equal(areas.length, 1);
      assert.equal(areas[0].typ, 'are');
    });

    it('7.2: a term that matches nothing gives no records', async () => {
      assert.deepEqual(await search({ val: 'does-not-exist' }), []);
    });

    it('12.3: an unlabelled entity’s record has lab ""', async () => {
      assert.deepEqual(await search({ val: 'quixotic' }), [{ id: 'plain-thing', typ: 'obj', lab: '', fie: 'dat', val: 'quixotic', sta: 0, end: 8, sty: 'note' }]);
    });

    it('12.6: search in a missing realm is `unknown realm <id>`, 404', async () => {
      const missing = uniqueId('nowhere');
      assertError(await req({ typ: 'rea', act: 'sea', rea: missing, dat: { val: 'x' } }), `unknown realm ${missing}`, 404);
    });
  });

  describe('history (7.1)', () => {
    /** Reads history, polling (bounded by `withinMs`) until `count` entries are there. */
    const history = async (realm: string, id: string, sta: string, end: string, count = 0, withinMs = 0): Promise<Json[]> => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const r = await req({ typ: 'his', act: 'rea', id, rea: realm, dat: { sta, end } });
        assertSuc(r);
        assert.ok(Array.isArray(r.dat), `history dat must be an array: ${JSON.stringify(r)}`);
        if ((r.dat as Json[]).length >= count || Date.now() >= deadline) return r.dat as Json[];
        await sleep(100);
      }
    };
    const iso = (ms: number): string => new Date(ms).toISOString();

    it('7.1: three sets 100 ms apart give three entries, oldest first, each with loc and the full data after that write (within 6 s)', async () => {
      const id = uniqueId('history-object');
      const start = Date.now();
      c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 13, lat: 52 }, dat: { valueA: 1 } }]);
      await sleep(100);
      c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 14, lat: 53 }, dat: { valueA: 2, valueB: 1 } }]);
      await sleep(100);
      c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 15, lat: 54 }, dat: { valueB: 2 } }]);
      await sleep(50);
      const entries = await history(c.realm, id, iso(start - 1_000_000), iso(Date.now() + 1000), 3, 6000);
      assert.equal(entries.length, 3, JSON.stringify(entries));
      assert.deepEqual(
        entries.map((e) => [e.loc.lon, e.loc.lat]),
        [
          [13, 52],
          [14, 53],
          [15, 54],
        ],
      );
      assert.deepEqual(
        entries.map((e) => e.dat),
        [{ valueA: 1 }, { valueA: 2, valueB: 1 }, { valueA: 2, valueB: 2 }],
      );
      for (const e of entries) {
        assert.equal(typeof e.loc.tim, 'string', 'loc uses the short keys, tim included');
        assert.equal(e.loc.longitude, undefined);
      }
    });

    it('7.1/12.4: sta/end filter on the fix time; an empty range and an unknown object give []', async () => {
      const id = uniqueId('history-times');
      const times = ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z'];
      for (const [i, tim] of times.entries()) {
        assertSuc(await req({ typ: 'obj', act: i === 0 ? 'cre' : 'upd', id, rea: c.realm, loc: { lon: i, lat: i, tim }, dat: { n: i } }));
      }
      const all = await history(c.realm, id, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:04.000Z', 3, 6000);
      assert.deepEqual(
        all.map((e) => e.dat),
        [{ n: 0 }, { n: 1 }, { n: 2 }],
      );
      const middle = await history(c.realm, id, '2026-01-01T00:00:01.500Z', '2026-01-01T00:00:02.500Z');
      assert.deepEqual(
        middle.map((e) => e.loc.lon),
        [1],
      );
      assert.deepEqual(await history(c.realm, id, '2001-01-01T00:00:00.000Z', '2001-01-02T00:00:00.000Z'), []);
      assert.deepEqual(await history(c.realm, uniqueId('no-such-object'), '2001-01-01T00:00:00.000Z', iso(Date.now())), []);
    });

    it('12.6: history in a missing realm is `unknown realm <id>`, 404', async () => {
      const missing = uniqueId('nowhere');
      assertError(await req({ typ: 'his', act: 'rea', id: 'x', rea: missing, dat: { sta: iso(0), end: iso(Date.now()) } }), `unknown realm ${missing}`, 404, { typ: 'his', act: 'rea' });
    });
  });
});
