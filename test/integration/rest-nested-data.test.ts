/**
 * Nested values in data over REST v2 (issue #30 part 4, decisions.md "REST v2, objects"):
 * single writes, bulk and areas store them unchanged; reads, lists, `fields`, history and
 * both search forms give them back; filters compare them false (`!=` true); a write beyond
 * the depth or size limit is a 400 that changes nothing in the store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { call, dumpStore, makeRealm, startHarness, type Harness } from '../support/harness.js';

/** Hivekit's getting-started tutorial writes this into an object's data. */
const ICON = { color: 'red', category: 'truck', filename: 'lorry.png' };

/** A value that makes data 8 levels deep (the data object is level 1, this array level 2): the deepest allowed. */
const DEEPEST = [{ b: [{ c: [{ d: ['Kellergeschoss'] }] }] }];

describe('REST v2: nested values in data', () => {
  let h: Harness;
  let tokens: { read: string; write: string; admin: string };
  const base = '/v2/realm/nested';

  before(async () => {
    h = await startHarness();
    tokens = await makeRealm(h.url, 'nested');
  });
  after(async () => {
    await h.stop();
  });

  const write = (method: string, path: string, body: unknown): ReturnType<typeof call> => call(h.url, method, base + path, { token: tokens.write, body });
  const get = (path: string): ReturnType<typeof call> => call(h.url, 'GET', base + path, { token: tokens.read });

  it('a single write and a bulk store nested data that reads back identical (key order included)', async () => {
    const data = JSON.parse(
      '{"$hkt_icon":{"color":"red","category":"truck","filename":"lorry.png"},"route":[[13.4,52.5],[13.5,52.6]],"meta":{"z":null,"a":{"__proto__":[],"":"e"}},"n":1}',
    ) as Record<string, unknown>;
    const put = await write('PUT', '/object/truck%2F1', { label: 'Truck 1', location: { longitude: 13.4, latitude: 52.5 }, data });
    assert.equal(put.status, 200, put.text);
    const read = await get('/object/truck%2F1');
    assert.equal(read.status, 200, read.text);
    assert.equal(JSON.stringify(read.json.data), JSON.stringify(data));
    assert.ok(read.text.includes('"meta":{"z":null,"a":{"__proto__":[],"":"e"}}'), read.text);

    const bulk = await write('POST', '/object', {
      objects: [
        { id: 'bulk-1', location: { longitude: 1, latitude: 1, time: '2026-01-01T00:00:00Z' }, data: { $hkt_icon: ICON, deep: DEEPEST } },
        { id: 'bulk-2', data: { list: [1, 'two', null, [true]] } },
        { id: 'bulk-1', location: { longitude: 1, latitude: 2, time: '2026-01-01T00:01:00Z' }, data: { list: [] } },
      ],
    });
    assert.equal(bulk.status, 200, bulk.text);
    assert.deepEqual(bulk.json, { result: 'success', count: 3 });
    assert.deepEqual((await get('/object/bulk-1')).json.data, { $hkt_icon: ICON, deep: DEEPEST, list: [] });
    assert.deepEqual((await get('/object/bulk-2')).json.data, { list: [1, 'two', null, [true]] });

    // A merge replaces a nested value whole and keeps the other keys.
    assert.equal((await write('POST', '/object/bulk-1', { data: { $hkt_icon: { color: 'blue' } } })).status, 200);
    assert.deepEqual((await get('/object/bulk-1')).json.data, { $hkt_icon: { color: 'blue' }, deep: DEEPEST, list: [] });

    // Both history paths give each fix with the data after its write.
    const history = await get('/history/bulk-1');
    assert.equal(history.status, 200, history.text);
    const entries = (history.json.locations ?? history.json) as { data?: unknown }[];
    assert.ok(JSON.stringify(entries).includes(JSON.stringify({ $hkt_icon: ICON, deep: DEEPEST, list: [] })), history.text);
  });

  it('lists: `fields` returns a nested value whole; filters compare it false and != true', async () => {
    const list = await get('/object?fields=$hkt_icon,missing&filter=id>bulk,id<bulk-3');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json['bulk-1'].data, { $hkt_icon: { color: 'blue' } });
    assert.deepEqual(list.json['bulk-2'].data, {});
    const ids = async (filter: string): Promise<string[]> => {
      const r = await get(`/object?filter=${encodeURIComponent(filter)}`);
      assert.equal(r.status, 200, r.text);
      return Object.keys(r.json as object).sort();
    };
    // bulk-1 and bulk-2 hold nested values under `list`; truck/1 has no `list` (so `list=null` holds for it).
    for (const filter of ['list=1', 'list="[]"', 'list>0', 'list<"~"', 'list>=""', 'list<=0', '$hkt_icon="blue"']) {
      assert.deepEqual(await ids(filter), [], filter);
    }
    assert.deepEqual(await ids('list=null'), ['truck/1']);
    assert.deepEqual(await ids('list!=1'), ['bulk-1', 'bulk-2', 'truck/1'], 'a missing key is != too');
    assert.deepEqual(await ids('list!=null'), ['bulk-1', 'bulk-2']);
  });

  it('search finds words of nested string leaves, in both forms', async () => {
    const byWords = await get('/search?q=lorry');
    assert.equal(byWords.status, 200, byWords.text);
    assert.deepEqual(Object.keys(byWords.json as object), ['truck/1']);
    assert.deepEqual(Object.keys((await get('/search?q=kellerg')).json as object), ['bulk-1']);
    const records = await get('/search?searchString=Keller');
    assert.equal(records.status, 200, records.text);
    // One record for the property: the top-level key, with the leaf the text was found in.
    assert.ok(records.text.includes('"field":"data","value":"Kellergeschoss","start":0,"end":6,"property":"deep"'), records.text);
    // Keys are not text.
    assert.deepEqual(Object.keys((await get('/search?q=category')).json as object), []);
  });

  it('beyond 8 levels, or more than 1000 keys and elements in all, the write is a 400 and the store is unchanged', async () => {
    const storeBefore = await dumpStore(h.server.store);
    const tooDeep = { a: [{ b: [{ c: [{ d: [[]] }] }] }] };
    const refused: [string, string, unknown, RegExp][] = [
      ['PUT', '/object/truck%2F1', { label: 'changed', data: { n: 2, tooDeep } }, /^data\.tooDeep\.a\[0\]\.b\[0\]\.c\[0\]\.d is nested too deeply/],
      ['PUT', '/object/new-one', { data: tooDeep }, /nested too deeply: data may hold at most 8 levels/],
      ['POST', '/object', { objects: [{ id: 'new-two', data: { ok: 1 } }, { id: 'truck/1', data: tooDeep }] }, /^objects\[1\]\.data\.a.* is nested too deeply/],
      ['POST', '/area/zone', { label: 'Z', shape: { cx: 1, cy: 1, r: 10 }, data: tooDeep }, /nested too deeply/],
      ['PUT', '/object/truck%2F1', { data: { many: Array.from({ length: 1000 }, (_, i) => i) } }, /^data holds more than 1000 keys and array elements in all/],
    ];
    for (const [method, path, body, message] of refused) {
      const r = await write(method, path, body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'invalid_data');
      assert.match(r.json.error.message as string, message);
    }
    assert.equal(await dumpStore(h.server.store), storeBefore);
  });

  it('areas store nested data unchanged; an update replaces a nested value whole', async () => {
    const created = await write('POST', '/area/depot', { label: 'Depot', shape: { cx: 13.4, cy: 52.5, r: 500 }, data: { style: { fill: '#f00', dash: [4, 2] }, k: 1 } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual((await get('/area/depot')).json.data, { style: { fill: '#f00', dash: [4, 2] }, k: 1 });
    assert.equal((await write('PATCH', '/area/depot', { data: { style: { fill: '#0f0' } } })).status, 200);
    assert.deepEqual((await get('/area/depot')).json.data, { style: { fill: '#0f0' }, k: 1 });
  });
});
