/**
 * The v1 protocol in Hivekit's envelope (docs/protocol.md, hivekit-compat.md sections 1, 3,
 * 4.2, 4.3, 4.7) over real WebSocket (`/ws`, `/v1/ws`), TCP and HTTP (`/api/v1`, `/v1/http`):
 * sign-in (and failed sign-in keeping the socket open), heartbeat, replies per `cid`, the
 * object and area actions with their exact records, and the error forms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminToken, call, makeRealm, startHarness, type Harness } from '../support/harness.js';
import { connectTcp, connectWs, postV1, type Json, type V1Client } from '../support/v1-clients.js';

describe('v1 in Hivekit envelope', () => {
  let h: Harness;
  let r: { read: string; write: string; admin: string };

  before(async () => {
    h = await startHarness();
    r = await makeRealm(h.url, 'hk');
  });
  after(async () => {
    await h.stop();
  });

  const clients: [string, () => Promise<V1Client>][] = [
    ['ws /ws', () => connectWs(h.url, undefined, '/ws')],
    ['ws /v1/ws', () => connectWs(h.url, undefined, '/v1/ws')],
    ['tcp', () => connectTcp(h.server.tcpPort)],
  ];

  for (const [name, open] of clients) {
    describe(name, () => {
      it('a failed sign-in is a sys/aut error with err and erc 401; the socket stays open and a later Bearer frame signs in', async () => {
        const client = await open();
        client.sendText('Bearer lcs_not-a-real-token');
        const [failed] = (await client.next()) as Json[];
        assert.deepEqual(Object.keys(failed), ['typ', 'act', 'res', 'err', 'erc']);
        assert.equal(failed.typ, 'sys');
        assert.equal(failed.act, 'aut');
        assert.equal(failed.res, 'err');
        assert.equal(failed.erc, 401);
        assert.equal(typeof failed.err, 'string');
        client.sendText('[{"typ":"sys","act":"hbt","cid":"early"}]');
        const [early] = (await client.next()) as Json[];
        assert.deepEqual(early, { typ: 'sys', act: 'aut', res: 'err', err: 'the first message must be "Bearer <token>"', erc: 401 });
        assert.equal(client.isClosed, false);
        client.sendText(`Bearer ${r.write}`);
        const ok = (await client.next()) as Json[];
        assert.equal(ok.length, 1);
        assert.deepEqual(Object.keys(ok[0]), ['typ', 'act', 'res', 'dat']);
        assert.equal(ok[0].res, 'suc');
        assert.ok(typeof ok[0].dat.version === 'string' && ok[0].dat.version !== '');
        assert.ok(typeof ok[0].dat.buildDate === 'string' && ok[0].dat.buildDate !== '');
        client.sendText('[{"typ":"sys","act":"hbt","cid":"heartbeat-1"}]');
        assert.deepEqual(await client.next(), [{ typ: 'sys', act: 'hbt', cid: 'heartbeat-1', res: 'suc' }]);
        await client.close();
      });

      it('objects: cre upserts, upd merges data and replaces loc, set gets no reply, rea shows the zero-filled record, del then 404', async () => {
        const client = await open();
        client.sendText(`Bearer ${r.write}`);
        await client.next();
        const id = `car/${name.replace(/\W/g, '')}`;
        const cre = await client.one({ typ: 'obj', act: 'cre', cid: 'a', id, rea: 'hk', lab: 'Car', dat: { type: 'scooter', charge: 0.3 }, tds: [] });
        assert.deepEqual(cre, { typ: 'obj', act: 'cre', cid: 'a', res: 'suc' });
        const again = await client.one({ typ: 'obj', act: 'cre', id, rea: 'hk', loc: { lon: 13.4, lat: 52.5, undefined: 1, time: '2026-01-01T00:00:00.000Z' } });
        assert.equal(again.res, 'suc');
        assert.equal((await client.one({ typ: 'obj', act: 'upd', id, rea: 'hk', dat: { charge: 0.5 } })).res, 'suc');
        // A set without cid: no reply at all; the heartbeat after it is the next frame.
        client.sendText(JSON.stringify([{ typ: 'obj', act: 'set', id, rea: 'hk', loc: { lon: 13.5, lat: 52.6, alt: 30 } }, { typ: 'sys', act: 'hbt', cid: 'h' }]));
        assert.deepEqual(await client.next(), [{ typ: 'sys', act: 'hbt', cid: 'h', res: 'suc' }]);
        const read = await client.one({ typ: 'obj', act: 'rea', id, rea: 'hk', cid: 7 });
        assert.equal(read.cid, 7);
        const { tim, ...loc } = read.dat.loc;
        assert.deepEqual({ ...read.dat, loc }, {
          id,
          lab: 'Car',
          loc: { gcs: '', lon: 13.5, lat: 52.6, acc: 0, spe: 0, hea: 0, alt: 30, alc: 0 },
          dat: { type: 'scooter', charge: 0.5 },
          cst: 'dis',
        });
        assert.ok(Math.abs(Date.parse(tim as string) - Date.now()) < 10_000, 'a loc without tim is stamped with the receive time');
        assert.deepEqual(Object.keys(read.dat), ['id', 'lab', 'loc', 'dat', 'cst']);
        assert.equal((await client.one({ typ: 'obj', act: 'del', id, rea: 'hk' })).res, 'suc');
        const gone = await client.one({ typ: 'obj', act: 'rea', id, rea: 'hk', cid: 'g' });
        assert.deepEqual(gone, { typ: 'obj', act: 'rea', cid: 'g', res: 'err', err: `unknown object ${id}`, erc: 404 });
        const upd = await client.one({ typ: 'obj', act: 'upd', id, rea: 'hk', cid: 'u', lab: 'x' });
        assert.deepEqual(upd, { typ: 'obj', act: 'upd', cid: 'u', res: 'err', err: `unknown object ${id}`, erc: 404 });
        const del = await client.one({ typ: 'obj', act: 'del', id, rea: 'hk', cid: 'd' });
        assert.equal(del.err, `unknown object ${id}`);
        // upd on a missing object created nothing.
        assert.equal((await client.one({ typ: 'obj', act: 'rea', id, rea: 'hk' })).erc, 404);
        await client.close();
      });

      it('a failed cid-less message gets its error reply with its own typ; an unknown realm is 404', async () => {
        const client = await open();
        client.sendText(`Bearer ${r.write}`);
        await client.next();
        client.sendText(JSON.stringify([{ typ: 'obj', act: 'set', id: 'x', rea: 'hk', loc: { lon: 500, lat: 0 } }]));
        const [failed] = (await client.next()) as Json[];
        assert.deepEqual(Object.keys(failed), ['typ', 'act', 'res', 'err', 'erc']);
        assert.equal(failed.typ, 'obj');
        assert.equal(failed.erc, 400);
        assert.match(failed.err as string, /loc\.lon/);
        const nowhere = await client.one({ typ: 'obj', act: 'lis', rea: 'nowhere', cid: 'n' });
        assert.equal(nowhere.erc, 403); // an opaque token of realm hk may not enter another realm
        await client.close();
      });
    });
  }

  it('a frame of writes: each is answered alone, a failure fails alone, an id written twice ends with its last write', async () => {
    const client = await connectTcp(h.server.tcpPort, r.write);
    const replies = (await client.request([
      { typ: 'obj', act: 'cre', cid: '1', id: 'f/a', rea: 'hk', lab: 'A', dat: { n: 1 } },
      { typ: 'obj', act: 'upd', cid: '2', id: 'f/missing', rea: 'hk', lab: 'never' },
      { typ: 'obj', act: 'set', cid: '3', id: 'f/bad', rea: 'hk', loc: { lon: 0, lat: 95 } },
      { typ: 'obj', act: 'set', id: 'f/b', rea: 'hk', loc: { lon: 1, lat: 1 } },
      { typ: 'obj', act: 'upd', cid: '5', id: 'f/a', rea: 'hk', dat: { n: 2 } },
      { typ: 'obj', act: 'upd', cid: '6', id: 'f/b', rea: 'hk', lab: 'B' },
      { typ: 'obj', act: 'cre', cid: '7', id: 'f/c', rea: 'other-realm' },
      { typ: 'obj', act: 'rea', cid: '8', id: 'f/a', rea: 'hk' },
      { typ: 'obj', act: 'rea', cid: '9', id: 'f/b', rea: 'hk' },
    ]));
    assert.deepEqual(
      replies.map((reply): unknown[] => [reply.cid, reply.res, reply.erc]),
      [
        ['1', 'suc', undefined],
        ['2', 'err', 404],
        ['3', 'err', 400],
        ['5', 'suc', undefined],
        ['6', 'suc', undefined],
        ['7', 'err', 403],
        ['8', 'suc', undefined],
        ['9', 'suc', undefined],
      ],
    );
    assert.equal(replies[1].err, 'unknown object f/missing');
    assert.match(replies[2].err as string, /loc\.lat/);
    assert.deepEqual(replies[6].dat.dat, { n: 2 });
    assert.equal(replies[7].dat.lab, 'B');
    assert.equal(replies[7].dat.loc.lon, 1);
    for (const id of ['f/missing', 'f/bad']) assert.equal((await client.one({ typ: 'obj', act: 'rea', id, rea: 'hk' })).erc, 404);
    await client.close();
  });

  it('tds: stored, replaced, cleared; a bad tds is a 400 naming it and writes nothing (alone or in a frame); REST v2 neither shows, takes nor clears them', async () => {
    const client = await connectTcp(h.server.tcpPort, r.write);
    const read = async (id: string): Promise<Json> => (await client.one({ typ: 'obj', act: 'rea', cid: 'r', id, rea: 'hk' })).dat;
    assert.equal((await client.one({ typ: 'obj', act: 'cre', cid: 'c', id: 't/a', rea: 'hk', lab: 'A', tds: ['job/1', 'job/2'] })).res, 'suc');
    assert.deepEqual(await read('t/a'), { id: 't/a', lab: 'A', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, cst: 'dis', tds: ['job/1', 'job/2'] });
    // A write without tds (or with tds null) keeps them.
    assert.equal((await client.one({ typ: 'obj', act: 'upd', cid: 'u', id: 't/a', rea: 'hk', dat: { n: 1 }, tds: null })).res, 'suc');
    assert.deepEqual((await read('t/a')).tds, ['job/1', 'job/2']);

    // Bad values: 400 naming tds; nothing of the write happens (not its lab, not its tds).
    const bad: [unknown, string][] = [
      ['job/1', 'tds must be an array of task ids (got the string "job/1")'],
      [{ a: 1 }, 'tds must be an array of task ids (got an object)'],
      [['ok', 5], 'tds[1] must be a string (got 5)'],
      [[''], 'tds[0] must not be empty'],
      [Array.from({ length: 1001 }, (_, i) => `t${i}`), 'tds has 1001 task ids; at most 1000 are allowed'],
    ];
    for (const [tds, err] of bad) {
      for (const act of ['cre', 'upd']) {
        const reply = await client.one({ typ: 'obj', act, cid: 'b', id: 't/a', rea: 'hk', lab: 'changed', tds });
        assert.deepEqual([reply.res, reply.erc, reply.err], ['err', 400, err], `${act} ${JSON.stringify(tds).slice(0, 40)}`);
      }
      const fresh = await client.one({ typ: 'obj', act: 'cre', cid: 'b', id: 't/new', rea: 'hk', tds });
      assert.equal(fresh.erc, 400);
    }
    assert.deepEqual(await read('t/a'), { id: 't/a', lab: 'A', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, dat: { n: 1 }, cst: 'dis', tds: ['job/1', 'job/2'] });
    assert.equal((await client.one({ typ: 'obj', act: 'rea', cid: 'r', id: 't/new', rea: 'hk' })).erc, 404);

    // In one frame (written together): the bad one fails alone, the others are written.
    const replies = await client.request([
      { typ: 'obj', act: 'upd', cid: '1', id: 't/a', rea: 'hk', tds: ['job/3'] },
      { typ: 'obj', act: 'cre', cid: '2', id: 't/b', rea: 'hk', lab: 'B', tds: [7] },
      { typ: 'obj', act: 'set', id: 't/c', rea: 'hk', tds: ['job/4'] },
    ]);
    assert.deepEqual(replies.map((reply): unknown[] => [reply.cid, reply.res, reply.erc ?? null]), [['1', 'suc', null], ['2', 'err', 400]]);
    assert.equal(replies[1].err, 'tds[0] must be a string (got 7)');
    assert.deepEqual((await read('t/a')).tds, ['job/3']);
    assert.deepEqual((await read('t/c')).tds, ['job/4']);
    assert.equal((await client.one({ typ: 'obj', act: 'rea', cid: 'r', id: 't/b', rea: 'hk' })).erc, 404);

    // REST v2: reads and lists do not show them; a write keeps them; `tasks` is an unknown key.
    const got = await call(h.url, 'GET', '/v2/realm/hk/object/t%2Fa', { token: r.read });
    assert.equal(got.status, 200);
    assert.deepEqual(Object.keys(got.json as object).sort(), ['connectionStatus', 'data', 'id', 'label', 'location']);
    const listed = await call(h.url, 'GET', '/v2/realm/hk/object?fields=n', { token: r.read });
    assert.ok(!listed.text.includes('job/'), listed.text);
    assert.equal((await call(h.url, 'POST', '/v2/realm/hk/object/t%2Fa', { token: r.write, body: { label: 'A2' } })).status, 200);
    const rejected = await call(h.url, 'POST', '/v2/realm/hk/object/t%2Fa', { token: r.write, body: { tasks: ['x'] } });
    assert.equal(rejected.status, 400);
    assert.match(rejected.text, /unknown key \\"tasks\\"/);
    assert.deepEqual(await read('t/a'), { id: 't/a', lab: 'A2', loc: { gcs: '', lon: 0, lat: 0, acc: 0, spe: 0, hea: 0, alt: 0, alc: 0 }, dat: { n: 1 }, cst: 'dis', tds: ['job/3'] });

    // [] clears them: tds is then omitted.
    assert.equal((await client.one({ typ: 'obj', act: 'upd', cid: 'u', id: 't/a', rea: 'hk', tds: [] })).res, 'suc');
    assert.equal('tds' in (await read('t/a')), false);
    await client.close();
  });

  it('frame errors are one {res, err, erc} element without typ; the connection stays', async () => {
    const client = await connectWs(h.url, r.read);
    for (const [text, erc] of [['not json', 400], ['{"typ":"sys"}', 400], ['5', 400]] as const) {
      client.sendText(text);
      const reply = (await client.next()) as Json[];
      assert.equal(reply.length, 1);
      assert.deepEqual(Object.keys(reply[0]), ['res', 'err', 'erc']);
      assert.equal(reply[0].erc, erc);
    }
    client.sendText('[7, {"typ":"sys","act":"hbt","cid":"z"}]');
    const [bad, hbt] = (await client.next()) as Json[];
    assert.equal(bad.res, 'err');
    assert.equal(bad.erc, 400);
    assert.ok(!('typ' in bad));
    assert.equal(hbt.cid, 'z');
    await client.close();
  });

  it('the admin token names its realm; unknown realm is 404 `unknown realm <id>`; missing rea is 400', async () => {
    const client = await connectWs(h.url, adminToken);
    const [nowhere, missing, pin] = (await client.request([
      { typ: 'obj', act: 'lis', rea: 'no-such', cid: '1' },
      { typ: 'obj', act: 'lis', cid: '2' },
      { typ: 'sys', act: 'pin', cid: '3' },
    ]));
    assert.deepEqual(nowhere, { typ: 'obj', act: 'lis', cid: '1', res: 'err', err: 'unknown realm no-such', erc: 404 });
    assert.equal(missing.erc, 400);
    assert.equal(pin.res, 'suc');
    assert.ok(Math.abs(Date.parse(pin.dat.time as string) - Date.now()) < 10_000);
    await client.close();
  });

  it('obj lis: entries exactly {id, lab, cst}, dat with fie, atr conditions, sha rectangle/circle/polygon, west/north/east/south', async () => {
    const client = await connectWs(h.url, r.write);
    await client.request([
      { typ: 'obj', act: 'cre', cid: '1', id: 'a', rea: 'hk', lab: 'Object A Label', loc: { lon: 13.404954, lat: 52.520008 }, dat: { type: 'scooter', charge: 0.5 } },
      { typ: 'obj', act: 'cre', cid: '2', id: 'b', rea: 'hk', lab: 'Object B Label', loc: { lon: 13, lat: 51 }, dat: { type: 'car' } },
    ]);
    const all = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: {} });
    assert.deepEqual(all.dat.a, { id: 'a', lab: 'Object A Label', cst: 'dis' });
    assert.ok(!('nxt' in all));
    const fie = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { fie: ['charge'], atr: ['type="scooter"'] } });
    assert.deepEqual(fie.dat, { a: { id: 'a', lab: 'Object A Label', cst: 'dis', dat: { charge: 0.5 } } });
    const rect = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { sha: { x1: 13, x2: 14, y1: 52, y2: 53 } } });
    assert.deepEqual(Object.keys(rect.dat), ['a']);
    const wnes = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { sha: { west: 12.5, east: 13.5, north: 51.5, south: 50.5 } } });
    assert.deepEqual(Object.keys(wnes.dat), ['b']);
    const circle = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { sha: { cx: 13.404954, cy: 52.520008, r: 100 } } });
    assert.deepEqual(Object.keys(circle.dat), ['a']);
    const polygon = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { sha: { points: [{ x: 12, y: 50 }, { x: 14, y: 50 }, { x: 13, y: 51.5 }] } } });
    assert.deepEqual(Object.keys(polygon.dat), ['b']);
    const id = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { atr: ['$id="b"'] } });
    assert.deepEqual(Object.keys(id.dat), ['b']);
    const badAtr = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { atr: 'type=car' } });
    assert.equal(badAtr.erc, 400);
    const badSha = await client.one({ typ: 'obj', act: 'lis', rea: 'hk', dat: { sha: { qq: 1 } } });
    assert.equal(badSha.erc, 400);
    await client.close();
  });

  it('areas: cre, 409 on an existing id, rea echoes the v1 shape exactly, upd merges dat, lis is exactly {id, lab, sty}, del then 404', async () => {
    const client = await connectTcp(h.server.tcpPort, r.write);
    const rec = { x1: 13.3, y1: 52.4, x2: 13.5, y2: 52.6 };
    const pol = { points: [{ x: 51, y: 13 }, { x: 52, y: 14 }, { x: 54, y: 13.5 }] };
    const replies = (await client.request([
      { typ: 'are', act: 'cre', cid: '1', id: 'berlin', rea: 'hk', lab: 'Berlin', sty: 'rec', sha: rec, dat: { isCapital: true, country: 'Germany' } },
      { typ: 'are', act: 'cre', cid: '2', id: 'poly', rea: 'hk', sty: 'pol', sha: pol },
      { typ: 'are', act: 'cre', cid: '3', id: 'berlin', rea: 'hk', lab: 'Again', sty: 'cir', sha: { cx: 52.52, cy: 13.4, r: 500 } },
      { typ: 'are', act: 'rea', cid: '4', id: 'berlin', rea: 'hk' },
      { typ: 'are', act: 'rea', cid: '5', id: 'poly', rea: 'hk' },
    ]));
    assert.equal(replies[0].res, 'suc');
    assert.equal(replies[1].res, 'suc');
    assert.deepEqual(replies[2], { typ: 'are', act: 'cre', cid: '3', res: 'err', err: 'area with id berlin already exists', erc: 409 });
    assert.deepEqual(replies[3].dat, { id: 'berlin', lab: 'Berlin', sty: 'rec', sha: rec, dat: { isCapital: true, country: 'Germany' } });
    assert.deepEqual(replies[4].dat, { id: 'poly', sty: 'pol', sha: pol, dat: {} });
    const upd = await client.one({ typ: 'are', act: 'upd', id: 'berlin', rea: 'hk', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, dat: { charge: 0.5 } });
    assert.equal(upd.res, 'suc');
    const read = await client.one({ typ: 'are', act: 'rea', id: 'berlin', rea: 'hk' });
    assert.deepEqual(read.dat, { id: 'berlin', lab: 'Berlin', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 }, dat: { isCapital: true, country: 'Germany', charge: 0.5 } });
    const list = await client.one({ typ: 'are', act: 'lis', rea: 'hk' });
    assert.deepEqual(list.dat, { berlin: { id: 'berlin', lab: 'Berlin', sty: 'cir' }, poly: { id: 'poly', lab: '', sty: 'pol' } });
    assert.equal((await client.one({ typ: 'are', act: 'del', id: 'poly', rea: 'hk' })).res, 'suc');
    for (const act of ['rea', 'upd', 'del']) {
      const missing = await client.one({ typ: 'are', act, id: 'poly', rea: 'hk', sty: 'cir', sha: { cx: 1, cy: 2, r: 3 } });
      assert.equal(missing.err, 'unknown area poly', act);
      assert.equal(missing.erc, 404);
    }
    const mismatch = await client.one({ typ: 'are', act: 'cre', id: 'm', rea: 'hk', sty: 'rec', sha: { cx: 1, cy: 2, r: 3 } });
    assert.equal(mismatch.erc, 400);
    assert.match(mismatch.err as string, /x1/);
    const flipped = await client.one({ typ: 'are', act: 'cre', id: 'm', rea: 'hk', sty: 'rec', sha: { x1: 1, y1: 5, x2: 2, y2: 3 } });
    assert.equal(flipped.erc, 400);
    assert.match(flipped.err as string, /y1/);
    await client.close();
  });

  for (const path of ['/api/v1', '/v1/http']) {
    it(`HTTP ${path}: replies per cid, no reply for a successful set, writes read back at once, [] when nothing is due`, async () => {
      const set = await postV1(h.url, r.write, [{ typ: 'obj', act: 'set', cid: 's', id: 'h', rea: 'hk', loc: { lon: 1, lat: 2 }, dat: { n: 1 } }], {}, path);
      assert.equal(set.status, 200);
      assert.deepEqual(set.json, []);
      const read = await postV1(h.url, r.write, [{ typ: 'obj', act: 'rea', cid: 'r', id: 'h', rea: 'hk' }, { typ: 'obj', act: 'set', cid: 'bad', id: 'h', rea: 'hk', lab: 5 }], {}, path);
      assert.equal(read.status, 200);
      assert.equal(read.json.length, 2);
      assert.equal(read.json[0].dat.dat.n, 1);
      assert.equal(read.json[0].dat.loc.lat, 2);
      assert.equal(read.json[1].cid, 'bad');
      assert.equal(read.json[1].erc, 400);
      const badToken = await postV1(h.url, 'lcs_nope', [{ typ: 'obj', act: 'lis', rea: 'hk', cid: '1' }], {}, path);
      assert.equal(badToken.status, 401);
      assert.equal(badToken.json.res, 'err');
      assert.equal(badToken.json.erc, 401);
      assert.equal(typeof badToken.json.err, 'string');
      assert.equal(badToken.json.result, 'error');
      assert.equal(badToken.json.error.code, 'unauthorized');
      const notArray = await postV1(h.url, r.write, { typ: 'sys' }, {}, path);
      assert.equal(notArray.status, 400);
      assert.equal(notArray.json.erc, 400);
    });
  }

  it('HTTP: the bad-token 401 carries WWW-Authenticate', async () => {
    const res = await fetch(`${h.url}/api/v1`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer lcs_nope' }, body: '[]' });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /Bearer/);
  });
});
