/**
 * Conformance (hivekit-compat.md 4.3): area create (409 on an existing id), shapes echoed
 * exactly, list entries exactly {id, lab, sty}, update with merged data, delete.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertClientError,
  assertError,
  assertSuc,
  createRealm,
  uniqueId,
  type Json,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

const rectangle = { x1: 13.0, y1: 52.0, x2: 14.0, y2: 53.0 };
const circle = { cx: 52.52, cy: 13.4, r: 1000 };
const polygon = { points: [{ x: 51, y: 10 }, { x: 54, y: 10 }, { x: 52.5, y: 12 }] };

describe('conformance: areas (compat 4.3)', () => {
  const c = conformanceSuite('areas');
  const { req } = c;
  const read = (id: string, realm?: string): Promise<Json> => c.read('are', id, realm);

  it('4.3: cre then rea gives exactly {id, lab, sty, sha, dat} with the rectangle echoed', async () => {
    const id = uniqueId('area-rec');
    assertSuc(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Berlin', sty: 'rec', sha: rectangle, dat: { isCapital: true, country: 'Germany' } }));
    assert.deepEqual(await read(id), { id, lab: 'Berlin', sty: 'rec', sha: rectangle, dat: { isCapital: true, country: 'Germany' } });
  });

  it('0#10/4.3: cre on an existing id fails with exactly `area with id <id> already exists`, 409, and changes nothing', async () => {
    const id = uniqueId('area-dup');
    assertSuc(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'First', sty: 'rec', sha: rectangle, dat: { a: 1 } }));
    const dup = await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Second', sty: 'cir', sha: circle, dat: { b: 2 } });
    assertError(dup, `area with id ${id} already exists`, 409, { typ: 'are', act: 'cre' });
    assert.deepEqual(await read(id), { id, lab: 'First', sty: 'rec', sha: rectangle, dat: { a: 1 } });
  });

  it('4.3: a circle (cx 52.52, cy 13.40) and an open three-point polygon are echoed exactly', async () => {
    const cir = uniqueId('area-cir');
    const pol = uniqueId('area-pol');
    assertSuc(await req({ typ: 'are', act: 'cre', id: cir, rea: c.realm, lab: 'Circle', sty: 'cir', sha: circle, dat: { k: 'c' } }));
    assertSuc(await req({ typ: 'are', act: 'cre', id: pol, rea: c.realm, lab: 'Polygon', sty: 'pol', sha: polygon, dat: { k: 'p' } }));
    const rc = await read(cir);
    assert.equal(rc.sty, 'cir');
    assert.deepEqual(rc.sha, circle);
    const rp = await read(pol);
    assert.equal(rp.sty, 'pol');
    assert.deepEqual(rp.sha, polygon);
  });

  it('0#6/4.3: list entries are exactly {id, lab, sty}, no sha', async () => {
    const realm = uniqueId('areas-list');
    await createRealm(c.url, c.token, realm);
    const ids = { rec: uniqueId('a-rec'), cir: uniqueId('a-cir'), pol: uniqueId('a-pol') };
    await c.wire.batch([
      { typ: 'are', act: 'cre', id: ids.rec, rea: realm, lab: 'R', sty: 'rec', sha: rectangle },
      { typ: 'are', act: 'cre', id: ids.cir, rea: realm, lab: 'C', sty: 'cir', sha: circle },
      { typ: 'are', act: 'cre', id: ids.pol, rea: realm, lab: 'P', sty: 'pol', sha: polygon },
    ]);
    const list = await req({ typ: 'are', act: 'lis', rea: realm });
    assertSuc(list);
    assert.deepEqual(list.dat, {
      [ids.rec]: { id: ids.rec, lab: 'R', sty: 'rec' },
      [ids.cir]: { id: ids.cir, lab: 'C', sty: 'cir' },
      [ids.pol]: { id: ids.pol, lab: 'P', sty: 'pol' },
    });
  });

  it('4.3: upd replaces lab and shape ({cx:1,cy:2,r:3} exactly) and merges dat', async () => {
    const id = uniqueId('area-upd');
    assertSuc(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Berlin', sty: 'rec', sha: rectangle, dat: { isCapital: true, country: 'Germany' } }));
    assertSuc(await req({ typ: 'are', act: 'upd', id, rea: c.realm, lab: 'Changed', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, dat: { charge: 0.5 } }));
    assert.deepEqual(await read(id), { id, lab: 'Changed', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, dat: { isCapital: true, country: 'Germany', charge: 0.5 } });
    assertSuc(await req({ typ: 'are', act: 'upd', id, rea: c.realm, sty: 'cir', sha: { cx: 1, cy: 2, r: 3 } }));
    assert.equal((await read(id)).lab, 'Changed', 'an upd without lab keeps the label');
  });

  it('4.3: del removes the area from reads and lists; later reads fail with `unknown area <id>`, 404', async () => {
    const id = uniqueId('area-del');
    assertSuc(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Gone', sty: 'rec', sha: rectangle }));
    assertSuc(await req({ typ: 'are', act: 'del', id, rea: c.realm }));
    assertError(await req({ typ: 'are', act: 'rea', id, rea: c.realm }), `unknown area ${id}`, 404, { typ: 'are', act: 'rea' });
    const list = await req({ typ: 'are', act: 'lis', rea: c.realm });
    assert.equal(list.dat[id], undefined);
  });

  it('4.3 (Recommendation): upd and del of a missing area fail with `unknown area <id>`, 404', async () => {
    const id = uniqueId('area-missing');
    assertError(await req({ typ: 'are', act: 'upd', id, rea: c.realm, sty: 'rec', sha: rectangle }), `unknown area ${id}`, 404);
    assertError(await req({ typ: 'are', act: 'del', id, rea: c.realm }), `unknown area ${id}`, 404);
  });

  it('4.3: ids may contain `/`', async () => {
    const id = `zone/${uniqueId('z')}`;
    assertSuc(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Zone', sty: 'cir', sha: { cx: 13.4, cy: 52.5, r: 50 } }));
    assert.equal((await read(id)).id, id);
  });

  it('4.3/12#6: invalid shape data is refused (4xx) and stores nothing; a missing realm is `unknown realm <id>`, 404', async () => {
    const id = uniqueId('area-bad');
    assertClientError(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Bad', sty: 'rec', sha: { qq: 123 } }));
    assertClientError(await req({ typ: 'are', act: 'cre', id, rea: c.realm, lab: 'Bad', sty: 'cir', sha: { cx: 1, cy: 2, r: -5 } }));
    assertError(await req({ typ: 'are', act: 'rea', id, rea: c.realm }), `unknown area ${id}`, 404);
    const realm = uniqueId('nowhere');
    assertError(await req({ typ: 'are', act: 'lis', rea: realm }), `unknown realm ${realm}`, 404);
    assertError(await req({ typ: 'are', act: 'cre', id, rea: realm, sty: 'rec', sha: rectangle }), `unknown realm ${realm}`, 404);
  });
});
