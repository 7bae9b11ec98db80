/**
 * JWT `per` rights at id level (issue #20; hivekit-rest.md D7, docs/api.md "Rights"), over a
 * real WebSocket, the v1 HTTP endpoint and REST: one-entity actions answer 403 outside the
 * grant and change nothing; a frame of writes refuses only its messages outside the grant,
 * a bulk write the whole request; lists, search, subscription pushes and pub/sub deliveries
 * show only the ids the token may read.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { call } from '../support/harness.js';
import {
  assertError,
  assertSuc,
  connectWire,
  httpRequest,
  signToken,
  sleep,
  uniqueId,
  type HivekitWire,
  type Json,
  type Msg,
} from '../support/hivekit-wire.js';
import { conformanceSuite } from '../support/conformance-suite.js';

const rectangle = { x1: 13.0, y1: 52.0, x2: 14.0, y2: 53.0 };
const here = { lon: 13.4, lat: 52.5 };
const denied = (right: string, id: string): string => `the token's permissions (per) do not grant ${right} on ${id}`;

describe('per rights at id level: v1, REST, results and pushes', () => {
  const c = conformanceSuite('per', { wire: false });
  /** Full rights (a `sub`-only JWT). */
  let owner: HivekitWire;
  /** per: cars R, U, D; zones C, R, U; beacon/1 R only; nothing else. */
  let limited: HivekitWire;
  let limitedToken: string;
  let realm: string;

  before(async () => {
    realm = c.realm;
    limitedToken = await signToken({ sub: 'limited' }, { claims: { per: { [realm]: { 'car/*': 'RUD', 'zone/*': 'CRU', 'beacon/1': 'R' } } } });
    owner = await connectWire(c.url, c.token);
    limited = await connectWire(c.url, limitedToken);
    for (const id of ['car/0', 'bus/0', 'beacon/1', 'beacon/2']) {
      assertSuc(await owner.request({ typ: 'obj', act: 'cre', id, rea: realm, lab: `label ${id}`, loc: here, dat: { kind: 'searchable' } }));
    }
    for (const id of ['zone/0', 'area/0']) {
      assertSuc(await owner.request({ typ: 'are', act: 'cre', id, rea: realm, lab: `label ${id}`, sty: 'rec', sha: rectangle }));
    }
  });

  const own = (m: Msg): Promise<Json> => owner.request(m);
  const lim = (m: Msg): Promise<Json> => limited.request(m);
  async function exists(typ: 'obj' | 'are', id: string): Promise<boolean> {
    const reply = await own({ typ, act: 'rea', id, rea: realm });
    return reply.res === 'suc';
  }

  it('v1 object actions: U to create or update, R to read, D to delete, on the id; 403 changes nothing', async () => {
    assertSuc(await lim({ typ: 'obj', act: 'cre', id: 'car/1', rea: realm, lab: 'mine' }));
    assertError(await lim({ typ: 'obj', act: 'cre', id: 'bus/1', rea: realm, lab: 'x' }), denied('U', 'bus/1'), 403, { typ: 'obj', act: 'cre' });
    assert.equal(await exists('obj', 'bus/1'), false);
    assertError(await lim({ typ: 'obj', act: 'upd', id: 'bus/0', rea: realm, lab: 'changed' }), denied('U', 'bus/0'), 403);
    assertError(await lim({ typ: 'obj', act: 'set', id: 'bus/0', rea: realm, lab: 'changed' }), denied('U', 'bus/0'), 403);
    assert.equal((await own({ typ: 'obj', act: 'rea', id: 'bus/0', rea: realm })).dat.lab, 'label bus/0');
    assertError(await lim({ typ: 'obj', act: 'rea', id: 'bus/0', rea: realm }), denied('R', 'bus/0'), 403);
    assertError(await lim({ typ: 'obj', act: 'del', id: 'bus/0', rea: realm }), denied('D', 'bus/0'), 403);
    assert.equal(await exists('obj', 'bus/0'), true);
    assertError(await lim({ typ: 'his', act: 'rea', id: 'bus/0', rea: realm, dat: {} }), denied('R', 'bus/0'), 403);
    // beacon/1: R only.
    assertSuc(await lim({ typ: 'obj', act: 'rea', id: 'beacon/1', rea: realm }));
    assertError(await lim({ typ: 'obj', act: 'upd', id: 'beacon/1', rea: realm, lab: 'x' }), denied('U', 'beacon/1'), 403);
    // Inside the grant everything works.
    assertSuc(await lim({ typ: 'obj', act: 'upd', id: 'car/1', rea: realm, lab: 'mine again' }));
    assert.equal((await lim({ typ: 'obj', act: 'rea', id: 'car/1', rea: realm })).dat.lab, 'mine again');
    assertSuc(await lim({ typ: 'his', act: 'rea', id: 'car/1', rea: realm, dat: {} }));
    assertSuc(await lim({ typ: 'obj', act: 'del', id: 'car/1', rea: realm }));
    assert.equal(await exists('obj', 'car/1'), false);
  });

  it('a frame of writes refuses only the messages outside the grant; a bulk write is refused whole', async () => {
    const replies = await limited.batch([
      { typ: 'obj', act: 'set', id: 'car/2', rea: realm, lab: 'a', cid: 'w1' },
      { typ: 'obj', act: 'set', id: 'bus/2', rea: realm, lab: 'b', cid: 'w2' },
      { typ: 'obj', act: 'cre', id: 'car/3', rea: realm, lab: 'c', cid: 'w3' },
      { typ: 'obj', act: 'upd', id: 'bus/0', rea: realm, lab: 'd', cid: 'w4' },
    ]);
    const byCid = new Map(replies.map((reply: Json) => [reply.cid, reply]));
    assertSuc(byCid.get('w1'));
    assertError(byCid.get('w2'), denied('U', 'bus/2'), 403);
    assertSuc(byCid.get('w3'));
    assertError(byCid.get('w4'), denied('U', 'bus/0'), 403);
    assert.equal(await exists('obj', 'car/2'), true);
    assert.equal(await exists('obj', 'car/3'), true);
    assert.equal(await exists('obj', 'bus/2'), false);
    assert.equal((await own({ typ: 'obj', act: 'rea', id: 'bus/0', rea: realm })).dat.lab, 'label bus/0');

    const mixed = { objects: [{ id: 'car/4', label: 'x' }, { id: 'bus/4', label: 'y' }] };
    assertError(await lim({ typ: 'obj', act: 'blk', rea: realm, dat: mixed }), denied('U', 'bus/4'), 403);
    assert.equal(await exists('obj', 'car/4'), false, 'nothing of a refused bulk is written');
    const mine = await lim({ typ: 'obj', act: 'blk', rea: realm, dat: { objects: [{ id: 'car/4' }, { id: 'car/5' }] } });
    assertSuc(mine);
    assert.equal(mine.dat.count, 2);
  });

  it('v1 area actions: C to create, U to update, R to read, D to delete, on the id', async () => {
    assertSuc(await lim({ typ: 'are', act: 'cre', id: 'zone/1', rea: realm, lab: 'z', sty: 'rec', sha: rectangle }));
    assertError(await lim({ typ: 'are', act: 'cre', id: 'area/1', rea: realm, lab: 'a', sty: 'rec', sha: rectangle }), denied('C', 'area/1'), 403);
    assert.equal(await exists('are', 'area/1'), false);
    assertSuc(await lim({ typ: 'are', act: 'upd', id: 'zone/1', rea: realm, lab: 'z2' }));
    assertError(await lim({ typ: 'are', act: 'upd', id: 'area/0', rea: realm, lab: 'changed' }), denied('U', 'area/0'), 403);
    assertError(await lim({ typ: 'are', act: 'rea', id: 'area/0', rea: realm }), denied('R', 'area/0'), 403);
    assert.equal((await lim({ typ: 'are', act: 'rea', id: 'zone/1', rea: realm })).dat.lab, 'z2');
    // zones: no D.
    assertError(await lim({ typ: 'are', act: 'del', id: 'zone/1', rea: realm }), denied('D', 'zone/1'), 403);
    assert.equal(await exists('are', 'zone/1'), true);
    assert.equal((await own({ typ: 'are', act: 'rea', id: 'area/0', rea: realm })).dat.lab, 'label area/0');
  });

  it('lists and search show only what the token may read (v1 over WebSocket and HTTP, REST)', async () => {
    const objects = await lim({ typ: 'obj', act: 'lis', rea: realm });
    assertSuc(objects);
    const readableObjects = Object.keys(objects.dat).sort();
    assert.ok(readableObjects.length > 0);
    for (const id of readableObjects) assert.ok(id.startsWith('car/') || id === 'beacon/1', id);
    assert.ok(readableObjects.includes('car/0') && readableObjects.includes('beacon/1'));
    // The owner sees the others.
    const all = Object.keys((await own({ typ: 'obj', act: 'lis', rea: realm })).dat);
    assert.ok(all.includes('bus/0') && all.includes('beacon/2'));

    const viaHttp = await httpRequest(c.url, limitedToken, { typ: 'obj', act: 'lis', rea: realm });
    assert.deepEqual(Object.keys(viaHttp.dat).sort(), readableObjects);

    const areas = await lim({ typ: 'are', act: 'lis', rea: realm });
    for (const id of Object.keys(areas.dat)) assert.ok(id.startsWith('zone/'), id);
    assert.ok('zone/0' in areas.dat);

    const found = await lim({ typ: 'rea', act: 'sea', rea: realm, dat: { val: 'label' } });
    assertSuc(found);
    const foundIds = new Set((found.dat as Json[]).map((record): string => String(record.id)));
    assert.ok(foundIds.has('car/0') && foundIds.has('beacon/1') && foundIds.has('zone/0'), JSON.stringify([...foundIds]));
    assert.ok(!foundIds.has('bus/0') && !foundIds.has('beacon/2') && !foundIds.has('area/0'), JSON.stringify([...foundIds]));
    const ownerFound = new Set(((await own({ typ: 'rea', act: 'sea', rea: realm, dat: { val: 'label' } })).dat as Json[]).map((record): string => String(record.id)));
    assert.ok(ownerFound.has('bus/0') && ownerFound.has('area/0'));

    const base = `/v2/realm/${encodeURIComponent(realm)}`;
    const restObjects = await call(c.url, 'GET', `${base}/object`, { token: limitedToken });
    assert.equal(restObjects.status, 200, restObjects.text);
    assert.deepEqual(Object.keys(restObjects.json as object).sort(), readableObjects);
    const restAreas = await call(c.url, 'GET', `${base}/area`, { token: limitedToken });
    for (const id of Object.keys(restAreas.json as object)) assert.ok(id.startsWith('zone/'), id);
    const restSearch = await call(c.url, 'GET', `${base}/search?searchString=label`, { token: limitedToken });
    assert.equal(restSearch.status, 200, restSearch.text);
    const restIds = new Set((restSearch.json as Json[]).map((record): string => String(record.id)));
    assert.deepEqual(restIds, foundIds);
    const byWords = await call(c.url, 'GET', `${base}/search?q=label`, { token: limitedToken });
    assert.equal(byWords.status, 200, byWords.text);
    const wordIds = Object.keys(byWords.json as object);
    assert.ok(wordIds.includes('car/0') && !wordIds.includes('bus/0') && !wordIds.includes('beacon/2'), JSON.stringify(wordIds));
    // A limit counts readable objects only: one asked, one readable given.
    const one = await call(c.url, 'GET', `${base}/search?q=searchable&limit=1`, { token: limitedToken });
    const oneIds = Object.keys(one.json as object);
    assert.equal(oneIds.length, 1);
    assert.ok(oneIds[0]?.startsWith('car/') === true || oneIds[0] === 'beacon/1', JSON.stringify(oneIds));
  });

  it('REST: bulk writes outside the grant are refused whole; one-entity routes check the id', async () => {
    const base = `/v2/realm/${encodeURIComponent(realm)}`;
    const bulk = await call(c.url, 'POST', `${base}/object`, { token: limitedToken, body: { objects: [{ id: 'car/6' }, { id: 'bus/6' }] } });
    assert.equal(bulk.status, 403, bulk.text);
    assert.equal(bulk.json.error.message, denied('U', 'bus/6'));
    assert.equal(await exists('obj', 'car/6'), false);
    const ok = await call(c.url, 'PUT', `${base}/object`, { token: limitedToken, body: { objects: [{ id: 'car/6' }] } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await call(c.url, 'GET', `${base}/area/area%2F0`, { token: limitedToken })).status, 403);
    assert.equal((await call(c.url, 'GET', `${base}/history/bus%2F0`, { token: limitedToken })).status, 403);
  });

  it('object and area subscriptions hold only readable ids; a target subscription needs R on its target', async () => {
    const objSub = uniqueId('objects');
    const objPushes = limited.watch(objSub);
    assertSuc(await lim({ typ: 'sub', act: 'cre', id: objSub, rea: realm, dat: { typ: 'obj', sty: 'rea', exe: true } }));
    const [initial] = await objPushes.exactly(1, 300);
    const initialIds = Object.keys(initial.obj.cre);
    assert.ok(initialIds.includes('car/0') && initialIds.includes('beacon/1'), JSON.stringify(initialIds));
    for (const id of initialIds) assert.ok(id.startsWith('car/') || id === 'beacon/1', id);

    const areSub = uniqueId('areas');
    const arePushes = limited.watch(areSub);
    assertSuc(await lim({ typ: 'sub', act: 'cre', id: areSub, rea: realm, dat: { typ: 'are', sty: 'rea', exe: true } }));
    const [areas] = await arePushes.exactly(1, 300);
    assert.ok('zone/0' in areas.are && !('area/0' in areas.are), JSON.stringify(Object.keys(areas.are)));

    // Writes outside the grant push nothing; one inside pushes it alone.
    const after = limited.watch(objSub);
    assertSuc(await own({ typ: 'obj', act: 'upd', id: 'bus/0', rea: realm, lab: 'moved', loc: { lon: 13.5, lat: 52.6 } }));
    assertSuc(await own({ typ: 'obj', act: 'cre', id: 'bus/7', rea: realm, loc: here }));
    await sleep(150);
    assert.equal(after.got.length, 0, JSON.stringify(after.got));
    assertSuc(await own({ typ: 'obj', act: 'cre', id: 'car/7', rea: realm, loc: here }));
    const [delta] = await after.atLeast(1, 1000);
    assert.deepEqual(Object.keys(delta.obj.cre ?? {}), ['car/7']);
    assert.equal(delta.obj.upd, undefined);

    const areaAfter = limited.watch(areSub);
    assertSuc(await own({ typ: 'are', act: 'upd', id: 'area/0', rea: realm, lab: 'changed' }));
    await sleep(150);
    assert.equal(areaAfter.got.length, 0, 'a change of an unreadable area pushes nothing');
    assertSuc(await own({ typ: 'are', act: 'upd', id: 'zone/0', rea: realm, lab: 'changed' }));
    const [full] = await areaAfter.atLeast(1, 1000);
    assert.ok(!('area/0' in full.are) && full.are['zone/0'] !== undefined);

    const target = await lim({ typ: 'sub', act: 'cre', id: uniqueId('target'), rea: realm, dat: { typ: 'obj', sty: 'tar', sta: { id: 'bus/0', r: 1000 } } });
    assertError(target, denied('R', 'bus/0'), 403);
    assertSuc(await lim({ typ: 'sub', act: 'cre', id: uniqueId('target'), rea: realm, dat: { typ: 'obj', sty: 'tar', sta: { id: 'car/0', r: 1000 } } }));
  });

  it('pub/sub: pub needs U on its idp; a subscriber hears only publications under ids it may read', async () => {
    const eve = uniqueId('ping');
    assertSuc(await lim({ typ: 'rea', act: 'sub', id: realm, dat: { eve, idp: '*' } }));
    const heard = limited.watchDeliveries(eve, '*');
    assertSuc(await own({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp: 'bus/0', dat: 'secret' } }));
    assertSuc(await own({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp: 'car/0', dat: 'hello' } }));
    const [delivery] = await heard.atLeast(1, 1000);
    await sleep(100);
    assert.equal(heard.got.length, 1, JSON.stringify(heard.got));
    assert.deepEqual(delivery.dat, { eve, dat: 'hello' });

    assertError(await lim({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp: 'bus/0', dat: 1 } }), denied('U', 'bus/0'), 403);
    assertError(await lim({ typ: 'rea', act: 'pub', id: realm, dat: { eve, dat: 1 } }), denied('U', '*'), 403);
    assertSuc(await lim({ typ: 'rea', act: 'pub', id: realm, dat: { eve, idp: 'car/0', dat: 2 } }));
  });
});
