/**
 * Conformance (hivekit-compat.md 4.2): object create (upsert), update (merge), set, read
 * (zero-filled record), list (exact entries, fields, attribute conditions, shapes), delete.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertClientError,
  assertError,
  assertSuc,
  createRealm,
  locWithoutTime,
  sleep,
  uniqueId,
  zeroLoc,
  type Json,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

describe('conformance: objects (compat 4.2)', () => {
  const c = conformanceSuite('objects');
  const { req } = c;
  const read = (id: string, realm?: string): Promise<Json> => c.read('obj', id, realm);
  async function freshRealm(): Promise<string> {
    const realm = uniqueId('objects-list');
    await createRealm(c.url, c.token, realm);
    return realm;
  }

  it('4.2: cre then rea gives exactly {id, lab, loc (zero-filled, tim), dat, cst:"dis"}; tds omitted when empty', async () => {
    const id = uniqueId('object-a');
    const before = Date.now();
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'Object A Label', loc: { lon: 13.404954, lat: 52.520008 }, dat: { type: 'scooter', charge: 0.3 } }));
    const rec = await read(id);
    assert.deepEqual(Object.keys(rec as object).sort(), ['cst', 'dat', 'id', 'lab', 'loc']);
    assert.equal(rec.id, id);
    assert.equal(rec.lab, 'Object A Label');
    assert.equal(rec.cst, 'dis');
    assert.deepEqual(rec.dat, { type: 'scooter', charge: 0.3 });
    assert.deepEqual(locWithoutTime(rec.loc), zeroLoc({ lon: 13.404954, lat: 52.520008 }));
    const stamped = Date.parse(rec.loc.tim as string);
    assert.ok(stamped >= before - 1000 && stamped <= Date.now() + 1000, 'a fix without time is stamped with the receive time');
  });

  it('4.2: a record without data and tasks omits dat and tds; an object without a location reads the eight zero keys and no tim; no lab when unset', async () => {
    const id = uniqueId('bare');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm }));
    const rec = await read(id);
    assert.deepEqual(rec, { id, loc: zeroLoc(), cst: 'dis' });
  });

  it('4.2: every numeric location key given is read back, tim included; gcs is a string', async () => {
    const id = uniqueId('fullloc');
    const loc = { gcs: 'wgs84', lon: 10.5, lat: 20.25, acc: 3, spe: 4.5, hea: 90, alt: 120, alc: 2, tim: '2026-03-04T05:06:07.089Z' };
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, loc }));
    const rec = await read(id);
    const { gcs, ...numbers } = locWithoutTime(rec.loc);
    assert.equal(typeof gcs, 'string', 'gcs is a string (whether the given one is kept is not revealed)');
    assert.deepEqual(numbers, { lon: 10.5, lat: 20.25, acc: 3, spe: 4.5, hea: 90, alt: 120, alc: 2 });
    assert.equal(Date.parse(rec.loc.tim as string), Date.parse(loc.tim));
  });

  it('0#10/4.2: cre on an existing id succeeds and acts as an update (dat merged)', async () => {
    const id = uniqueId('upsert');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'first', dat: { a: 1 } }));
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'second', dat: { b: 2 } }));
    const rec = await read(id);
    assert.equal(rec.lab, 'second');
    assert.deepEqual(rec.dat, { a: 1, b: 2 });
  });

  it('4.2: upd merges dat key by key, replaces lab, keeps loc when none is given', async () => {
    const id = uniqueId('merge');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, lab: 'Object A Label', loc: { lon: 13, lat: 52 }, dat: { type: 'scooter', charge: 0.3 } }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, dat: { charge: 0.5 } }));
    let rec = await read(id);
    assert.deepEqual(rec.dat, { type: 'scooter', charge: 0.5 });
    assert.equal(rec.lab, 'Object A Label');
    assert.deepEqual(locWithoutTime(rec.loc), zeroLoc({ lon: 13, lat: 52 }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, lab: 'Renamed' }));
    rec = await read(id);
    assert.equal(rec.lab, 'Renamed');
    assert.deepEqual(rec.dat, { type: 'scooter', charge: 0.5 });
  });

  it('4.2 (Recommendation): a data key set to null is removed; a new loc replaces the old one', async () => {
    const id = uniqueId('nullkey');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, loc: { lon: 13, lat: 52, alt: 100, spe: 5 }, dat: { a: 1, b: 2 } }));
    assertSuc(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, loc: { lon: 14, lat: 53 }, dat: { a: null } }));
    const rec = await read(id);
    assert.deepEqual(rec.dat, { b: 2 });
    assert.deepEqual(locWithoutTime(rec.loc), zeroLoc({ lon: 14, lat: 53 }));
  });

  it('4.2: tds is stored and read back; an empty array clears it (then omitted)', async () => {
    const id = uniqueId('tasks');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, tds: ['task-1', 'task-2'] }));
    assert.deepEqual((await read(id)).tds, ['task-1', 'task-2']);
    assertSuc(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, tds: [] }));
    assert.equal((await read(id)).tds, undefined);
  });

  it('4.2: set creates an object that does not exist and merges into one that does', async () => {
    const id = uniqueId('setter');
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 1, lat: 1 }, dat: { valueA: 1 } }]);
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: c.realm, loc: { lon: 2, lat: 2 }, dat: { valueB: 2 } }]);
    await sleep(200);
    const rec = await read(id);
    assert.deepEqual(rec.dat, { valueA: 1, valueB: 2 });
    assert.equal(rec.loc.lon, 2);
  });

  it('4.2: upd on a missing object fails with `unknown object <id>`, 404, and creates nothing', async () => {
    const id = uniqueId('ghost');
    assertError(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, lab: 'x' }), `unknown object ${id}`, 404, { typ: 'obj', act: 'upd' });
    assertError(await req({ typ: 'obj', act: 'rea', id, rea: c.realm }), `unknown object ${id}`, 404, { typ: 'obj', act: 'rea' });
  });

  it('4.2: del removes the object from reads and lists; ids may contain `/`', async () => {
    const realm = await freshRealm();
    const id = `car/-${uniqueId('x')}`;
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: realm, lab: 'Car' }));
    assert.equal((await read(id, realm)).id, id);
    let list = await req({ typ: 'obj', act: 'lis', rea: realm });
    assert.deepEqual(list.dat, { [id]: { id, lab: 'Car', cst: 'dis' } });
    assertSuc(await req({ typ: 'obj', act: 'del', id, rea: realm }));
    assertError(await req({ typ: 'obj', act: 'rea', id, rea: realm }), `unknown object ${id}`, 404);
    list = await req({ typ: 'obj', act: 'lis', rea: realm });
    assert.deepEqual(list.dat, {});
  });

  it('4.2: del of a missing object fails with `unknown object <id>`, 404', async () => {
    const id = uniqueId('never');
    assertError(await req({ typ: 'obj', act: 'del', id, rea: c.realm }), `unknown object ${id}`, 404, { typ: 'obj', act: 'del' });
  });

  it('0#6/4.2: list entries are exactly {id, lab, cst}; with fie they add dat holding only those properties', async () => {
    const realm = await freshRealm();
    const a = uniqueId('object-a');
    const b = uniqueId('object-b');
    await c.wire.batch([
      { typ: 'obj', act: 'cre', id: a, rea: realm, lab: 'Object A Label', loc: { lon: 13.404954, lat: 52.520008 }, dat: { type: 'scooter', charge: 0.5 } },
      { typ: 'obj', act: 'cre', id: b, rea: realm, lab: 'Object B Label', loc: { lon: 13, lat: 51 }, dat: { type: 'car' } },
    ]);
    const plain = await req({ typ: 'obj', act: 'lis', rea: realm });
    assertSuc(plain);
    assert.deepEqual(plain.dat, {
      [a]: { id: a, lab: 'Object A Label', cst: 'dis' },
      [b]: { id: b, lab: 'Object B Label', cst: 'dis' },
    });
    assert.equal(plain.nxt, undefined, 'no paging below the maximum page (11#22)');
    const withFields = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { fie: ['charge'] } });
    assert.deepEqual(withFields.dat, {
      [a]: { id: a, lab: 'Object A Label', cst: 'dis', dat: { charge: 0.5 } },
      [b]: { id: b, lab: 'Object B Label', cst: 'dis', dat: {} },
    });
  });

  it('4.2/5.10: atr conditions: data property =, !=, >, <, and $id / $label', async () => {
    const realm = await freshRealm();
    const ids = [uniqueId('o0'), uniqueId('o1'), uniqueId('o2')];
    await c.wire.batch(ids.map((id, i) => ({ typ: 'obj', act: 'cre', id, rea: realm, lab: `L${i}`, dat: { type: i === 0 ? 'scooter' : 'car', testValue: i * 5 } })));
    const keys = async (atr: string[]): Promise<string[]> => {
      const r = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { atr } });
      assertSuc(r);
      return Object.keys(r.dat as object).sort();
    };
    assert.deepEqual(await keys(['type="scooter"']), [ids[0]]);
    assert.deepEqual(await keys(['type="car"']), [ids[1], ids[2]].sort());
    assert.deepEqual(await keys(['testValue>5']), [ids[2]]);
    assert.deepEqual(await keys(['testValue<5']), [ids[0]]);
    assert.deepEqual(await keys(['type="car"', 'testValue>5']), [ids[2]]);
    assert.deepEqual(await keys([`$id!="${ids[0]}"`]), [ids[1], ids[2]].sort());
    assert.deepEqual(await keys([`$id="${ids[1]}"`]), [ids[1]]);
    assert.deepEqual(await keys(['$label="L2"']), [ids[2]]);
  });

  it('4.2: sha rectangle {x1,x2,y1,y2}: x is longitude, y latitude (the worked example)', async () => {
    const realm = await freshRealm();
    const inside = uniqueId('inside');
    const outside = uniqueId('outside');
    await c.wire.batch([
      { typ: 'obj', act: 'cre', id: inside, rea: realm, lab: 'In', loc: { lon: 13.404954, lat: 52.520008 } },
      { typ: 'obj', act: 'cre', id: outside, rea: realm, lab: 'Out', loc: { lon: 13, lat: 51 } },
    ]);
    const r = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { sha: { x1: 13, x2: 14, y1: 52, y2: 53 } } });
    assert.deepEqual(r.dat, { [inside]: { id: inside, lab: 'In', cst: 'dis' } });
    const circle = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { sha: { cx: 13.4, cy: 52.52, r: 2000 } } });
    assert.deepEqual(Object.keys(circle.dat as object), [inside]);
    const polygon = await req({
      typ: 'obj',
      act: 'lis',
      rea: realm,
      dat: { sha: { points: [{ x: 12.5, y: 50.5 }, { x: 13.5, y: 50.5 }, { x: 13.5, y: 51.5 }, { x: 12.5, y: 51.5 }] } },
    });
    assert.deepEqual(Object.keys(polygon.dat as object), [outside]);
    const wnes = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { sha: { west: 13, north: 53, east: 14, south: 52 } } });
    assert.deepEqual(Object.keys(wnes.dat as object), [inside], 'Recommendation: accept the west/north/east/south form too');
  });

  it('4.2/11#22: lis returns the complete keyed map without paging', async () => {
    const realm = await freshRealm();
    const ids = Array.from({ length: 40 }, (_, i) => `bulk-${String(i).padStart(2, '0')}`);
    await c.wire.batch(ids.map((id) => ({ typ: 'obj', act: 'cre', id, rea: realm, lab: `L ${id}` })));
    const r = await req({ typ: 'obj', act: 'lis', rea: realm });
    assert.deepEqual(Object.keys(r.dat as object).sort(), ids);
    for (const id of ids) assert.deepEqual(r.dat[id], { id, lab: `L ${id}`, cst: 'dis' });
  });

  it('12#6: object actions naming a missing realm fail with `unknown realm <id>`, 404', async () => {
    const realm = uniqueId('nowhere');
    for (const act of ['cre', 'upd', 'rea', 'del', 'lis']) {
      assertError(await req({ typ: 'obj', act, id: 'x', rea: realm }), `unknown realm ${realm}`, 404, { typ: 'obj', act });
    }
  });

  it('11#32 (decisions: nested data): cre and set store nested dat unchanged; lis fie returns it whole; atr compares it false (!= true); a subscription push carries it', async () => {
    const realm = await freshRealm();
    const id = uniqueId('truck');
    const icon = { color: 'red', category: 'truck', filename: 't.png' };
    const sid = uniqueId('object-subscription');
    const pushes = c.wire.watch(sid);
    assertSuc(await req({ typ: 'sub', act: 'cre', id: sid, rea: realm, dat: { typ: 'obj', sty: 'rea' } }));
    // Hivekit's getting-started tutorial: an icon description in the object's data.
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: realm, lab: 'Truck', loc: { lon: 13.4, lat: 52.5 }, dat: { $hkt_icon: icon, stops: [[13.4, 52.5], { n: null }], k: 1 } }));
    let rec = await read(id, realm);
    assert.deepEqual(rec.dat, { $hkt_icon: icon, stops: [[13.4, 52.5], { n: null }], k: 1 });
    const [cre] = await pushes.exactly(1, 300);
    assert.deepEqual(cre.obj.cre, { [id]: rec }, 'the push carries the nested values unchanged');

    // `set` (cid-less, no reply): a nested value is replaced whole, the others stay.
    c.wire.sendRaw([{ typ: 'obj', act: 'set', id, rea: realm, loc: { lon: 13.5, lat: 52.5 }, dat: { $hkt_icon: { color: 'blue' } } }]);
    const [, upd] = await pushes.exactly(2, 500);
    rec = await read(id, realm);
    assert.deepEqual(rec.dat, { $hkt_icon: { color: 'blue' }, stops: [[13.4, 52.5], { n: null }], k: 1 });
    assert.deepEqual(upd.obj.upd, { [id]: rec });

    const listed = await req({ typ: 'obj', act: 'lis', rea: realm, dat: { fie: ['$hkt_icon', 'stops'] } });
    assert.deepEqual(listed.dat[id].dat, { $hkt_icon: { color: 'blue' }, stops: [[13.4, 52.5], { n: null }] });
    const keys = async (atr: string[]): Promise<string[]> => Object.keys((await req({ typ: 'obj', act: 'lis', rea: realm, dat: { atr } })).dat as object);
    // In `atr`, `$` names the object's own fields ($id, $label): the nested key here is `stops`.
    for (const atr of ['stops=0', 'stops>0', 'stops<"~"', 'stops>=""', 'stops<=0', 'stops=null', 'stops="[[13.4,52.5],{\\"n\\":null}]"']) {
      assert.deepEqual(await keys([atr]), [], atr);
    }
    for (const atr of ['stops!=0', 'stops!=null', 'k=1']) assert.deepEqual(await keys([atr]), [id], atr);
  });

  it('11#32: data nested beyond 8 levels or a bad location is refused (4xx) and changes nothing', async () => {
    const id = uniqueId('invalid');
    assertSuc(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, dat: { a: 1 } }));
    assertClientError(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, dat: { nested: [[[[[[[[1]]]]]]]] } }));
    assertClientError(await req({ typ: 'obj', act: 'cre', id, rea: c.realm, dat: { a: 2, nested: { a: { b: { c: { d: { e: { f: { g: {} } } } } } } } } }));
    assertClientError(await req({ typ: 'obj', act: 'upd', id, rea: c.realm, loc: { lon: 500, lat: 0 } }));
    assert.deepEqual(await read(id), { id, loc: zeroLoc(), dat: { a: 1 }, cst: 'dis' });
  });
});
